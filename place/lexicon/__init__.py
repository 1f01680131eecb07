"""The trajectory lexicon: β over plain text, typed surface forms, historical cues and Ω."""

from place.lexicon.cues import CUES, Cue
from place.lexicon.outcome import ABSTAIN, abstains, f1, gold_outcome, outcome
from place.lexicon.readback import Lexicon, ValueMatch
from place.lexicon.surface import is_canonical, value_pattern

__all__ = [
    "ABSTAIN",
    "CUES",
    "Cue",
    "Lexicon",
    "ValueMatch",
    "abstains",
    "f1",
    "gold_outcome",
    "is_canonical",
    "outcome",
    "value_pattern",
]
