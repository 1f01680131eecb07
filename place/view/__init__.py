"""`place view`: an offline results viewer for recorded runs (docs/viewer.md).

The figures a researcher doubts (a leakage pair, an exposure, a scorecard cell, a residue)
are answered by the per-item records; this package turns one or more run directories into
a static site that shows them, opened from `file://` with nothing fetched from the network;
summary directories (`place compare --replications`/`--dose-response`, `place drift`) are
shown beside them as their tables and figures. One module per job: `load` (find and read
runs), `summary` (read summaries), `tables` (their tables), `items` and
`compare` (the per-item and cross-run data), `data` (the document), `site` (write it),
`serve` (an optional local server), `cli` (the subcommand).
"""
