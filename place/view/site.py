"""Write the static site: `index.html` (a jinja2 template), the page's own CSS and JS,
`data.js`, the runs' PNG plots and the summaries' PNG figures, into a fresh directory that
replaces `--out` only once it is complete.

The data is a script (`data.js` assigns `window.PLACE_VIEW`) rather than a JSON file the
page fetches, because a browser refuses `fetch` of a `file://` URL: so the site opens from
the disk, with no server, and nothing in it reaches the network. The site is built in a
temporary sibling of `--out` and moved into place, so a failure leaves `--out` as it was
(absent, or the previous site) and never half-written.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from place.errors import PlaceError
from place.view.load import LoadedRun
from place.view.summary import LoadedSummary

ASSETS = ("app.js", "style.css")
"""The page's own files, shipped in place/view/assets (package data)."""
DATA_JS = "data.js"
DATA_PREFIX = "window.PLACE_VIEW = "
"""data.js is this, then the document as JSON, then `;` and a newline."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def data_js(doc: dict[str, Any]) -> bytes:
    body = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return f"{DATA_PREFIX}{body};\n".encode()


def index_html(doc: dict[str, Any]) -> str:
    """index.html: the shell the script fills, with the runs listed for a reader without
    JavaScript."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("place.view", "templates"),
        autoescape=True,
        keep_trailing_newline=True,
    )
    runs = [{"label": r["label"], "path": r["header"]["path"]} for r in doc["runs"]]
    runs += [{"label": s["label"], "path": s["path"]} for s in doc.get("summaries", [])]
    return env.get_template("index.html").render(
        runs=runs, version=doc["place_version"], assets=ASSETS, data=DATA_JS
    )


def write_tree(
    into: Path,
    doc: dict[str, Any],
    runs: Sequence[LoadedRun],
    summaries: Sequence[LoadedSummary] = (),
) -> None:
    """Every file of the site, into an existing empty directory."""
    (into / "index.html").write_text(index_html(doc), encoding="utf-8")
    (into / DATA_JS).write_bytes(data_js(doc))
    assets = resources.files("place.view") / "assets"
    for name in ASSETS:
        (into / name).write_bytes((assets / name).read_bytes())
    for i, run in enumerate(runs):
        if run.plots:
            plots = into / "runs" / str(i) / "plots"
            plots.mkdir(parents=True)
            for p in run.plots:
                (plots / p.name).write_bytes(p.read_bytes())
    for i, summary in enumerate(summaries):
        if summary.figures:
            figs = into / "summaries" / str(i)
            figs.mkdir(parents=True)
            for p in summary.figures:
                (figs / p.name).write_bytes(p.read_bytes())


def check_out(
    out: Path,
    force: bool,
    runs: Sequence[LoadedRun],
    summaries: Sequence[LoadedSummary] = (),
) -> None:
    """Refuse an `--out` that would lose something: a file, a non-empty directory without
    `--force`, and (even with `--force`) a run or summary directory or a directory holding
    one."""
    if out.exists() and not out.is_dir():
        raise PlaceError(f"--out {out}: is a file; allowed: a new or empty directory")
    target = out.resolve()
    shown = [("run", r.path) for r in runs] + [("summary", s.path) for s in summaries]
    for what, path in shown:
        here = path.resolve()
        if here == target or target in here.parents:
            raise PlaceError(
                f"--out {out}: holds the {what} {path}, which replacing it would delete; "
                "allowed: a directory outside every RUN_DIR"
            )
    if out.is_dir() and any(out.iterdir()) and not force:
        raise PlaceError(
            f"--out {out}: exists and is not empty; give --force to replace it, or a new directory"
        )


def publish(
    out: Path,
    doc: dict[str, Any],
    runs: Sequence[LoadedRun],
    force: bool,
    summaries: Sequence[LoadedSummary] = (),
) -> None:
    """Build the site in a temporary sibling of `out`, then move it into place (replacing
    a previous `out` with `force`); on any failure `out` is left as it was."""
    check_out(out, force, runs, summaries)
    parent = out.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    old: Path | None = None
    try:
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp's 0700 would make the site private
        write_tree(tmp, doc, runs, summaries)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=parent))
            os.replace(out, old / out.name)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and not out.exists() and (old / out.name).exists():
            os.replace(old / out.name, out)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def site_size(out: Path) -> int:
    """Bytes of every file of a written site."""
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
