"""The ledger's row format and β_L without a store (docs/method.md §11, "Ledger"): every Γ
row survives its trip through ledger metadata and JSON; event rows never hold a value."""

from __future__ import annotations

import datetime as dt
import json

from builders import ev, gev

from place.governance.ledger import (
    EVENT_TRUST,
    LEDGER,
    GammaRow,
    Written,
    event_fields,
    event_subject,
    gamma_fields,
    gamma_key,
    gamma_row,
    gamma_rows,
    governance_of,
    ledger_metadata,
    read_governance,
)
from place.memory.scan import StoreScan
from place.memory.tables import SideRow
from place.reference.governance import (
    ConflictRow,
    DeletionRow,
    EpochRow,
    Governance,
    QuarantineRow,
    RequestRow,
    ShareRow,
)
from place.trajectory.model import Fact, Slot

HOTEL = Slot("alex", "hotel", "global")
WRITTEN = Written("u1#1", "u1", "c1", dt.date(2026, 3, 1), EVENT_TRUST)

ROWS: list[GammaRow] = [
    EpochRow("joint", "dana", 3, True),
    ShareRow(HOTEL, "dana"),
    ConflictRow("u3#1", HOTEL, "dana", "Lumen", ("Avenida",), "pending"),
    RequestRow("t1", "h-t1", "dana", "joint", 1, ("u1#1", "u2#1"), "requested"),
    RequestRow("t2", "h-t2", "alex", None, None, (), "reverted"),
    QuarantineRow("t9", Fact("alex", "hotel", "Marriott", "global")),
    DeletionRow("u4#1", HOTEL),
]


def stored(row: GammaRow, version: int = 1) -> dict:
    """A Γ row as the side table gives it back: ledger metadata through JSON."""
    kind, fields = gamma_fields(row)
    return json.loads(json.dumps(ledger_metadata(kind, fields, version, WRITTEN)))


def test_every_gamma_row_round_trips_through_ledger_metadata() -> None:
    for row in ROWS:
        meta = stored(row)
        assert gamma_row(meta) == row
        assert meta["place_ledger"] == "1"
        assert {"kind", "version", "event_id", "source_turn", "recorded_at", "trust"} <= set(meta)
    assert len({gamma_key(row) for row in ROWS}) == len(ROWS)


def test_beta_L_sorts_epochs_and_shares_and_keeps_the_order_of_the_rest() -> None:
    later = [
        EpochRow("joint", "ivy", 1, False),
        ShareRow(Slot("alex", "diet", "global"), "ivy"),
        DeletionRow("u0#1", Slot("alex", "city", "global")),
    ]
    rows = [stored(r) for r in [*ROWS, *later]]
    event = ledger_metadata(
        "event", event_fields(ev("u1", 1, "assert", "alex", "hotel", "X"), "alex"), 1, WRITTEN
    )
    stray = {"kind": "epoch", "permission": "joint", "principal": "eve", "n": 1, "held": True}
    read = governance_of([event, *rows, stray])  # event rows and unmarked rows read as nothing
    assert read.epochs == (EpochRow("joint", "dana", 3, True), EpochRow("joint", "ivy", 1, False))
    assert read.shares == (ShareRow(Slot("alex", "diet", "global"), "ivy"), ShareRow(HOTEL, "dana"))
    assert read.deletions == (DeletionRow("u4#1", HOTEL), later[2])
    assert [r.task for r in read.requests] == ["t1", "t2"]
    assert gamma_rows(read)[0] == read.epochs[0]


def test_event_rows_hold_no_value() -> None:
    for event in (
        ev("u1", 1, "assert", "alex", "hotel", "Avenida"),
        ev("u2", 1, "correct", "alex", "hotel", "Lumen"),
        ev("u3", 1, "retract", "alex", "hotel", "Lumen"),
        ev("u4", 1, "forget", "alex", "hotel"),
    ):
        fields = event_fields(event, "alex")
        assert "value" not in fields
        assert not {"Avenida", "Lumen"} & set(map(str, fields.values()))
        assert event_subject(event) == ("slot", "alex", "hotel", "global")
    grant = gev("u5", 1, "grant", permission="joint", to="dana")
    assert event_fields(grant, "alex") == {
        "op": "grant",
        "speaker": "alex",
        "permission": "joint",
        "principal": "dana",
    }
    assert event_subject(gev("u6", 1, "rollback", task="t1")) == ("task", "t1")


def test_a_store_without_ledger_rows_reads_as_empty_governance() -> None:
    assert read_governance(StoreScan()) == Governance()
    other = StoreScan(tables=(SideRow("evidence", "evidence-1", stored(ROWS[0])),))
    assert read_governance(other) == Governance()  # only the ledger table is L
    ledger = StoreScan(tables=(SideRow(LEDGER, "ledger-1", stored(ROWS[0])),))
    assert read_governance(ledger).epochs == (ROWS[0],)
