"""`place view RUN_DIR [RUN_DIR ...] --out DIR`: the offline results viewer (docs/viewer.md).

A RUN_DIR is a run directory, a multirun root or a summary directory (`place compare
--replications`/`--dose-response`, `place drift`). Every RUN_DIR is read and checked, and
the whole site computed, before anything is written; the site then replaces `--out` in one
move (place/view/site.py).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "view",
        help="write an offline results viewer (a static site: run header, tables, AOEP "
        "scorecard, every item, comparisons) for run directories, and the tables and figures "
        "of summary directories (docs/viewer.md)",
    )
    p.add_argument(
        "run_dirs",
        nargs="+",
        metavar="RUN_DIR",
        help="run directories (manifest.json and records), multirun roots (their jobs), or "
        "summary directories (replications.md, dose_response.md, distractors.md or "
        "drift.json, with PNG figures)",
    )
    p.add_argument("--out", required=True, help="the site's directory (new or empty)")
    p.add_argument(
        "--force", action="store_true", help="replace --out when it exists and is not empty"
    )
    p.add_argument(
        "--serve",
        action="store_true",
        help="then serve the site on http://127.0.0.1 (Ctrl-C stops); it opens from "
        "file:// without this",
    )
    p.add_argument("--port", type=int, default=8000, help="with --serve: the port (8000)")
    p.set_defaults(func=cmd_view)


def cmd_view(args: argparse.Namespace) -> int:
    from place.view.data import site_data
    from place.view.load import load_inputs
    from place.view.site import check_out, publish, site_size

    started = time.perf_counter()
    out = Path(args.out)
    runs, summaries = load_inputs(args.run_dirs)
    check_out(out, args.force, runs, summaries)  # before the work, so a refusal is immediate
    doc = site_data(runs, summaries)
    publish(out, doc, runs, args.force, summaries)
    items = sum(len(r["rows"]) for r in doc["runs"])
    shown = f"{len(runs)} run(s)" + (f", {len(summaries)} summary(ies)" if summaries else "")
    print(
        f"wrote {out}/index.html: {shown}, {items} item rows, "
        f"{site_size(out) / 1e6:.1f} MB in {time.perf_counter() - started:.1f} s; open "
        f"{(out / 'index.html').absolute().as_uri()}"
    )
    if args.serve:
        from place.view.serve import serve

        return serve(out, args.port)
    return 0
