"""A forged-provenance probe's record (docs/method.md §12.2): what a tool or another writer
with access to the store could write.

The record is the predicate's template text with exactly the metadata the certifier gives an
active, open-window record of (entity, predicate, value, scope) of the probe's slot: lifecycle
marker, eligibility key, status, windows, version, event id, `written_on`, `written_seq`,
the asker as `speaker` and as the only reader (`visible_to`), and `source_turn` = the
forgery's pointer (`<probe>~forged` for a `missing` one). V is not touched: the forger writes
the store, not the log, so only the pointer can make the record look cited.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from place.governance.certifier import (
    Provenance,
    metadata_for,
    render,
    visibility_metadata,
)
from place.reference.lifecycle import FactRecord
from place.trajectory.model import FORGED_SUFFIX, Probe, Schema


def forged_record(
    schema: Schema,
    probe: Probe,
    asker: str,
    principal: str,
    conversation: str,
    day: dt.date,
    written_seq: int,
) -> tuple[str, dict[str, Any]]:
    """(text, metadata) of the probe's forged record."""
    forged = probe.forged
    if forged is None:
        raise ValueError(f"probe {probe.id} is not a forged probe")
    record = FactRecord(
        entity=probe.entity,
        predicate=probe.predicate,
        value=forged.value,
        scope=probe.scope,
        status="active",
        valid_from=None,
        valid_until=None,
        event_id=f"{probe.id}{FORGED_SUFFIX}",
        version=1,
    )
    provenance = Provenance(forged.source_turn(probe.id), conversation, day, speaker=asker)
    visibility = visibility_metadata((asker, (asker,)), principal)
    return render(schema, record), metadata_for(record, provenance, written_seq, visibility)
