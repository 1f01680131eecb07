"""The `place` command line. User errors exit 2 with a message, never a traceback."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TextIO, cast

from place.errors import PlaceError
from place.trajectory.model import FAMILIES, Trajectory

EXIT_USAGE = 2
EXIT_INVALID = 3
"""`place report` on a run whose factorization check failed (the files are still written)."""
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE
"""141: the reader of stdout went away (`place ... | head`) before a command that succeeded had
written everything; the status a shell reports for a process killed by SIGPIPE (`yes | head`)."""


def _summary(path: str, traj: Trajectory) -> str:
    from place.reference.replay import replay

    ref = replay(traj)
    kinds = Counter(c.kind for c in ref.checkpoints)
    families: Counter[str] = Counter(q.family for _, _, q in traj.queries())
    per_family = ", ".join(f"{f} {families[f]}" for f in FAMILIES)  # a Counter: 0 if absent
    pairs = sum(1 for _, _, q in traj.queries() if q.pair_insert is not None)
    conflicts = sum(1 for p in traj.probes if p.conflict is not None)
    forged = sum(1 for p in traj.probes if p.forged is not None)
    return (
        f"{path}: ok: {len(traj.conversations)} conversations, {len(traj.turns())} turns, "
        f"{kinds['post-update']} post-update and {kinds['pre-query']} pre-query checkpoints, "
        f"{sum(families.values())} queries ({per_family}), {pairs} pairs, "
        f"{len(traj.probes)} probes ({conflicts} with conflicts"
        + (f", {forged} forged" if forged else "")
        + ")"
        + (
            f", {len(ref.tasks)} tasks, {kinds['pre-task']} pre-task checkpoints"
            if ref.tasks
            else ""
        )
    )


def cmd_validate(args: argparse.Namespace) -> int:
    from place.reference.validate import load_trajectory

    failed = False
    for path in args.files:
        try:
            traj = load_trajectory(path)
        except PlaceError as exc:
            failed = True
            print(str(exc), file=sys.stderr)
            continue
        print(_summary(path, traj))
    return EXIT_USAGE if failed else 0


def reference_json(traj: Trajectory) -> dict:
    """The `place reference --json` document (sorted lists, checkpoints in trajectory order).
    A trajectory with docs/method.md §11's constructs also gets Γ* at every checkpoint, the
    askers of its queries and probes, and its tasks' reference decisions; any other gets
    exactly the document of §1."""
    from place.reference.replay import replay

    ref = replay(traj)
    doc: dict = {
        "checkpoints": [
            {
                "turn": c.turn,
                "kind": c.kind,
                "date": c.date.isoformat(),
                "state": sorted([list(f) for f in c.state]),
            }
            for c in ref.checkpoints
        ],
        "queries": [
            {
                "id": q.id,
                "authorized": list(q.support.values),
                "authorized_b": list(q.support_b.values) if q.support_b is not None else None,
            }
            for q in ref.queries
        ],
        "probes": [{"id": p.id, "authorized": list(p.support.values)} for p in ref.probes],
    }
    if not traj.governed:
        return doc
    from dataclasses import asdict

    for shown, c in zip(doc["checkpoints"], ref.checkpoints, strict=True):
        shown["governance"] = asdict(c.governance) if c.governance is not None else None
        shown["governance_events"] = [
            {k: v for k, v in asdict(t).items() if v is not None} for t in c.governance_events
        ]
    for shown, q in zip(doc["queries"], ref.queries, strict=True):
        shown["asker"] = q.asker
    for shown, p in zip(doc["probes"], ref.probes, strict=True):
        shown["asker"] = p.asker
    doc["tasks"] = [
        {
            "id": t.id,
            "turn": t.turn,
            "run_turn": t.run_turn,
            "asker": t.asker,
            "handle": t.handle,
            "permission": t.permission,
            "deferred": t.deferred,
            "decision": t.decision,
            "reasons": list(t.reasons),
            "args": [list(a) for a in t.args] if t.args is not None else None,
            "epoch": t.epoch,
            "epoch_at_run": t.epoch_at_run,
            "held": t.held,
            "links": list(t.links),
            "redeliveries": list(t.redeliveries),
        }
        for t in ref.tasks
    ]
    return doc


def cmd_reference(args: argparse.Namespace) -> int:
    from place.reference.validate import load_trajectory

    doc = reference_json(load_trajectory(args.file))
    if args.json:
        print(json.dumps(doc, indent=None if args.compact else 2, ensure_ascii=False))
        return 0
    for c in doc["checkpoints"]:
        print(f"{c['kind']:<11} {c['turn']:<14} {c['date']}  {len(c['state'])} facts")
    for q in doc["queries"]:
        print(f"query {q['id']}: {q['authorized'] or 'ABSTAIN'}")
    for p in doc["probes"]:
        print(f"probe {p['id']}: {p['authorized'] or 'ABSTAIN'}")
    for t in doc.get("tasks", ()):
        outcome = t["args"] if t["decision"] == "allow" else t["reasons"]
        print(f"task {t['id']} ({t['asker']}, runs at {t['run_turn']}): {t['decision']} {outcome}")
    return 0


def cmd_parse(args: argparse.Namespace) -> int:
    from place.lexicon import Lexicon
    from place.lexicon.outcome import outcome
    from place.reference.validate import load_trajectory

    traj = load_trajectory(args.file)
    if args.predicate is not None and args.predicate not in traj.schema.predicates:
        allowed = ", ".join(sorted(traj.schema.predicates))
        raise PlaceError(f"--predicate {args.predicate!r} is not in the schema; allowed: {allowed}")
    lexicon = Lexicon(traj.schema, traj.principal)
    facts = sorted(lexicon.read(args.text, predicate=args.predicate))
    for fact in facts:
        print(f"fact: ({fact.entity}, {fact.predicate}, {fact.value}, {fact.scope})")
    if not facts:
        print("fact: none")
    if args.predicate is not None:
        print(f"outcome: {sorted(outcome(lexicon, args.text, args.predicate))}")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from place.generate import write

    # The generator's atomic write would create missing directories; a typo in --out should
    # not leave a tree of them behind, so the directory must exist already.
    directory = Path(args.out).parent
    if not directory.is_dir():
        what = "is not a directory" if directory.exists() else "does not exist"
        raise PlaceError(
            f"--out {args.out}: the directory {directory} {what}; allowed: a file in an "
            "existing directory (create the directory first)"
        )
    if args.distract is None:
        if args.dose:
            raise PlaceError("--dose needs --distract KINDS (the distractor kinds to add)")
        result = write(args.seed, args.out, design=args.design, filler=args.filler)
        print(_summary(args.out, result.trajectory).replace(": ok:", ": generated:", 1))
        return 0
    from place.atomic import write_text
    from place.generate import generate
    from place.generate.distract import check_kinds, distract_loaded
    from place.trajectory.yaml_source import parse_yaml

    kinds = [k.strip() for k in args.distract.split(",") if k.strip()]
    check_kinds(kinds, args.dose, args.seed)
    suffix = Path(args.out).suffix.lower()
    made = generate(args.seed, args.design, args.filler, suffix=".yaml")
    source = parse_yaml(made.text)
    assert source is not None  # the generator's own YAML
    command = (
        f"place generate --seed {args.seed} --design {args.design} --filler {args.filler} "
        f"--distract {','.join(kinds)} --dose {args.dose}"
    )
    distracted = distract_loaded(
        made.trajectory, source.data, kinds, args.dose, args.seed, suffix, command
    )
    write_text(Path(args.out), distracted.text)
    added = f": generated, {distracted.added} distractor turns:"
    print(_summary(args.out, distracted.trajectory).replace(": ok:", added, 1))
    return 0


def cmd_distract(args: argparse.Namespace) -> int:
    from pathlib import Path

    from place.atomic import write_text
    from place.generate.distract import distract
    from place.trajectory.loader import SUFFIXES

    out = Path(args.out)
    if out.suffix.lower() not in SUFFIXES:
        raise PlaceError(f"--out {args.out}: the output must end in {', '.join(SUFFIXES)}")
    if not out.parent.is_dir():
        raise PlaceError(
            f"--out {args.out}: the directory {out.parent} does not exist; allowed: a file in "
            "an existing directory (create the directory first)"
        )
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    result = distract(args.file, kinds, args.dose, args.seed, suffix=out.suffix.lower())
    write_text(out, result.text)
    added = f": {result.added} distractor turns:"
    print(_summary(args.out, result.trajectory).replace(": ok:", added, 1))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from place.report.report import write_report

    run_dir = Path(args.run_dir)
    metrics = write_report(run_dir, paper=args.paper, plots=not args.no_plots)
    fact = metrics.factorization
    print(
        f"{run_dir}: metrics.json, tables/ and plots/ recomputed from records/ "
        f"(factorization {'ok' if fact.ok else 'FAILED'})"
    )
    print((run_dir / "tables" / "tables.md").read_text(encoding="utf-8"))
    if not fact.ok:
        print(
            f"place report: INVALID: factorization check failed (first mismatch: "
            f"{fact.first_mismatch})",
            file=sys.stderr,
        )
        return EXIT_INVALID
    return 0


def cmd_stability(args: argparse.Namespace) -> int:
    """SSGM's stability-plasticity figure over several runs (docs/method.md §13)."""
    import json
    from pathlib import Path

    from place.report.core_plot import CorePoint, core_figure, core_points
    from place.report.metrics import load_metrics
    from place.report.plots import _save

    points: list[CorePoint] = []
    for raw in args.run_dirs:
        run_dir = Path(raw)
        manifest_path = run_dir / "manifest.json"
        for need in (manifest_path, run_dir / "metrics.json"):
            if not need.is_file():
                raise PlaceError(
                    f"{run_dir}: not a reported run directory (no {need.name}); allowed: the "
                    "directory of a `place run` with ssgm in its design"
                )
        metrics = load_metrics(run_dir / "metrics.json")
        if "ssgm" not in (metrics.design or {}).get("producers", []):
            raise PlaceError(
                f"{run_dir}: its design has no ssgm producer, so no core tallies; allowed: "
                "runs of design=ssgm (or any design with ssgm)"
            )
        parameters = json.loads(manifest_path.read_text(encoding="utf-8")).get("parameters")
        if not parameters or "ssgm" not in parameters:
            raise PlaceError(
                f"{manifest_path}: records no parameters of ssgm (written by an older place); "
                "re-run it with this one"
            )
        suffix = " (gate on)" if parameters["ssgm"]["gate"] else " (gate off)"
        conditions = [list(c) for c in (metrics.design or {}).get("conditions", [])]
        for p in core_points(metrics.aoep or {}, conditions):
            label = p.label + suffix if p.label.startswith("SSGM") else p.label
            if all(q.label != label for q in points):
                points.append(CorePoint(label, p.plasticity, p.stability))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    _save(core_figure(points, "Stability and plasticity of core memory"), out)
    for p in points:
        print(
            f"{p.label}: plasticity {p.plasticity[0]}/{p.plasticity[1]}, "
            f"stability {p.stability[0]}/{p.stability[1]}"
        )
    print(f"wrote {out}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from pathlib import Path

    from place.report.report import recompute, show_paper, write_tables

    if args.replications and args.dose_response:
        raise PlaceError(
            "--dose-response and --replications are different studies (several history "
            "lengths of the same seeds, or one length); give one of them"
        )
    if args.dose_response:
        from place.report import distractors as dis
        from place.report.dose import dose_markdown, group_docs, write_dose
        from place.report.replications import load_docs
        from place.report.tables import to_markdown

        if args.paper:
            raise PlaceError(
                "--paper does not apply with --dose-response (the paper reports one "
                "trajectory); leave out --paper"
            )
        paths, docs = load_docs(args.run_dirs)
        names = [str(p) for p in paths]
        out = Path(args.out or "dose-response")
        # Runs with distractors are a dose axis of kind and dose, not of history length.
        if dis.carries_distractors(docs):
            summary = dis.write_distractors(dis.group_distractors(docs, names), out)
            print(f"_{dis.header_line(summary)}_\n\n{to_markdown(dis.change_table(summary))}")
            print(f"(one table per kind in {out / 'distractors.md'})")
            return 0
        summary = write_dose(group_docs(docs, names), out)
        print(dose_markdown(summary))
        return 0
    if args.replications:
        from place.report.replications import collect, markdown, write_replications

        if args.paper:
            raise PlaceError(
                "--paper does not apply with --replications (the paper reports one "
                "trajectory); leave out --paper"
            )
        docs = [recompute(p) for p in collect(args.run_dirs)]
        out = Path(args.out or "replications")
        summary = write_replications(docs, out)
        print(markdown(docs, summary))
        return 0
    docs = [recompute(Path(d)) for d in args.run_dirs]
    out = Path(args.out or "comparison")
    write_tables(docs, out, paper=show_paper(args.paper, docs))
    print((out / "tables.md").read_text(encoding="utf-8"))
    return 0


def _paper_flags(p: argparse.ArgumentParser) -> None:
    """`--paper` / `--no-paper` (`args.paper`: True, False, or None for the default rule)."""
    paper = p.add_mutually_exclusive_group()
    paper.add_argument(
        "--paper",
        dest="paper",
        action="store_const",
        const=True,
        default=None,
        help="show the paper's published values (labelled as the paper's, and as of another "
        "trajectory when the run is not on trajectories/primary.yaml); default: only for a "
        "run of the paper's trajectory, as `place run` does",
    )
    paper.add_argument(
        "--no-paper", dest="paper", action="store_const", const=False, help="never show them"
    )


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="place", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    # `place run` is handed to Hydra before argparse sees it; listed here for --help only.
    sub.add_parser(
        "run",
        help="run the factorial: place run [key=value ...] [-m] (Hydra); with --check: only "
        "check every value of every job (and the Ollama server), create nothing",
    )

    sub.add_parser(
        "doctor",
        help="what a run's model config will get: place doctor model=qwen2.5-7b "
        "[model.base_url=URL]; asks a live Ollama server for context length and loaded state",
    )

    p = sub.add_parser("validate", help="validate trajectory files")
    p.add_argument("files", nargs="+")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("reference", help="print the reference states and authorized supports")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--compact", action="store_true", help="with --json: no indentation")
    p.set_defaults(func=cmd_reference)

    p = sub.add_parser("parse", help="show what the readback β reads from a text")
    p.add_argument("file", help="trajectory whose schema (lexicon) to use")
    p.add_argument("--text", required=True)
    p.add_argument("--predicate", help="also read TEXT as an answer about this predicate (Ω)")
    p.set_defaults(func=cmd_parse)

    p = sub.add_parser(
        "generate",
        help="write a valid trajectory drawn from the domain library (docs/generator.md)",
    )
    p.add_argument("--seed", type=int, required=True, help="non-negative integer")
    p.add_argument("--out", required=True, help="output file (.yaml, .yml or .json)")
    p.add_argument(
        "--design",
        default="paper",
        help="paper (the paper's counts) or small (a quarter of them, plus a governance story)",
    )
    p.add_argument("--filler", type=int, default=0, help="chatter turns added per conversation")
    p.add_argument(
        "--distract",
        metavar="KINDS",
        help="also add on-topic distractors of these kinds (comma-separated; as `place "
        "distract`, seeded by --seed; docs/method.md §16)",
    )
    p.add_argument("--dose", type=int, default=0, help="with --distract: distractors per kind")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser(
        "distract",
        help="add on-topic distractor turns to a trajectory, its reference unchanged "
        "(docs/method.md §16)",
    )
    p.add_argument("file", help="a valid trajectory (.yaml, .yml or .json)")
    p.add_argument(
        "--kinds",
        required=True,
        help="comma-separated: entity, topic, hypothetical, reported, negated, restate, neutral",
    )
    p.add_argument("--dose", type=int, required=True, help="distractors of each kind")
    p.add_argument("--seed", type=int, default=0, help="non-negative integer (default 0)")
    p.add_argument("--out", required=True, help="output file (.yaml, .yml or .json)")
    p.set_defaults(func=cmd_distract)

    p = sub.add_parser(
        "report", help="recompute metrics, tables and plots of a run from its records"
    )
    p.add_argument("run_dir")
    _paper_flags(p)
    p.add_argument("--no-plots", action="store_true")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "stability",
        help="SSGM's stability-plasticity figure (core tallies) over runs with ssgm, e.g. "
        "gate on and gate off (docs/method.md §13)",
    )
    p.add_argument("run_dirs", nargs="+", metavar="DIR")
    p.add_argument("--out", default="core.png", help="the PNG to write (default: core.png)")
    p.set_defaults(func=cmd_stability)

    p = sub.add_parser(
        "compare",
        help="one table per model scale from several runs; with --replications: a replication "
        "study (one design on N trajectories, docs/replications.md); with --dose-response: "
        "the same seeds at several history lengths, or at several distractor kinds and doses",
    )
    p.add_argument(
        "run_dirs",
        nargs="+",
        metavar="DIR",
        help="run directories; with --replications or --dose-response also Hydra multirun "
        "roots (their jobs)",
    )
    p.add_argument(
        "--out",
        default=None,
        help="directory for the combined tables (default: comparison, or replications with "
        "--replications, or dose-response with --dose-response)",
    )
    _paper_flags(p)
    p.add_argument(
        "--replications",
        action="store_true",
        help="the runs are replications (same design and model, different trajectories): "
        "mean, 95 %% trajectory-bootstrap interval and spread of every endpoint and effect",
    )
    p.add_argument(
        "--dose-response",
        action="store_true",
        help="the runs are one design and model on the same generated seeds at several "
        "history lengths (trajectory.filler): per length the mean and 95 %% "
        "trajectory-bootstrap interval, and the paired change longest - shortest "
        "(docs/replications.md); default --out: dose-response",
    )
    p.set_defaults(func=cmd_compare)

    from place.drift.cli import add_parser as add_drift_parser

    add_drift_parser(sub)

    from place.view.cli import add_parser as add_view_parser

    add_view_parser(sub)

    from place.validation import agree, export

    p = sub.add_parser(
        "outcomes",
        help="human validation of Ω: export answers to label, measure agreement with the "
        "labels (docs/validation.md)",
    )
    outcomes = p.add_subparsers(dest="outcomes_command", required=True)
    export.add_parser(outcomes)
    agree.add_parser(outcomes)
    return parser


def _hydra_command(name: str) -> Callable[[Sequence[str]], int] | None:
    """Commands handed to Hydra-driven entry points, which parse their own arguments."""
    if name == "run":
        from place.report.report import write_report
        from place.runner.app import run_main

        return lambda argv: run_main(argv, report=write_report)
    if name == "doctor":
        from place.runner.doctor import doctor_main

        return doctor_main
    return None


def _dispatch(argv: list[str]) -> int:
    try:
        if argv and (hydra_cmd := _hydra_command(argv[0])) is not None:
            guard = _StdoutGuard(sys.stdout)
            sys.stdout = cast(TextIO, guard)
            try:
                code = hydra_cmd(argv[1:])
            finally:
                sys.stdout = guard.stream
            return EXIT_BROKEN_PIPE if guard.broken and code == 0 else code
        args = _build_parser().parse_args(argv)
        return int(args.func(args))
    except PlaceError as exc:
        print(f"place: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("place: interrupted", file=sys.stderr)
        return 130


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    code = 0
    try:
        # Piped, stdout is block-buffered: a reader that has gone shows up at these flushes,
        # inside the handler below, rather than at the interpreter's own flush on exit.
        try:
            code = _dispatch(argv)
        except SystemExit as exc:  # argparse's --help and usage errors, Hydra's own exits
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
            sys.stdout.flush()
            raise
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # `place ... | head`: the reader closed the pipe. Point the broken stream(s) at
        # /dev/null and exit 141 (128 + SIGPIPE: what a shell reports for a process killed by
        # SIGPIPE, e.g. `yes | head`); a command that had failed keeps its own status.
        _discard_broken_streams()
        return code or EXIT_BROKEN_PIPE


def _discard_broken_streams() -> None:
    """Point stdout and stderr, whichever is a closed pipe, at /dev/null, so that the
    interpreter's final flush of what is still buffered does not raise BrokenPipeError again
    (it would print "Exception ignored ... BrokenPipeError" and exit 120). A stream that
    still flushes (stderr on a terminal) is left as it is."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            _to_devnull(stream)
        except (OSError, ValueError):  # closed or detached: nothing left to flush
            pass


def _to_devnull(stream: TextIO) -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError):  # no file descriptor of its own (e.g. a captured stream)
        pass


class _StdoutGuard:
    """sys.stdout while a Hydra-driven command (`run`, `doctor`) runs. Hydra catches what its
    app raises and prints a traceback (`run --cfg job` writes inside that catch), and logging
    prints one for every line of Hydra's launch log it fails to write, so a BrokenPipeError
    never reaches `main` from there. The guard handles it where it happens: the write is
    dropped, stdout is pointed at /dev/null, and the command exits 141 if it otherwise
    succeeded (a failed command keeps its own status)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.broken = False

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            self._closed()
            return len(text)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            self._closed()

    def _closed(self) -> None:
        self.broken = True
        _to_devnull(self.stream)

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, ...
        return getattr(self.stream, name)


if __name__ == "__main__":
    sys.exit(main())
