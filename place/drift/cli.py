"""`place drift TRAJ [TRAJ...]`: the drift experiment (docs/method.md §13, docs/drift.md).

Every input is checked, and every trajectory loaded, before anything is run or written; the
three outputs are written only once all of them are computed, each atomically.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from pathlib import Path

from place.errors import PlaceError

DEFAULT_EPS = "0,0.02,0.05,0.1"
DEFAULT_EVERY = "0,5,10,20"
DEFAULT_SEEDS = 20


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "drift",
        help="the drift experiment of docs/method.md §13 (Theorem 1): SSGM's memory alone, "
        "seeded corruption, reconciliation every N steps; no model, no store",
    )
    p.add_argument("files", nargs="+", metavar="TRAJ", help="trajectory files")
    p.add_argument(
        "--eps", default=DEFAULT_EPS, help=f"corruption probabilities in [0, 1] ({DEFAULT_EPS})"
    )
    p.add_argument(
        "--every",
        default=DEFAULT_EVERY,
        help=f"reconciliation periods N ≥ 0, 0 = never ({DEFAULT_EVERY})",
    )
    p.add_argument("--seeds", type=int, default=DEFAULT_SEEDS, help="seeds 0..S-1 per (ε, N) (20)")
    p.add_argument(
        "--core",
        default=None,
        help="core predicates of the gate: all, or a comma list (default: the schema's core flags)",
    )
    p.add_argument("--no-gate", action="store_true", help="turn the core write gate off")
    p.add_argument(
        "--out", default=None, help="output directory (default: experiments/drift/<first TRAJ>)"
    )
    p.add_argument("--jobs", type=int, default=1, help="worker processes (1)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_drift)


def _numbers(text: str, flag: str, kind: type) -> list:
    items = [s.strip() for s in text.split(",")]
    try:
        values = [kind(s) for s in items]
    except ValueError:
        raise PlaceError(
            f"{flag} {text!r}: not a comma list of {'numbers' if kind is float else 'integers'}"
        ) from None
    if len(set(values)) != len(values):
        raise PlaceError(f"{flag} {text!r}: a value appears twice; allowed: distinct values")
    return values


def parse_eps(text: str) -> list[float]:
    """`--eps`: distinct values in [0, 1]; 0 (the twin) is put first when it is missing."""
    values = _numbers(text, "--eps", float)
    bad = [v for v in values if math.isnan(v) or not 0 <= v <= 1]
    if bad:
        raise PlaceError(f"--eps {text!r}: {bad[0]} is outside [0, 1]; allowed: 0 ≤ ε ≤ 1")
    return values if 0.0 in values else [0.0, *values]


def parse_every(text: str) -> list[int]:
    """`--every`: distinct integers N ≥ 0 (0: never reconcile)."""
    values = _numbers(text, "--every", int)
    bad = [v for v in values if v < 0]
    if bad:
        raise PlaceError(f"--every {text!r}: {bad[0]} is negative; allowed: N ≥ 0 (0 = never)")
    return values


def parse_core(text: str | None) -> tuple[str, ...] | str | None:
    if text is None or text == "all":
        return text
    names = tuple(s.strip() for s in text.split(",") if s.strip())
    if not names:
        raise PlaceError(f"--core {text!r}: empty; allowed: all, or a comma list of predicates")
    return names


def cmd_drift(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from place.drift.run import DriftHeader, Grid, preload, run_grid, trajectory_info
    from place.drift.stats import dumps, jsonl_text, summarize
    from place.reference.validate import load_trajectory
    from place.runner.config import SeedsConfig
    from place.runner.manifest import git_state

    eps, every = parse_eps(args.eps), parse_every(args.every)
    if args.seeds < 1:
        raise PlaceError(f"--seeds {args.seeds}: allowed: at least 1")
    if args.jobs < 1:
        raise PlaceError(f"--jobs {args.jobs}: allowed: at least 1")
    core = parse_core(args.core)
    infos, ids = [], set()
    for path in args.files:
        traj = load_trajectory(path)
        if traj.id in ids:
            raise PlaceError(f"{path}: trajectory id {traj.id!r} given twice; allowed: distinct")
        ids.add(traj.id)
        if isinstance(core, tuple):
            unknown = [p for p in core if p not in traj.schema.predicates]
            if unknown:
                allowed = ", ".join(traj.schema.predicates)
                raise PlaceError(
                    f"--core: {unknown[0]!r} is not a predicate of {path}; allowed: all, or "
                    f"some of {allowed}"
                )
        horizon = preload(path, traj, core, not args.no_gate).horizon
        if horizon == 0:
            raise PlaceError(
                f"{path}: no post-update checkpoint (no turn with events); allowed: a "
                "trajectory with at least one"
            )
        infos.append(trajectory_info(path, traj, horizon))
    out = Path(args.out or Path("experiments") / "drift" / Path(args.files[0]).stem)
    if out.exists() and not out.is_dir():
        raise PlaceError(f"--out {out}: exists and is not a directory; allowed: a directory")

    seeds = SeedsConfig()
    git = git_state(Path(__file__).resolve().parents[2])
    header = DriftHeader(
        trajectories=infos,
        eps=eps,
        every=every,
        seeds=args.seeds,
        core=list(core) if isinstance(core, tuple) else core,
        gate=not args.no_gate,
        bootstrap_seed=seeds.bootstrap,
        resamples=seeds.resamples,
        git_commit=git["commit"],
        git_dirty=git["dirty"],
    )
    grid = Grid(tuple(args.files), tuple(eps), tuple(every), args.seeds, core, not args.no_gate)
    total = len(infos) * len(eps) * len(every) * args.seeds
    with tqdm(
        total=total, unit="run", disable=True if args.no_progress else None, file=sys.stderr
    ) as bar:

        def advance(done: int, _total: int) -> None:
            bar.update(done - bar.n)

        rows = run_grid(grid, args.jobs, advance)
    doc = summarize(header, rows)
    _write(out, jsonl_text(header, rows), dumps(doc), doc)
    _print(doc, out)
    return 0


def _write(out: Path, jsonl: str, json_text: str, doc: dict) -> None:
    from place import atomic
    from place.drift.plot import write_plot

    out.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".drift.png.", suffix=".png", dir=out)
    os.close(fd)
    try:
        write_plot(doc, Path(tmp))
        atomic.write_text(out / "drift.jsonl", jsonl)
        atomic.write_text(out / "drift.json", json_text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out / "drift.png")
    finally:
        Path(tmp).unlink(missing_ok=True)


def _fmt(stat: dict) -> str:
    est, ci = stat["estimate"], stat["interval"]
    if est is None:
        return "n/a"
    return f"{est:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci is not None else "")


def _print(doc: dict, out: Path) -> None:
    print(f"{out}: drift.json, drift.jsonl, drift.png ({doc['violations']} violations)")
    print(
        f"{'trajectory':<12} {'eps':>5} {'N':>3}  {'D_T':<21} {'max_t mean D (N*eps)':<29} "
        f"{'window peak ((N-1)eps)':<29} {'time mean ((N-1)eps/2)':<30} {'slope':<24} viol"
    )
    for c in doc["cells"]:
        exp = c["expected"]
        n_eps = "" if exp["N_eps"] is None else f" ({exp['N_eps']:.2f})"
        peak = "" if exp["window_peak"] is None else f" ({exp['window_peak']:.2f})"
        half = "" if exp["half_window"] is None else f" ({exp['half_window']:.3f})"
        phase = "-" if c["phase_max_mean_D"] is None else _fmt(c["phase_max_mean_D"]) + peak
        print(
            f"{c['trajectory']:<12} {c['eps']:>5g} {c['every']:>3}  {_fmt(c['D_T']):<21} "
            f"{_fmt(c['max_mean_D']) + n_eps:<29} {phase:<29} "
            f"{_fmt(c['time_mean_D']) + half:<30} {_fmt(c['slope']):<24} {c['violations']}"
        )
