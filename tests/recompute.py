"""An independent recomputation of metrics.json from a run directory, written from
docs/records.md alone.

It imports nothing from `place` (only json and numpy), so it checks the package's metric
code against the documented definitions rather than against itself.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

PAPER_DESIGN = {
    "name": "paper",
    "producers": ["native", "css"],
    "policies": ["native", "qasc"],
    "conditions": [
        ["Native", "native", "native"],
        ["CSS", "css", "native"],
        ["QASC", "native", "qasc"],
        ["PLACE", "css", "qasc"],
    ],
}
ABSTAIN = "ABSTAIN"
RECORDS_SCHEMAS = ("place-records/6", "place-records/7")
"""/7 adds the distractor fields (method §16); a /6 record has none."""
METRICS_SCHEMA = "place-metrics/6"


def prior(r: dict[str, Any], forgets: list[dict[str, Any]]) -> list[str]:
    """The residue strings of forget record `r` that precede the forget (method §16): at the
    end, a string counts only if the same event and producer's check right after the forget
    found it too, or a summary holds it."""
    if r["check"] == "after":
        return list(r["residue"])
    after = [
        set(f["residue"])
        for f in forgets
        if f["check"] == "after" and f["event"] == r["event"] and f["producer"] == r["producer"]
    ]
    seen = after[0] if after else set()
    where = list(r.get("where") or [])
    return [
        t
        for i, t in enumerate(r["residue"])
        if t in seen or (i < len(where) and "summary" in where[i].split("+"))
    ]


def load(run_dir: Path, name: str) -> list[dict[str, Any]]:
    path = run_dir / "records" / name
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    for row in rows:
        if row.get("schema") not in RECORDS_SCHEMAS:
            raise ValueError(
                f"{path}: record layout {row.get('schema')!r}, this reader reads {RECORDS_SCHEMAS}"
            )
    return rows


def facts(rows: list[list[Any]] | None) -> frozenset[tuple[Any, ...]]:
    return frozenset(tuple(r[:4]) for r in rows or [])


def f1(p: frozenset | set, g: frozenset | set) -> float:
    if not p and not g:
        return 1.0
    both = len(set(p) & set(g))
    return 0.0 if both == 0 else 2 * both / (len(p) + len(g))


def gold_star(gold: list[str]) -> frozenset[str]:
    return frozenset(gold) or frozenset({ABSTAIN})


def mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def rnd(x: float | None) -> float | None:
    return None if x is None or x != x else round(float(x), 6)


def readable(exposed: list[dict[str, Any]]) -> frozenset[tuple[str, ...]]:
    return frozenset(
        (f["entity"], f["predicate"], f["value"], f["scope"])
        for item in exposed
        for f in item["facts"]
        if f["readable"]
    )


def ineligible(exposed: list[dict[str, Any]]) -> bool:
    return any(item["ineligible"] for item in exposed)


def joint(q: dict[str, Any]) -> bool:
    return (
        q["state_correct"]
        and facts(q["authorized"]) <= readable(q["exposed"])
        and not ineligible(q["exposed"])
        and frozenset(q["outcome"]) == gold_star(q["gold"])
    )


def pairs(queries: list[dict[str, Any]], condition: str) -> dict[str, bool | None]:
    worlds: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for q in queries:
        if q["condition"] == condition and q["mode"] == "primary":
            worlds[q["query"]][q["world"]] = q
    out: dict[str, bool | None] = {}
    for qid, pair in worlds.items():
        if "a" not in pair or "b" not in pair:
            continue
        a, b = pair["a"], pair["b"]
        counted = (
            a["authorized_b"] is not None
            and facts(a["authorized_a"]) == facts(a["authorized_b"])
            and facts(a["evaluated"]) == facts(a["authorized_a"])
            and facts(b["evaluated"]) == facts(a["authorized_b"])
        )
        out[qid] = (set(a["outcome"]) != set(b["outcome"])) if counted else None
    return out


def condition_figures(
    records: dict[str, list[dict[str, Any]]], c: str, producer_of: dict[str, str]
) -> dict[str, Any]:
    checkpoints, queries = records["checkpoints"], records["queries"]
    probes, forgets = records["probes"], records["forgets"]
    state = mean(
        [
            f1(facts(x["observed"]), facts(x["reference"]))
            for x in checkpoints
            if x["condition"] == c and x["checkpoint"] == "post-update" and x["world"] == "a"
        ]
    )
    primary = [
        q for q in queries if q["condition"] == c and q["mode"] == "primary" and q["world"] == "a"
    ]
    loop = [q for q in queries if q["condition"] == c and q["mode"] == "closed_loop"]
    counted = [v for v in pairs(queries, c).values() if v is not None]
    mine = [p for p in probes if p["condition"] == c and p["forged"] is None]
    needing = [p for p in mine if p["authorized"]]
    conflict = [p for p in mine if p["injected"] is not None and p["conflict_value"] is not None]
    residue: dict[str, bool] = {}
    for r in forgets:
        if r["producer"] == producer_of[c]:
            residue[r["event"]] = residue.get(r["event"], False) or bool(prior(r, forgets))
    return {
        "state_correctness": rnd(state),
        "leakage_rate": rnd(mean([float(v) for v in counted])),
        "leakage_n": len(counted),
        "answer_correctness": rnd(
            mean([f1(frozenset(q["outcome"]), gold_star(q["gold"])) for q in primary])
        ),
        "joint_success": rnd(mean([float(joint(q)) for q in primary])),
        "needed_support": rnd(
            mean(
                [float(facts(p["authorized"]) <= readable(p["clean"]["exposed"])) for p in needing]
            )
        ),
        "exposure_rate": rnd(mean([float(ineligible(p["clean"]["exposed"])) for p in mine])),
        "conflict_harm": rnd(
            mean(
                [
                    float(
                        frozenset(p["injected"]["outcome"] or []) != gold_star(p["gold"])
                        and p["conflict_value"] in (p["injected"]["outcome"] or [])
                    )
                    for p in conflict
                ]
            )
        ),
        "deletion_residue": rnd(mean([float(v) for v in residue.values()])),
        **citation_figures(records, c, producer_of),
        "reads": read_figures(records, c, producer_of),
        "closed_loop": {
            "state_correctness": rnd(state) if loop else None,  # None: the loop was not run
            "exposure_rate": rnd(mean([float(ineligible(q["exposed"])) for q in loop])),
            "joint_success": rnd(mean([float(joint(q)) for q in loop])),
        },
    }


def read_figures(
    records: dict[str, list[dict[str, Any]]], c: str, producer_of: dict[str, str]
) -> dict[str, Any]:
    """method §16.3 from the raw records: over clean probe reads (forged aside) and world-a
    primary query reads, what the exposed items show by β whatever E says."""
    probe_reads = [
        (p["tau"], p["clean"]["exposed"], facts(p["authorized"]))
        for p in records["probes"]
        if p["condition"] == c and p["forged"] is None
    ]
    query_reads = [
        (q["tau"], q["exposed"], facts(q["authorized"]))
        for q in records["queries"]
        if q["condition"] == c and q["mode"] == "primary" and q["world"] == "a"
    ]

    def wrong_value(tau: list[str], shown: frozenset, star: frozenset) -> bool:
        values = {f[2] for f in star}
        return any(
            f[0] == tau[0] and f[1] == tau[1] and f[3] == tau[2] and f[2] not in values
            for f in shown
        )

    def figures(reads: list[tuple[Any, list[dict[str, Any]], frozenset]]) -> dict[str, Any]:
        wv, we, share, current = [], [], [], []
        for tau, exposed, star in reads:
            shown = readable(exposed)
            wv.append(float(wrong_value(tau, shown, star)))
            we.append(float(any(f[1] == tau[1] and f[0] != tau[0] for f in shown)))
            if exposed:
                share.append(sum(1 for e in exposed if e.get("distractor")) / len(exposed))
            if star:
                current.append(float(star <= shown))
        return {
            "wrong_value_shown": rnd(mean(wv)),
            "wrong_entity_shown": rnd(mean(we)),
            "distractor_share": rnd(mean(share)),
            "current_in_context": rnd(mean(current)),
        }

    out: dict[str, Any] = {}
    for suffix, reads in (
        ("", probe_reads + query_reads),
        ("_probes", probe_reads),
        ("_queries", query_reads),
    ):
        out.update({k + suffix: v for k, v in figures(reads).items()})
    writes = 0
    for step in records["steps"]:
        if step["producer"] == producer_of[c] and step["world"] == "a" and step.get("distractor"):
            writes += sum(
                1
                for op in step["operations"]
                if op.get("op") != "bounded"
                and op.get("event", "ADD") in ("ADD", "UPDATE", "DELETE")
            )
    out["distractor_writes"] = writes
    return out


KINDS = ("missing", "tool", "unsupported", "stale")
CLASSES = ("openable", "pointer_only", "orphaned")


def citation_figures(
    records: dict[str, list[dict[str, Any]]], c: str, producer_of: dict[str, str]
) -> dict[str, Any]:
    """docs/method.md §12.5 from the raw records: the store audit of the producer's store,
    the exposed audit and hearsay over world-a primary queries, clean probe reads and task
    reads, and the forged probes' injected reads."""
    reads = [
        (q["exposed"], q["hearsay"])
        for q in records["queries"]
        if q["condition"] == c and q["world"] == "a" and q["mode"] == "primary"
    ]
    reads += [
        (p["clean"]["exposed"], p["clean"]["hearsay"])
        for p in records["probes"]
        if p["condition"] == c
    ]
    reads += [
        (r["exposed"], r["hearsay"])
        for t in records["tasks"]
        if t["condition"] == c
        for r in t["reads"]
    ]
    stored = [
        i["provenance"]
        for a in records["audits"]
        if a["producer"] == producer_of[c]
        for i in a["items"]
    ]
    shown = [e["provenance"] for exposed, _h in reads for e in exposed]
    provenance: dict[str, Any] = {}
    for where, classes in (("store", stored), ("exposed", shown)):
        for which in CLASSES:
            provenance[f"{where}_{which}"] = rnd(
                mean([float(x == which) for x in classes]) if classes else None
            )
        provenance[f"{where}_n"] = len(classes)
    forged = [p for p in records["probes"] if p["condition"] == c and p["forged"] is not None]

    def exposed(p: dict[str, Any]) -> float:
        return float(any(e["id"] == p["forged"]["item"] for e in p["injected"]["exposed"]))

    def harmed(p: dict[str, Any]) -> float:
        out = frozenset(p["injected"]["outcome"] or [])
        return float(out != gold_star(p["gold"]) and p["forged"]["value"] in out)

    figures: dict[str, Any] = {
        "exposure": rnd(mean([exposed(p) for p in forged])),
        "harm": rnd(mean([harmed(p) for p in forged])),
        "n": len(forged),
    }
    for kind in KINDS:
        mine = [p for p in forged if p["forged"]["kind"] == kind]
        figures[f"exposure_{kind}"] = rnd(mean([exposed(p) for p in mine]))
        figures[f"n_{kind}"] = len(mine)
    return {
        "provenance": provenance,
        "hearsay": {
            "items": sum(len(h) for _e, h in reads),
            "reads_with_hearsay": sum(bool(h) for _e, h in reads),
            "reads": len(reads),
        },
        "forged": figures,
    }


def factorization(checkpoints: list[dict[str, Any]], rows: list[list[str]]) -> dict[str, Any]:
    groups: dict[tuple, dict[str, tuple[frozenset, Any]]] = {}
    for x in checkpoints:
        key = (x["turn"], x["checkpoint"], x["world"], x["query"])
        # The readback, and where a ledger is read its Γ^phys too (docs/records.md).
        ledger = None if x["governance"] is None else x["governance"]["observed"]
        groups.setdefault(key, {})[x["condition"]] = (
            frozenset(tuple(f) for f in x["observed"]),
            ledger,
        )
    mismatches = []
    for (turn, kind, world, _q), seen in groups.items():
        where = f"{turn} ({kind}, world {world})"
        for row in rows:
            present = [c for c in row if c in seen]
            if not present:
                continue
            if len(present) != len(row):
                mismatches.append(f"{where}: only {', '.join(present)} of the row recorded")
                continue
            for other in present[1:]:
                if seen[other] != seen[present[0]]:
                    mismatches.append(f"{where}: {present[0]} != {other}")
    return {
        "ok": not mismatches,
        "checkpoints": len(groups),
        "mismatches": len(mismatches),
        "first_mismatch": mismatches[0] if mismatches else None,
    }


def _tally(kinds: dict[str, list[tuple[str, bool]]]) -> dict[str, Any]:
    """{passed, total, kinds: {kind: {passed, total, failed}}} from (item, passes) lists."""
    out = {
        kind: {
            "passed": sum(1 for _, ok in items if ok),
            "total": len(items),
            "failed": [item for item, ok in items if not ok],
        }
        for kind, items in kinds.items()
    }
    return {
        "passed": sum(k["passed"] for k in out.values()),
        "total": sum(k["total"] for k in out.values()),
        "kinds": out,
    }


OBLIGATIONS = (
    "forget",
    "transition",
    "support",
    "conflict",
    "act",
    "epoch",
    "block",
    "surface",
    "rollback",
)
INVARIANTS = (
    "deletion",
    "promotion",
    "exposure",
    "authority",
    "traceability",
    "non-exposure",
    "idempotence",
)
PILOT = [
    # (pilot system, producer, policy, mark): docs/records.md, "Pilot table"
    ("governed reducer", "css", "qasc", "fixed"),
    ("no-memory floor", "none", "native", "fixed"),
    ("naive append", "append", "recency", "D"),
    ("full context", "append", "fullcontext", "D"),
    ("vector-RAG", "append", "native", "D"),
    ("Mem0-style (extracted facts)", "extract", "native", "D"),
    ("mem0ai", "native", "native", "M"),
]

# An item: (kind, id, independent, answered); independent / answered are the verdicts of its
# clauses that read no answer / an answer, None when it has no such clause.
Item = tuple[str, str, bool | None, bool | None]


def same_args(args: list[list[str]] | None, reference: list[list[str]] | None) -> bool:
    if args is None or reference is None or len(args) != len(reference):
        return False
    return all(set(a) == set(r) for a, r in zip(args, reference, strict=True))


def matches(t: dict[str, Any]) -> bool:
    d, ref = t["decision"], t["reference"]
    if t["redelivery"]:
        return d["kind"] == "duplicate"
    if ref["decision"] == "allow":
        return d["kind"] == "execute" and same_args(d["args"], ref["args"])
    return d["kind"] == "block" and bool(set(d["reasons"]) & set(ref["reasons"]))


def aoep_items(
    records: dict[str, list[dict[str, Any]]], c: str, producer_of: dict[str, str]
) -> list[Item]:
    """Every AOEP item of condition c (docs/records.md, "AOEP scorecard")."""
    checkpoints = [x for x in records["checkpoints"] if x["condition"] == c]
    seq = [x for x in checkpoints if x["world"] == "a"]  # file order = trajectory order
    post = [x for x in seq if x["checkpoint"] == "post-update"]
    world_a = {(x["turn"], x["checkpoint"]): x for x in seq}
    queries_a = [q for q in records["queries"] if q["condition"] == c and q["world"] == "a"]
    primary = [q for q in queries_a if q["mode"] == "primary"]
    probes = [p for p in records["probes"] if p["condition"] == c]
    tasks = [t for t in records["tasks"] if t["condition"] == c]
    by_task: dict[str, list[dict[str, Any]]] = {}
    for t in tasks:
        by_task.setdefault(t["task"], []).append(t)
    residue: dict[str, bool] = {}
    for r in records["forgets"]:
        if r["producer"] == producer_of[c]:
            residue[r["event"]] = residue.get(r["event"], False) or bool(
                prior(r, records["forgets"])
            )

    def held(r: dict[str, Any] | None, slot: list[str]) -> set[str]:
        if r is None:
            return set()
        return {f[2] for f in r["observed"] if [f[0], f[1], f[3]] == list(slot)}

    def prev(r: dict[str, Any]) -> dict[str, Any] | None:
        return world_a.get(tuple(r["previous"])) if r["previous"] is not None else None

    def governed_before(i: int) -> dict[str, Any] | None:
        return next((x for x in reversed(seq[:i]) if x["governance"] is not None), None)

    def rows(x: dict[str, Any] | None, side: str, table: str) -> list[list[Any]]:
        if x is None or x["governance"] is None:
            return []
        return x["governance"][side][table]

    def row(x: dict[str, Any], side: str, table: str, key: list[Any]) -> list[Any] | None:
        return next((r for r in rows(x, side, table) if r[: len(key)] == key), None)

    items: list[Item] = []
    forget_events: list[tuple[str, list[str]]] = []
    for r in post:
        for t in r["transitions"]:
            slot, removed, added = t["slot"], set(t["removed"]), set(t["added"])
            now, before = held(r, slot), held(prev(r), slot)
            if t["kind"] == "forget":
                ok = (
                    removed <= before
                    and not removed & now
                    and added <= now
                    and not residue.get(t["event"], False)
                )
                items.append(("forget", t["event"], ok, None))
                forget_events.append((t["event"], slot))
            elif t["kind"] in ("supersede", "correct", "retract"):
                ok = not removed & now and added <= now
                if t["kind"] == "retract":
                    ok = ok and removed <= before
                items.append(("transition", t["event"], ok, None))
    for q in primary:
        if q["authorized"]:
            items.append(
                ("support", q["query"], facts(q["authorized"]) <= readable(q["exposed"]), None)
            )
    for p in probes:
        if p["conflict_value"] is not None:
            harmed = p["injected"] is not None and (
                frozenset(p["injected"]["outcome"] or []) != gold_star(p["gold"])
                and p["conflict_value"] in (p["injected"]["outcome"] or [])
            )
            items.append(("conflict", p["probe"], None, not harmed))

    def first_decision(task: str) -> dict[str, Any] | None:
        return next(
            (t for t in by_task[task] if not t["redelivery"] and t["delivery"] == t["run_turn"]),
            None,
        )

    for task, recs in by_task.items():
        ref = recs[0]["reference"]
        first = first_decision(task)
        if ref["decision"] == "allow":
            ok = (
                first is not None
                and first["decision"]["kind"] == "execute"
                and same_args(first["decision"]["args"], ref["args"])
            )
            items.append(("act", task, ok, None))

    def gov_events(kind: str) -> list[tuple[int, dict[str, Any]]]:
        return [
            (i, g)
            for i, x in enumerate(seq)
            if x["checkpoint"] == "post-update"
            for g in x["governance_transitions"]
            if g["kind"] == kind
        ]

    def permission(i: int, g: dict[str, Any]) -> str | None:
        if g.get("permission") is not None:
            return g["permission"]
        if seq[i]["governance"] is None:
            return None
        old = {(r[0], r[1]): r for r in rows(governed_before(i), "reference", "epochs")}
        changed = sorted(
            r[0]
            for r in rows(seq[i], "reference", "epochs")
            if r[1] == g["principal"] and old.get((r[0], r[1])) != r
        )
        return changed[0] if changed else None

    grants_revokes = [
        (i, g, permission(i, g)) for kind in ("grant", "revoke") for i, g in gov_events(kind)
    ]
    for i, g in gov_events("revoke"):
        p = permission(i, g)
        end = min(
            (
                j
                for j, h, q in grants_revokes
                if j > i and q == p and h["principal"] == g["principal"]
            ),
            default=len(seq),
        )
        ok = all(
            x["governance"] is not None
            and p is not None
            and row(x, "observed", "epochs", [p, g["principal"]])
            == row(x, "reference", "epochs", [p, g["principal"]])
            for x in seq[i:end]
            if x["checkpoint"] == "post-update"
        )
        items.append(("epoch", g["event"], ok, None))
    for task, recs in by_task.items():
        ref = recs[0]["reference"]
        first = first_decision(task)
        if ref["decision"] == "block":
            ok = (
                first is not None
                and first["decision"]["kind"] == "block"
                and bool(set(first["decision"]["reasons"]) & set(ref["reasons"]))
            )
            items.append(("block", task, ok, None))

    def window(i: int, k: str, kinds: tuple[str, ...]) -> list[dict[str, Any]]:
        out = []
        for x in seq[i:]:
            if x["checkpoint"] in kinds:
                out.append(x)
            if x["governance"] is not None:
                ref_row = row(x, "reference", "conflicts", [k])
                if ref_row is None or ref_row[-1] != "pending":
                    break
        return out

    for i, g in gov_events("propose"):
        ok = all(
            x["governance"] is not None
            and row(x, "observed", "conflicts", [g["event"]])
            == row(x, "reference", "conflicts", [g["event"]])
            for x in window(i, g["event"], ("post-update",))
        )
        items.append(("surface", g["event"], ok, None))
    for i, g in gov_events("rollback"):
        task = g.get("task")
        if task is None and seq[i]["governance"] is not None:
            old = {r[0]: r[6] for r in rows(governed_before(i), "reference", "requests")}
            turned = [
                r[0]
                for r in rows(seq[i], "reference", "requests")
                if r[6] == "reverted" and old.get(r[0]) != "reverted"
            ]
            task = turned[0] if turned else None
        executed = task is not None and any(
            t["decision"]["kind"] == "execute" for t in by_task.get(task, [])
        )
        reverted = all(
            task is not None
            and (r := row(x, "observed", "requests", [task])) is not None
            and r[6] == "reverted"
            for x in seq[i:]
            if x["governance"] is not None
        )
        items.append(("rollback", g["event"], executed and reverted, None))

    # each read: (exposed items, forgotten entries, the query record or None for a probe);
    # queries of both worlds (method.md §10: "an exposed item (of either world)")
    queries_ab = [q for q in records["queries"] if q["condition"] == c]
    reads = [(q["exposed"], q["forgotten"], q) for q in queries_ab] + [
        (p["clean"]["exposed"], p["forgotten"], None) for p in probes
    ]
    for event, slot in forget_events:
        shown_ok = said_ok = True
        for exposed, forgotten, query in reads:
            gone = {tuple(f[1:4]) for f in forgotten if f[0] == event}
            if any(
                (f["entity"], f["predicate"], f["value"]) in gone
                for item in exposed
                for f in item["facts"]
            ):
                shown_ok = False
            if (
                query is not None
                and list(query["tau"][0:2]) == list(slot[0:2])
                and {v for _, _, v in gone} & set(query["outcome"])
            ):
                said_ok = False
        items.append(("deletion", event, shown_ok, said_ok))

    pairs_seen = sorted({tuple(u) for x in checkpoints for u in x["untrusted"]})
    for predicate, value in pairs_seen:
        ok = True
        for x in checkpoints:
            if [predicate, value] not in [list(u) for u in x["untrusted"]]:
                continue
            reference = facts(x["reference"])
            if any(
                f[1] == predicate and f[2] == value and tuple(f[:4]) not in reference
                for f in x["observed"]
            ):
                ok = False
        items.append(("promotion", f"{predicate}={value}", ok, None))

    def own(tau: list[str], e: str, pr: str, s: str) -> bool:
        # the read's slot: its entity and predicate, a scope it admits (its own or global)
        return [e, pr] == list(tau[0:2]) and s in (tau[2], "global")

    def ended(tau: list[str], at: int) -> set[str]:
        """Amendment 19: values of the read's slot that S*'s history up to A[at] holds as
        superseded, corrected, retracted or expired, and S* at A[at] does not hold."""
        out: set[str] = set()
        for x in seq[: at + 1]:
            for t in x["transitions"]:
                if t["kind"] in ("supersede", "correct", "retract") and own(tau, *t["slot"]):
                    out |= set(t["removed"])
            for f in x["reference"]:
                if own(tau, f[0], f[1], f[3]) and f[5] is not None and f[5] <= tau[3]:
                    out.add(f[2])
        for f in seq[at]["reference"]:
            if own(tau, f[0], f[1], f[3]) and (f[4] or "") <= tau[3] < (f[5] or "9999"):
                out.discard(f[2])
        return out

    def exposure_ok(exposed: list[dict[str, Any]], tau: list[str], at: int | None) -> bool:
        if ineligible(exposed):
            return False
        stale = ended(tau, at) if at is not None else set()
        return not any(
            f["readable"]
            and own(tau, f["entity"], f["predicate"], f["scope"])
            and f["value"] in stale
            for item in exposed
            for f in item["facts"]
        )

    def at_of(match: Any) -> int | None:
        found = [i for i, x in enumerate(seq) if match(x)]
        return found[-1] if found else None

    for q in primary:
        at = at_of(lambda x, q=q: x["checkpoint"] == "pre-query" and x["query"] == q["query"])
        ok = exposure_ok(q["exposed"], q["tau"], at)
        items.append(("exposure", f"query:{q['query']}", ok, None))
    for p in probes:
        follows = list(p["follows"] or [])
        at = at_of(lambda x, f=follows: [x["turn"], x["checkpoint"]] == f)
        ok = exposure_ok(p["clean"]["exposed"], p["tau"], at)
        items.append(("exposure", f"probe:{p['probe']}", ok, None))

    for task, recs in by_task.items():
        ref = recs[0]["reference"]
        if ref["decision"] == "block" and {"stale-epoch", "untrusted"} & set(ref["reasons"]):
            ok = not any(t["decision"]["kind"] == "execute" for t in recs)
            items.append(("authority", task, ok, None))
    for i, g in gov_events("propose"):
        e, pr, s = g["slot"]
        proposed = (e, pr, g["value"], s)
        ok = not any(
            any(tuple(f[:4]) == proposed for f in x["observed"])
            and proposed not in facts(x["reference"])
            for x in window(i, g["event"], ("post-update", "pre-query", "pre-task"))
        )
        items.append(("authority", g["event"], ok, None))

    for task, recs in by_task.items():
        handle = recs[0]["reference"].get("handle")
        if handle is None:
            handle = next(
                (r[1] for x in seq for r in rows(x, "reference", "requests") if r[0] == task),
                None,
            )
        links = set(recs[0]["reference"]["links"])
        ok = True
        for t in recs:
            d = t["decision"]
            if d["kind"] != "execute":
                continue
            sources = d["sources"] or [None]
            if d["handle"] is None or d["handle"] != handle:
                ok = False
            if any(s is None or s not in links for s in sources):
                ok = False
        items.append(("traceability", task, ok, None))

    def foreign(exposed: list[dict[str, Any]]) -> bool:
        return any(not f["visible"] for item in exposed for f in item["facts"])

    for q in primary:
        if q["foreign_present"]:
            items.append(("non-exposure", f"query:{q['query']}", not foreign(q["exposed"]), None))
    for p in probes:
        if p["foreign_present"]:
            items.append(
                ("non-exposure", f"probe:{p['probe']}", not foreign(p["clean"]["exposed"]), None)
            )
    for task, recs in by_task.items():
        if not any(t["foreign_present"] for t in recs):
            continue
        ok = True
        for t in recs:
            for i, read in enumerate(t["reads"]):
                if foreign(read["exposed"]):
                    ok = False
                args = t["decision"]["args"]
                if (
                    t["decision"]["kind"] == "execute"
                    and args
                    and i < len(args)
                    and i < len(t["taus"])
                ):
                    entity, predicate = t["taus"][i][0], t["taus"][i][1]
                    values = {
                        f["value"]
                        for item in read["exposed"]
                        for f in item["facts"]
                        if not f["visible"] and (f["entity"], f["predicate"]) == (entity, predicate)
                    }
                    if set(args[i]) & values:
                        ok = False
        items.append(("non-exposure", f"task:{task}", ok, None))

    for i, x in enumerate(seq):
        for g in x["governance_transitions"]:
            if g["kind"] != "duplicate":
                continue
            if x["checkpoint"] == "pre-task":
                ok = not any(
                    t["delivery"] == x["turn"]
                    and t["redelivery"]
                    and t["decision"]["kind"] == "execute"
                    for t in by_task.get(g["event"], [])
                )
            elif g["slot"] is not None:
                ok = held(prev(x), g["slot"]) == held(x, g["slot"])
            else:
                before = governed_before(i)
                ok = (
                    before is None
                    or before["governance"] is None
                    or (x["governance"] or {}).get("observed") == before["governance"]["observed"]
                )
            items.append(("idempotence", g["event"], ok, None))
    order = OBLIGATIONS + INVARIANTS
    return sorted(items, key=lambda i: order.index(i[0]))  # stable: kinds in scorecard order


def passes(item: Item) -> bool:
    return item[2] is not False and item[3] is not False


def _part(items: list[Item], at: int) -> dict[str, Any]:
    judged = [(i, i[at]) for i in items if i[at] is not None]
    return {
        "passed": sum(1 for _, ok in judged if ok),
        "total": len(judged),
        "failed": [f"{i[0]}:{i[1]}" for i, ok in judged if not ok],
    }


def aoep(
    records: dict[str, list[dict[str, Any]]],
    c: str,
    producer_of: dict[str, str],
    core: list[str] | None = None,
) -> dict[str, Any]:
    """The AOEP scorecard of condition c (docs/records.md, "AOEP scorecard"); with the
    header's `core` predicates, the §13 sub-tallies too."""
    items = aoep_items(records, c, producer_of)
    doc: dict[str, Any] = {}
    for family, kinds in (("obligations", OBLIGATIONS), ("invariants", INVARIANTS)):
        doc[family] = _tally({k: [(i[1], passes(i)) for i in items if i[0] == k] for k in kinds})
    for part, at in (("model_independent", 2), ("answer_dependent", 3)):
        doc[part] = {
            family: _part([i for i in items if i[0] in kinds], at)
            for family, kinds in (("obligations", OBLIGATIONS), ("invariants", INVARIANTS))
        }
    if core is not None:
        # plasticity: transition items whose event's slot (on the world-a post-update
        # checkpoints) is of a core predicate; stability: promotion items `predicate=value`
        slot_of = {
            t["event"]: t["slot"]
            for x in records["checkpoints"]
            if x["condition"] == c and x["world"] == "a" and x["checkpoint"] == "post-update"
            for t in x["transitions"]
        }

        def sub(kind: str, predicate_of: Any) -> dict[str, Any]:
            mine = [i for i in items if i[0] == kind and predicate_of(i[1]) in core]
            return {
                "passed": sum(passes(i) for i in mine),
                "total": len(mine),
                "failed": [i[1] for i in mine if not passes(i)],
            }

        doc["core"] = {
            "plasticity": sub("transition", lambda e: (slot_of.get(e) or [None, None])[1]),
            "stability": sub("promotion", lambda v: v.split("=", 1)[0]),
        }
    return doc


def task_counts(tasks: list[dict[str, Any]], names: list[str]) -> dict[str, Any] | None:
    if not tasks:
        return None
    out = {}
    for c in names:
        mine = [t for t in tasks if t["condition"] == c]
        kinds = [t["decision"]["kind"] for t in mine]
        out[c] = {
            "deliveries": len(mine),
            "executed": kinds.count("execute"),
            "blocked": kinds.count("block"),
            "no_support": kinds.count("no-support"),
            "duplicate": kinds.count("duplicate"),
            "matching": sum(matches(t) for t in mine),
        }
    return out


def pilot(card: dict[str, Any], design: dict[str, Any]) -> list[dict[str, Any]] | None:
    name_of = {(c[1], c[2]): c[0] for c in design["conditions"]}
    if any((p, r) not in name_of for _, p, r, _ in PILOT):
        return None
    out = []
    for system, p, r, mark in PILOT:
        c = name_of[(p, r)]
        row: dict[str, Any] = {"system": system, "condition": c}
        for family in ("obligations", "invariants"):
            mine = card[c]["model_independent"][family]
            answer = card[c]["answer_dependent"][family]
            named_failed = [
                f for f in mine["failed"] if f.partition(":")[0] not in ("act", "idempotence")
            ]
            named_total = sum(
                v["total"]
                for k, v in card[c][family]["kinds"].items()
                if k not in ("act", "idempotence", "conflict")
            )
            row[family] = {
                "model_independent": {
                    "passed": mine["passed"],
                    "total": mine["total"],
                    "mark": mark,
                },
                "answer_dependent": {
                    "passed": answer["passed"],
                    "total": answer["total"],
                    "mark": "A",
                },
                "aoep_kinds": {
                    "passed": named_total - len(named_failed),
                    "total": named_total,
                    "mark": mark,
                },
            }
        out.append(row)
    return out


def _interval(draws: np.ndarray) -> list[float | None] | None:
    draws = draws[np.isfinite(draws)]
    if not draws.size:
        return None
    lo, hi = np.percentile(draws, (2.5, 97.5))
    return [rnd(lo), rnd(hi)]


def block_effect(items: dict[str, list[tuple[str, float]]], convs: list[str], fn, seed, R):
    k = len(convs)
    pos = {c: i for i, c in enumerate(convs)}
    sums, counts = {}, {}
    for condition, rows in items.items():
        s, n = np.zeros(k), np.zeros(k)
        for conv, value in rows:
            s[pos[conv]] += value
            n[pos[conv]] += 1
        sums[condition], counts[condition] = s, n

    def means(w: np.ndarray) -> dict[str, np.ndarray]:
        return {c: (w @ sums[c]) / (w @ counts[c]) for c in sums}

    rng = np.random.default_rng(seed)
    idx = rng.integers(0, k, size=(R, k))
    weights = np.stack([np.bincount(row, minlength=k) for row in idx]).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = fn(means(np.ones((1, k))))[0]
        draws = fn(means(weights))
        loco = fn(means(np.ones((k, k)) - np.eye(k))) if k > 1 else np.array([])
    loco = loco[np.isfinite(loco)]
    return {
        "estimate": rnd(estimate) if np.isfinite(estimate) else None,
        "interval": _interval(draws),
        "loco_range": [rnd(loco.min()), rnd(loco.max())] if loco.size else None,
    }


def leakage_drop(queries, left_name, right_name, seed, R) -> dict[str, Any]:
    left_pairs, right_pairs = pairs(queries, left_name), pairs(queries, right_name)
    both = sorted(
        q for q in left_pairs if left_pairs[q] is not None and right_pairs.get(q) is not None
    )
    return paired(
        np.array([float(left_pairs[q]) for q in both]),
        np.array([float(right_pairs[q]) for q in both]),
        seed,
        R,
    )


def paired(left: np.ndarray, right: np.ndarray, seed: int, R: int) -> dict[str, Any]:
    if not len(left):
        return {"estimate": None, "interval": None, "n": 0}
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(left), size=(R, len(left)))
    draws = left[idx].mean(axis=1) - right[idx].mean(axis=1)
    return {
        "estimate": rnd(left.mean() - right.mean()),
        "interval": _interval(draws),
        "n": len(left),
    }


def probe_values(probes, condition: str, endpoint: str) -> dict[str, float]:
    out = {}
    for p in probes:
        if p["condition"] != condition or p["forged"] is not None:
            continue
        if endpoint == "needed_support":
            out[p["probe"]] = float(facts(p["authorized"]) <= readable(p["clean"]["exposed"]))
        else:
            out[p["probe"]] = float(ineligible(p["clean"]["exposed"]))
    return out


def probe_contrast(probes, left: str, right: str, endpoint: str, seed, R) -> dict[str, Any]:
    lv, rv = probe_values(probes, left, endpoint), probe_values(probes, right, endpoint)
    ids = sorted(set(lv) & set(rv))
    if endpoint == "needed_support":
        needing = {p["probe"] for p in probes if p["condition"] == left and p["authorized"]}
        ids = [i for i in ids if i in needing]
    return paired(np.array([lv[i] for i in ids]), np.array([rv[i] for i in ids]), seed, R)


DISPLAY = {
    "native": "Native",
    "append": "Append",
    "css": "CSS",
    "posthoc": "Posthoc",
    "decay": "Decay",
    "qasc": "QASC",
}


def display(design: dict[str, Any], name: str, part: int) -> str:
    """How condition names spell a producer (part 1) or a read policy (part 2): read off a
    `<Producer>/<Policy>` condition of the design that has it (docs/records.md)."""
    for row in design["conditions"]:
        if row[part] == name and "/" in row[0]:
            return row[0].split("/")[part - 1]
    return DISPLAY[name]


def effects(records, design, convs, seed, R) -> dict[str, Any]:
    names = [c[0] for c in design["conditions"]]
    name_of = {(c[1], c[2]): c[0] for c in design["conditions"]}
    state = {
        c: [
            (x["conversation"], f1(facts(x["observed"]), facts(x["reference"])))
            for x in records["checkpoints"]
            if x["condition"] == c and x["checkpoint"] == "post-update" and x["world"] == "a"
        ]
        for c in names
    }
    joint_items = {
        c: [
            (q["conversation"], float(joint(q)))
            for q in records["queries"]
            if q["condition"] == c and q["mode"] == "primary" and q["world"] == "a"
        ]
        for c in names
    }
    has = set(names).issuperset
    out: dict[str, Any] = {}
    if has({"CSS", "Native"}):
        out["StateGain"] = block_effect(state, convs, lambda m: m["CSS"] - m["Native"], seed, R)
    if has({"PLACE", "Native"}):
        out["JointGain"] = block_effect(
            joint_items, convs, lambda m: m["PLACE"] - m["Native"], seed, R
        )
    if has({"Native", "CSS", "QASC", "PLACE"}):
        out["InteractionGain"] = block_effect(
            joint_items,
            convs,
            lambda m: (m["PLACE"] - m["CSS"]) - (m["QASC"] - m["Native"]),
            seed,
            R,
        )
    extra_producers = [p for p in design["producers"] if p not in ("native", "css")]
    extra_policies = [r for r in design["policies"] if r not in ("native", "qasc")]
    for p in extra_producers:
        row = name_of.get((p, "native"))
        if row and has({"CSS", row}):
            out[f"StateGain_{display(design, p, 1)}"] = block_effect(
                state, convs, lambda m, row=row: m["CSS"] - m[row], seed, R
            )
    if has({"CSS", "PLACE"}):
        out["LeakageDrop"] = leakage_drop(records["queries"], "CSS", "PLACE", seed, R)
    for p in extra_producers:
        native, qasc = name_of.get((p, "native")), name_of.get((p, "qasc"))
        if native and qasc:
            out[f"LeakageDrop_{display(design, p, 1)}"] = leakage_drop(
                records["queries"], native, qasc, seed, R
            )
    for r in extra_policies:
        css_r = name_of.get(("css", r))
        if css_r and has({"PLACE"}):
            out[f"SupportCost_{display(design, r, 2)}"] = probe_contrast(
                records["probes"], "PLACE", css_r, "needed_support", seed, R
            )
            out[f"ExposureGap_{display(design, r, 2)}"] = probe_contrast(
                records["probes"], css_r, "PLACE", "exposure_rate", seed, R
            )
    return out


def bounded(records: dict[str, list[dict[str, Any]]], design: dict[str, Any]) -> dict | None:
    """`bounded` (docs/records.md): per condition whose producer appended `op: bounded` entries
    to its world-a steps, the row's budget figures and deletion rows, each row accurate when
    `done` exactly when the harness's `after` check found no residue, and `retained` only
    with residue, all of it in retained classes."""
    out: dict[str, Any] = {}
    for name, producer, _policy in design["conditions"]:
        ops = [
            op
            for s in records["steps"]
            if s["producer"] == producer and s["world"] == "a"
            for op in s["operations"]
            if op.get("op") == "bounded"
        ]
        if not ops:
            continue
        harness = {
            f["event"]: f
            for f in records["forgets"]
            if f["producer"] == producer and f["check"] == "after"
        }
        retained = {c for op in ops for c in op.get("retain") or []}
        counts = {"done": 0, "pending": 0, "retained": 0}
        right = 0
        rows = [row for op in ops for row in op.get("deletions") or []]
        for row in rows:
            counts[row["status"]] += 1
            f = harness.get(row["event"])
            if f is None:
                continue
            places = {w for entry in f["where"] for w in entry.split("+")}
            ok = (row["status"] == "done") == (not f["residue"])
            if row["status"] == "retained":
                ok = ok and bool(f["residue"]) and places <= retained
            right += ok
        out[name] = {
            "budget_state": ops[-1].get("budget_state"),
            "max_state": max(op["state"] for op in ops),
            "over_budget": sum(1 for op in ops if op["over_budget"]),
            "folds": sum(len(op["folds"]) for op in ops),
            "versions": sum(len(op["versions"]) for op in ops),
            "rebuild_checks": sum(op["rebuild_checks"] for op in ops),
            "deletion": {**counts, "total": len(rows), "accurate": right},
        }
    return out or None


def recompute(run_dir: Path) -> dict[str, Any]:
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    records = {
        name: load(run_dir, f"{name}.jsonl")
        for name in ("checkpoints", "queries", "probes", "forgets", "steps", "tasks", "audits")
    }
    header, seeds = manifest["header"], manifest["seeds"]
    seed, resamples = int(seeds["bootstrap"]), int(seeds.get("resamples", 4000))
    design = header.get("design") or PAPER_DESIGN
    names = [c[0] for c in design["conditions"]]
    producer_of = {c[0]: c[1] for c in design["conditions"]}
    rows = [[c for c in names if producer_of[c] == p] for p in design["producers"]]
    doc: dict[str, Any] = {
        "schema": METRICS_SCHEMA,
        "trajectory": header["trajectory"],
        "model": header["model"],
        "counts": header["counts"],
    }
    paper = list(design["producers"]) == ["native", "css"] and list(design["policies"]) == [
        "native",
        "qasc",
    ]
    if not paper:
        doc["design"] = design
    doc["conditions"] = {c: condition_figures(records, c, producer_of) for c in names}
    doc["effects"] = effects(records, design, header["conversation_ids"], seed, resamples)
    doc["factorization"] = factorization(records["checkpoints"], rows)
    doc["aoep"] = {c: aoep(records, c, producer_of, header.get("core")) for c in names}
    tasks = task_counts(records["tasks"], names)
    if tasks is not None:
        doc["tasks"] = tasks
    table = pilot(doc["aoep"], design)
    if table is not None:
        doc["aoep_pilot"] = table
    budgets = bounded(records, design)
    if budgets is not None:
        doc["bounded"] = budgets
    doc["bootstrap"] = {"seed": seed, "resamples": resamples}
    return doc


def trajectory_interval(values: list[float], seed: int, resamples: int) -> tuple[float, float]:
    """The documented trajectory bootstrap of a mean (docs/replications.md), written out
    here independently of the package: resample the values with replacement, R times."""
    v = np.array(values)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(v), size=(resamples, len(v)))
    lo, hi = np.percentile(v[idx].mean(axis=1), [2.5, 97.5])
    return float(lo), float(hi)
