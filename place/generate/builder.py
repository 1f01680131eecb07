"""Build one `place-trajectory/1` from a seed: the pipeline and its entry points.

How a trajectory is built (docs/generator.md has the long version):

1. **World.** From `random.Random(f"{seed}:{design}")`: the principal and 2-5 other people
   (names and relations from the library), 2-3 trips (cities) plus `work` and `home`, a
   currency, the conversation dates, the predicates of the schema and the closed value
   domain of each.
2. **Episodes.** Every query belongs to one episode of its family: the events that set up
   its slot, then the query. Each episode owns its slots (entity, predicate, scope) alone,
   and a query's scope only ever admits facts of its own slot (trip, work, home and place
   predicates never hold `global` facts), so its gold follows from the episode alone: the
   builder writes the gold it intends, never one computed by the reference replay.
3. **Background.** Extra event turns on fresh slots (facts, changes, windows, many-valued
   adds and removals) bring the post-update checkpoints to the design's exact count.
4. **Dialogue.** A greeting opens each conversation; the episodes, background stories,
   chatter and spam are interleaved at random (each keeps its own order); assistant
   acknowledgements bring the turn count into the design's range.
5. **Pairs and probes.** Every query gets a causal pair of one of five kinds whose inserted
   turns cannot change its authorized support (no events; events for another person; events
   in another non-global scope; a tool turn). Probes sit on the episode's own turns with
   the gold the episode implies; a share of them carry conflicting evidence.
6. **Governance** (design `small` only). `governance.govern` adds one story that uses
   every governance construct of FORMAT.md, on a fresh slot, drawn from a generator of its
   own (docs/generator.md, "The governance story of `small`").
7. **Forgeries** (design `small` only). `forgery.forge` adds four forged-provenance probes,
   one of each kind, cloned from base probes, drawn from a generator of its own
   (docs/generator.md, "The forged probes of `small`").
8. **Filler.** `--filler N` inserts N chatter turns per conversation drawn with a separate
   generator, so everything else (every count, every gold) is unchanged.
9. **Check.** The text is loaded with `place.reference.validate.load_trajectory` (structure
   plus the semantic validation of `place validate`), replayed with
   `place.reference.replay.replay` and compared with the intended golds, and checked for the
   design counts and the lexicon self-check. Any failure is a `PlaceError` naming the seed and
   the unmet constraint; only a trajectory that passes is written (atomically).

The stages live in modules of their own: `design` (the designs, request checks), `world`
(step 1), `turns` (every turn and its text), `episodes` (step 2), `assembly` (steps 3-5 and
8), `governance` (step 6), `forgery` (step 7), `emission` (the document, YAML and JSON) and
`verification` (step 9). The domain library and the templates are data,
`place/data/generator/*.yaml`, loaded by `library`, `phrasing` and `governance_text`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from place import __version__
from place.atomic import write_text
from place.errors import PlaceError
from place.generate.assembly import add_filler, build
from place.generate.design import SUFFIXES, check_request
from place.generate.emission import document, to_json, to_yaml
from place.generate.forgery import ForgedProbe, forge
from place.generate.governance import govern
from place.generate.turns import Writer
from place.generate.verification import load, verify
from place.trajectory.model import Trajectory


@dataclass
class Generated:
    """A checked trajectory: its text as written, the loaded model and the file suffix."""

    text: str
    trajectory: Trajectory
    suffix: str


def generate(seed: int, design: str = "paper", filler: int = 0, suffix: str = ".yaml") -> Generated:
    """Build, load, replay and check one trajectory; raise PlaceError naming the seed and the
    unmet constraint otherwise. Nothing is written."""
    check_request(seed, design, filler)
    if suffix not in SUFFIXES:
        raise PlaceError(f"the output must end in {', '.join(SUFFIXES)}; got {suffix!r}")
    w = Writer(seed, design)
    conversations, episodes, probes = build(w)
    governed = None
    if w.d.governance:
        conversations, governed = govern(w, conversations)
    forged: list[ForgedProbe] = []
    if w.d.forged:
        # The forgeries are drawn on the file so far as the loader reads it (S* is the
        # replay's), before any filler, so that --filler leaves them unchanged.
        base = load(to_json(document(w, conversations, probes, 0, governed)), ".json", seed, design)
        forged = forge(w, base)
    filler_rng = random.Random(f"{seed}:{design}:filler:{filler}")
    conversations = add_filler(w, conversations, filler, filler_rng)
    doc = document(w, conversations, probes, filler, governed, forged)
    header = [
        f"Generated by `place generate --seed {seed} --design {design} --filler {filler}` "
        f"(place {__version__}).",
        "Deterministic: the same seed, design, filler and package version give this exact file.",
        "Format: trajectories/FORMAT.md; how it is built: docs/generator.md.",
    ]
    text = to_json(doc) if suffix == ".json" else to_yaml(doc, header)
    traj = load(text, suffix, seed, design)
    verify(traj, w, episodes, probes, filler)
    return Generated(text, traj, suffix)


def write(seed: int, out: str | Path, design: str = "paper", filler: int = 0) -> Generated:
    """Generate and, only once everything checks out, write `out` atomically."""
    check_request(seed, design, filler)
    path = Path(out)
    result = generate(seed, design, filler, suffix=path.suffix.lower())
    write_text(path, result.text)
    return result
