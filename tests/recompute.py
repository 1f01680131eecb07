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
RECORDS_SCHEMA = "place-records/4"
METRICS_SCHEMA = "place-metrics/3"


def load(run_dir: Path, name: str) -> list[dict[str, Any]]:
    path = run_dir / "records" / name
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    for row in rows:
        if row.get("schema") != RECORDS_SCHEMA:
            raise ValueError(
                f"{path}: record layout {row.get('schema')!r}, this reader reads {RECORDS_SCHEMA}"
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
    mine = [p for p in probes if p["condition"] == c]
    needing = [p for p in mine if p["authorized"]]
    conflict = [p for p in mine if p["injected"] is not None]
    residue: dict[str, bool] = {}
    for r in forgets:
        if r["producer"] == producer_of[c]:
            residue[r["event"]] = residue.get(r["event"], False) or bool(r["residue"])
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
        "closed_loop": {
            "state_correctness": rnd(state) if loop else None,  # None: the loop was not run
            "exposure_rate": rnd(mean([float(ineligible(q["exposed"])) for q in loop])),
            "joint_success": rnd(mean([float(joint(q)) for q in loop])),
        },
    }


def factorization(checkpoints: list[dict[str, Any]], rows: list[list[str]]) -> dict[str, Any]:
    groups: dict[tuple, dict[str, frozenset]] = {}
    for x in checkpoints:
        key = (x["turn"], x["checkpoint"], x["world"], x["query"])
        groups.setdefault(key, {})[x["condition"]] = frozenset(tuple(f) for f in x["observed"])
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


def aoep(
    records: dict[str, list[dict[str, Any]]], c: str, producer_of: dict[str, str]
) -> dict[str, Any]:
    """The AOEP scorecard of condition c (docs/records.md, "AOEP scorecard")."""
    checkpoints = [x for x in records["checkpoints"] if x["condition"] == c]
    post = [x for x in checkpoints if x["checkpoint"] == "post-update" and x["world"] == "a"]
    world_a = {(x["turn"], x["checkpoint"]): x for x in checkpoints if x["world"] == "a"}
    queries_a = [q for q in records["queries"] if q["condition"] == c and q["world"] == "a"]
    primary = [q for q in queries_a if q["mode"] == "primary"]
    probes = [p for p in records["probes"] if p["condition"] == c]
    residue: dict[str, bool] = {}
    for r in records["forgets"]:
        if r["producer"] == producer_of[c]:
            residue[r["event"]] = residue.get(r["event"], False) or bool(r["residue"])

    def held(r: dict[str, Any] | None, slot: list[str]) -> set[str]:
        if r is None:
            return set()
        return {f[2] for f in r["observed"] if [f[0], f[1], f[3]] == list(slot)}

    def prev(r: dict[str, Any]) -> dict[str, Any] | None:
        return world_a.get(tuple(r["previous"])) if r["previous"] is not None else None

    forget_items: list[tuple[str, bool]] = []
    transition_items: list[tuple[str, bool]] = []
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
                forget_items.append((t["event"], ok))
                forget_events.append((t["event"], slot))
            elif t["kind"] in ("supersede", "correct", "retract"):
                ok = not removed & now and added <= now
                if t["kind"] == "retract":
                    ok = ok and removed <= before
                transition_items.append((t["event"], ok))
    support_items = [
        (q["query"], facts(q["authorized"]) <= readable(q["exposed"]))
        for q in primary
        if q["authorized"]
    ]
    conflict_items = [
        (
            p["probe"],
            not (
                frozenset(p["injected"]["outcome"] or []) != gold_star(p["gold"])
                and p["conflict_value"] in (p["injected"]["outcome"] or [])
            ),
        )
        for p in probes
        if p["injected"] is not None
    ]

    # each read: (exposed items, forgotten entries, the query record or None for a probe)
    reads = [(q["exposed"], q["forgotten"], q) for q in queries_a] + [
        (p["clean"]["exposed"], p["forgotten"], None) for p in probes
    ]
    deletion_items: list[tuple[str, bool]] = []
    for event, slot in forget_events:
        ok = True
        for exposed, forgotten, query in reads:
            gone = {tuple(f[1:4]) for f in forgotten if f[0] == event}
            if any(
                (f["entity"], f["predicate"], f["value"]) in gone
                for item in exposed
                for f in item["facts"]
            ):
                ok = False
            if (
                query is not None
                and list(query["tau"][0:2]) == list(slot[0:2])
                and {v for _, _, v in gone} & set(query["outcome"])
            ):
                ok = False
        deletion_items.append((event, ok))

    pairs_seen = sorted({tuple(u) for x in checkpoints for u in x["untrusted"]})
    promotion_items = []
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
        promotion_items.append((f"{predicate}={value}", ok))
    exposure_items = [(f"query:{q['query']}", not ineligible(q["exposed"])) for q in primary] + [
        (f"probe:{p['probe']}", not ineligible(p["clean"]["exposed"])) for p in probes
    ]
    return {
        "obligations": _tally(
            {
                "forget": forget_items,
                "transition": transition_items,
                "support": support_items,
                "conflict": conflict_items,
            }
        ),
        "invariants": _tally(
            {
                "deletion": deletion_items,
                "promotion": promotion_items,
                "exposure": exposure_items,
            }
        ),
    }


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
        if p["condition"] != condition:
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
            out[f"StateGain_{DISPLAY[p]}"] = block_effect(
                state, convs, lambda m, row=row: m["CSS"] - m[row], seed, R
            )
    if has({"CSS", "PLACE"}):
        out["LeakageDrop"] = leakage_drop(records["queries"], "CSS", "PLACE", seed, R)
    for p in extra_producers:
        native, qasc = name_of.get((p, "native")), name_of.get((p, "qasc"))
        if native and qasc:
            out[f"LeakageDrop_{DISPLAY[p]}"] = leakage_drop(
                records["queries"], native, qasc, seed, R
            )
    for r in extra_policies:
        css_r = name_of.get(("css", r))
        if css_r and has({"PLACE"}):
            out[f"SupportCost_{DISPLAY[r]}"] = probe_contrast(
                records["probes"], "PLACE", css_r, "needed_support", seed, R
            )
            out[f"ExposureGap_{DISPLAY[r]}"] = probe_contrast(
                records["probes"], css_r, "PLACE", "exposure_rate", seed, R
            )
    return out


def recompute(run_dir: Path) -> dict[str, Any]:
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    records = {
        name: load(run_dir, f"{name}.jsonl")
        for name in ("checkpoints", "queries", "probes", "forgets", "steps")
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
    doc["aoep"] = {c: aoep(records, c, producer_of) for c in names}
    doc["bootstrap"] = {"seed": seed, "resamples": resamples}
    return doc
