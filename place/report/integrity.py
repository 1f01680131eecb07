"""Do a run directory's records belong to one run? Checked before anything is computed.

`place report` recomputes everything from `records/` and the manifest header. Records that
another run appended (another trajectory, another design) would otherwise be averaged in
silently, or fail deep inside a computation. Every record must name a condition (or
producer) of the manifest's design and a conversation of its trajectory, and no unit of the
experiment may be recorded twice.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from place.design import Design
from place.errors import PlaceError
from place.records import RECORD_FILES, RunRecords


class NotOneRun(PlaceError):
    """The records of a run directory do not belong to the one run its manifest describes."""


def _file(kind: str) -> str:
    return f"records/{RECORD_FILES[kind][0]}"


def records_problems(records: RunRecords, header: Mapping[str, Any]) -> list[str]:
    """One line per record that does not fit the manifest's run (at most a few per kind),
    each naming the file, the record's line and what is wrong."""
    design = Design.from_json(header.get("design"))
    conditions, producers = set(design.names), set(design.producers)
    conversations = set(header.get("conversation_ids") or [])
    problems: list[str] = []

    def check(
        kind: str,
        items: Sequence[Any],
        member: Callable[[Any], str],
        allowed: set[str],
        what: str,
        key: Callable[[Any], Hashable | None],
    ) -> None:
        seen: dict[Hashable, int] = {}
        found: list[str] = []
        for line, r in enumerate(items, start=1):
            name = member(r)
            if name not in allowed:
                found.append(
                    f"{_file(kind)}: line {line}: {what} {name!r} is not in the run's design "
                    f"({', '.join(sorted(allowed))})"
                )
            conv = getattr(r, "conversation", None)
            if conversations and conv is not None and conv not in conversations:
                found.append(
                    f"{_file(kind)}: line {line}: conversation {conv!r} is not one of the "
                    f"trajectory's ({', '.join(header['conversation_ids'])})"
                )
            k = key(r)
            if k is None:
                continue
            if k in seen:
                found.append(
                    f"{_file(kind)}: line {line}: records the same {kind} as line {seen[k]} "
                    f"({', '.join(str(x) for x in _flat(k))})"
                )
            seen.setdefault(k, line)
        problems.extend(
            found[:3] + ([f"{_file(kind)}: ... {len(found) - 3} more"] if len(found) > 3 else [])
        )

    check(
        "checkpoint",
        records.checkpoints,
        lambda r: r.condition,
        conditions,
        "condition",
        lambda r: (r.turn, r.checkpoint, r.world, r.query, r.condition),
    )
    check(
        "query",
        records.queries,
        lambda r: r.condition,
        conditions,
        "condition",
        lambda r: (r.query, r.condition, r.world, r.mode),
    )
    check(
        "probe",
        records.probes,
        lambda r: r.condition,
        conditions,
        "condition",
        lambda r: (r.probe, r.condition),
    )
    check(
        "step",
        records.steps,
        lambda r: r.producer,
        producers,
        "producer",
        # World b's steps restart at 1 for every causal pair and name its query (layout 5).
        lambda r: (r.step, r.producer, r.world, r.query),
    )
    check(
        "forget",
        records.forgets,
        lambda r: r.producer,
        producers,
        "producer",
        lambda r: (r.event, r.producer, r.check),
    )
    check(
        "compaction",
        records.compactions,
        lambda r: r.producer,
        producers,
        "producer",
        lambda r: (r.after, r.entity, r.scope, r.producer),
    )
    check(
        "audit",
        records.audits,
        lambda r: r.producer,
        producers,
        "producer",
        lambda r: r.producer,
    )
    return problems


def _flat(key: Hashable) -> Iterable[Any]:
    return key if isinstance(key, tuple) else (key,)


def check_one_run(run_dir: Path, records: RunRecords, header: Mapping[str, Any]) -> None:
    """Refuse (`NotOneRun`) records that do not belong to the run the manifest describes."""
    problems = records_problems(records, header)
    if problems:
        raise NotOneRun(
            "\n".join(
                [
                    f"{run_dir}: its records do not belong to one run (the manifest's: "
                    f"trajectory {(header.get('trajectory') or {}).get('id')!r}, design "
                    f"{Design.from_json(header.get('design')).name!r}); nothing was computed:",
                    *(f"  {p}" for p in problems),
                ]
            )
        )
