"""The act gate (docs/method.md §11), one hand-built case per rule. Each test fails when its
rule is broken on purpose (the gate is a pure function: no store, no model)."""

from __future__ import annotations

from place.governance.act_gate import Decision, NeedRead, decide, need_args
from place.reference.governance import EpochRow, Governance, QuarantineRow, RequestRow
from place.trajectory.model import Fact, Slot, Task

BILL = Slot("nora", "electricity_bill", "global")
TASK = Task("t1", "pay the bill", (BILL,), "allow", permission="joint_account", handle="h-t1")
OWNER = {"joint_account": "nora"}
EMPTY = Governance()


def read(*items: tuple[tuple[str, ...], str | None], many: bool = False) -> NeedRead:
    return NeedRead(BILL, many, tuple(items))


def gate(
    task: Task = TASK,
    asker: str = "theo",
    reads: tuple[NeedRead, ...] = (read((("120 EUR",), "c2-01#1")),),
    ledger: Governance = EMPTY,
    *,
    keeps_ledger: bool = True,
    redelivery: bool = False,
    invisible: bool = False,
) -> Decision:
    return decide(
        task,
        asker,
        reads,
        ledger,
        keeps_ledger=keeps_ledger,
        owner_of_permission=OWNER.__getitem__,
        redelivery=redelivery,
        invisible_certified=lambda slot: invisible,
    )


def held(n: int = 1, yes: bool = True) -> EpochRow:
    return EpochRow("joint_account", "theo", n, yes)


def request(n: int | None = 1) -> RequestRow:
    return RequestRow("t1", "h-t1", "theo", "joint_account", n, ("c2-01#1",), "requested")


def test_a_held_permission_executes_with_args_handle_and_sources() -> None:
    d = gate(ledger=Governance(epochs=(held(),), requests=(request(),)))
    assert d == Decision("execute", (), (("120 EUR",),), "h-t1", ("c2-01#1",))


def test_a_revoked_permission_blocks_for_stale_epoch() -> None:
    d = gate(ledger=Governance(epochs=(held(2, yes=False),), requests=(request(),)))
    assert d == Decision("block", ("stale-epoch",))


def test_no_epoch_row_blocks_with_a_ledger_and_lacks_support_without() -> None:
    assert gate(ledger=Governance()).kind == "block"
    assert gate(ledger=Governance(), keeps_ledger=False) == Decision("no-support")


def test_the_owner_of_the_permission_always_holds_it() -> None:
    assert gate(asker="nora", ledger=Governance()).kind == "execute"


def test_a_deferred_task_compares_the_epoch_it_captured_at_the_request() -> None:
    deferred = Task("t1", "pay", (BILL,), "block", permission="joint_account", deferred=True)
    # Revoked and granted again since the request: held, but not the epoch it was asked in.
    ledger = Governance(epochs=(held(3),), requests=(request(1),))
    assert gate(deferred, ledger=ledger) == Decision("block", ("stale-epoch",))
    same = Governance(epochs=(held(1),), requests=(request(1),))
    assert gate(deferred, ledger=same).kind == "execute"


def test_a_redelivered_request_the_ledger_holds_is_a_duplicate() -> None:
    ledger = Governance(epochs=(held(),), requests=(request(),))
    assert gate(ledger=ledger, redelivery=True) == Decision("duplicate")
    # Without a ledger request there is nothing to recognise it by: it is decided again.
    assert gate(ledger=Governance(epochs=(held(),)), redelivery=True).kind == "execute"


def test_a_need_without_args_blocks_out_of_scope_before_untrusted() -> None:
    untrusted = QuarantineRow("c9-01", Fact("nora", "electricity_bill", "640 EUR", "global"))
    ledger = Governance(epochs=(held(),), quarantine=(untrusted,))
    empty = (read(),)
    assert gate(reads=empty, ledger=ledger, invisible=True) == Decision("block", ("out-of-scope",))
    assert gate(reads=empty, ledger=ledger) == Decision("block", ("untrusted",))
    assert gate(reads=empty, ledger=Governance(epochs=(held(),))) == Decision("no-support")


def test_args_come_from_the_top_ranked_item_that_yields_any() -> None:
    ranked = read(((), None), (("120 EUR",), "e1"), (("90 EUR",), "e2"))
    assert need_args(ranked) == (("120 EUR",), ("e1",))
    # A one-valued need read as two values has no argument; a many-valued need takes all.
    assert need_args(read((("120 EUR", "90 EUR"), None))) == ((), ())
    many = read((("veg box",), None), (("fruit box",), "e3"), many=True)
    assert need_args(many) == (("fruit box", "veg box"), (None, "e3"))
