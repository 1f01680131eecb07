"""`place drift`: the drift experiment of docs/method.md §13 (SSGM's Theorem 1, bounded drift).

SSGM's mutable memory M (place.governance.ssgm_memory) is run alone on a trajectory, in
memory, with no reads, no model and no store (docs/method.md §13). At each world-a post-update
checkpoint a seeded draw may corrupt one active one-valued record of M; every N checkpoints
reconciliation replays the log into a fresh M. What is measured is how far M's state drifts
from the uncorrupted twin (the ε = 0 run with the same N) and from S*.

- `corruption`: the per-checkpoint draws and the corruption they cause;
- `run`: one run (trajectory, ε, N, seed) as rows, and the whole grid;
- `stats`: drift.json from the rows (means, seeded seed-bootstrap intervals, violations);
- `plot`: drift.png; `cli`: the `place drift` subcommand.
"""
