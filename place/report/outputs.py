"""Writing a summary's files: the full-precision CSV and a PNG whose bytes depend only on
the inputs. Shared by `place compare --replications` and `--dose-response`."""

from __future__ import annotations

import io
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from place import atomic


def write_summary_csv(summary: pd.DataFrame, path: Path) -> None:
    """The whole summary at full precision, each row's bootstrap `values` as a JSON list."""
    full = summary.assign(values=[json.dumps(v) for v in summary["values"]])
    atomic.write_text(path, full.to_csv(index=False, lineterminator="\n"))


def save_png(fig: Figure, path: Path, dpi: int) -> None:
    """Save `fig` to `path` at once or not at all, and close it. No Software entry: the PNG
    then holds no matplotlib version, so its bytes depend on the inputs only (matplotlib
    writes no date into a PNG)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    plt.close(fig)
    atomic.write_bytes(path, buf.getvalue())
