"""`extract`: Mem0-style extracted facts, made deterministic (docs/method.md §8.7).

The AOEP-v0 pilot's "Mem0-style (extracted facts)" system as an ideal extractor with no
governance. For each message the Native producer passes for a step that Mem0's extraction
reads (the user's own messages and forwarded tool output alike, in order; assistant
replies are not read, as Mem0's extraction prompt reads only the user's messages):

- a message that the lexicon reads as a request to forget a slot
  (`Lexicon.forget_requests`) becomes Mem0's DELETE of each of the slot's records
  (`WritableStore.delete`: the point goes, Mem0's history keeps its text);
- β reads the facts the message states, in the order the text states them. A fact the
  store already holds is Mem0's NONE. A fact of a `one` slot that already has a record
  becomes Mem0's UPDATE of that record (`WritableStore.update_text`: the text rewritten to
  the fact's sentence, the old text kept in Mem0's history); any other fact is an ADD of one
  plain record (`add_record`, no lifecycle metadata).

No trust (a forwarded value is written like the user's own), no validity windows, no ledger,
no LLM. The store is the writer's whole state: a record's slot is what β reads from it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from place.agent.native import dialogue_messages, written_turns
from place.governance.certifier import render
from place.lexicon import Lexicon
from place.producers.registry import (
    ProducerContext,
    RecordCounter,
    StepOutcome,
    register_producer,
    speakers,
    written,
    written_order,
)
from place.producers.summary import plain_summary
from place.readback import Readback, is_summary
from place.reference.lifecycle import FactRecord
from place.trajectory.model import (
    GLOBAL_SCOPE,
    Compaction,
    Conversation,
    Fact,
    Schema,
    Slot,
    Turn,
)

if TYPE_CHECKING:
    from place.memory.item import WritableStore


@dataclass(frozen=True)
class Held:
    """A record of the store as the writer knows it during a step."""

    id: str
    text: str
    metadata: Mapping[str, Any]


def candidate_texts(schema: Schema, fact: Fact) -> Iterable[str]:
    """Sentences for one fact, in order of preference: the predicate's template rendered as
    the certifier renders it, then `<Entity>'s <keyword> (<scope>): <value>` for each of the
    predicate's keywords (the scope named only when β would not infer it)."""
    as_record = FactRecord(
        *fact, status="active", valid_from=None, valid_until=None, event_id="", version=0
    )
    yield render(schema, as_record)
    predicate = schema.predicates[fact.predicate]
    entity = schema.entities[fact.entity]
    implied = predicate.default_scope or GLOBAL_SCOPE
    scope = schema.scopes.get(fact.scope)
    where = "" if fact.scope == implied or scope is None else f" ({scope.aliases[0]})"
    for keyword in predicate.keywords:
        yield f"{entity.name}'s {keyword}{where}: {fact.value}"


def record_text(schema: Schema, lexicon: Lexicon, fact: Fact) -> tuple[str, bool]:
    """The text of the record that holds `fact`: the first candidate β reads back as exactly
    this one fact; (text, True). When none does, the template; (text, False)."""
    texts = list(candidate_texts(schema, fact))
    for text in texts:
        if lexicon.read(text) == {fact}:
            return text, True
    return texts[0], False


def stated_facts(lexicon: Lexicon, text: str) -> list[Fact]:
    """β's facts of `text` in the order the text states them (the first current occurrence
    of each value; ties by entity and scope)."""
    facts = lexicon.read(text)
    first: dict[tuple[str, str], int] = {}
    for predicate in {f.predicate for f in facts}:
        for match in lexicon.matches(text, predicate):
            if match.asserted:
                first.setdefault((predicate, match.value), match.start)
    return sorted(
        facts, key=lambda f: (first.get((f.predicate, f.value), len(text)), f.entity, f.scope)
    )


class ExtractWriter:
    def __init__(self, store: WritableStore, schema: Schema, readback: Readback) -> None:
        self.store = store
        self.schema = schema
        self.readback = readback
        self.lexicon = readback.lexicon

    def write(self, turns: Sequence[Turn], conv: Conversation) -> StepOutcome:
        messages = dialogue_messages(turns)
        if messages is None:
            return StepOutcome()
        said_by = written_turns(turns)
        said = speakers(said_by, self.store.principal)
        # Summaries are never revisited (docs/method.md §11): a forget leaves them as they are.
        records = {
            p.id: Held(p.id, p.text, p.metadata)
            for p in self.store.scan().points
            if not is_summary(p.metadata)
        }
        counter = RecordCounter(self.store)
        out = StepOutcome()
        for message, speaker, turn in zip(messages, said, said_by, strict=True):
            if message["role"] != "user":
                continue
            text = message["content"]
            forgotten = self.lexicon.forget_requests(text)
            for slot in sorted(forgotten):
                for record in self._of_slot(records.values(), slot, conv.date):
                    previous = self.store.delete(record.id)
                    del records[record.id]
                    out.operations.append({"id": record.id, "event": "DELETE", "memory": previous})
            for fact in stated_facts(self.lexicon, text):
                slot = Slot(fact.entity, fact.predicate, fact.scope)
                if slot in forgotten:  # the message asks to forget it, not to keep it
                    continue
                held = self._of_slot(records.values(), slot, conv.date)
                if any(fact in self._facts(r, conv.date) for r in held):
                    continue  # Mem0's NONE
                new_text, exact = record_text(self.schema, self.lexicon, fact)
                if not exact:
                    out.failures.append(
                        f"extract: no record text reads back as exactly {tuple(fact)}; "
                        f"wrote {new_text!r}"
                    )
                meta = written(conv.date, counter.take(), speaker, (turn.id,))
                if self.schema.predicates[fact.predicate].cardinality == "one" and held:
                    target = held[-1]  # the newest record of the slot
                    previous = self.store.update_text(target.id, new_text, meta)
                    records[target.id] = Held(target.id, new_text, meta)
                    out.operations.append(
                        {
                            "id": target.id,
                            "event": "UPDATE",
                            "memory": new_text,
                            "previous": previous,
                        }
                    )
                else:
                    memory_id = self.store.add_record(new_text, meta)
                    records[memory_id] = Held(memory_id, new_text, meta)
                    out.operations.append({"id": memory_id, "event": "ADD", "memory": new_text})
        return out

    def _facts(self, record: Held, day: dt.date) -> set[Fact]:
        return {f.fact for f, _ in self.readback.held_facts(record, day)}

    def _of_slot(self, records: Iterable[Held], slot: Slot, day: dt.date) -> list[Held]:
        """The records holding a fact of `slot`, oldest first."""
        held = [
            r
            for r in records
            if any(Slot(f.entity, f.predicate, f.scope) == slot for f in self._facts(r, day))
        ]
        return sorted(held, key=lambda r: written_order(r.id, r.metadata))

    def fork(self, store: WritableStore) -> ExtractWriter:
        return ExtractWriter(store, self.schema, self.readback)

    def resume(self, done: Sequence[tuple[Sequence[Turn], Conversation]]) -> None:
        """All state is in the store."""

    def compact(self, entry: Compaction, day: dt.date) -> StepOutcome:
        return plain_summary(self.store, self.readback, entry, day)


@register_producer("extract", display="Extract")
def extract(store: WritableStore, context: ProducerContext[None]) -> ExtractWriter:
    return ExtractWriter(store, context.schema, context.readback)
