"""One drift run, and the grid of them (docs/method.md §13; docs/drift.md).

A run (trajectory, ε, N, seed) walks the trajectory's world-a turns in order. Every delivered
turn (a redelivery is not: SSGM's log V skips it) is appended to the in-memory log and
observed by M. At each world-a post-update checkpoint t (1-based) the seed's draws may
corrupt M, then, if N > 0 and t % N == 0, reconciliation replaces M by the log's replay, and
the step is measured against S*_t and against the twin (the ε = 0 run with the same N).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from place.drift.corruption import Corruption, Draws, corrupt
from place.governance.ssgm_gate import core_predicates
from place.governance.ssgm_memory import Observed, SSGMMemory, redact_log
from place.lexicon import Lexicon
from place.reference.replay import Checkpoint, replay
from place.trajectory.model import Fact, Schema, Slot, Trajectory

DRIFT_SCHEMA = "place-drift/1"
"""Version of drift.jsonl and drift.json."""

SlotValues = dict[Slot, frozenset[str]]
"""A state as value sets per slot (only slots holding a value)."""


class DriftHeader(BaseModel):
    """The first line of drift.jsonl: what was run, enough to recompute drift.json."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    schema_: str = Field(DRIFT_SCHEMA, alias="schema")
    """Version of the layout."""
    kind: str = "header"
    """Always `header` (the line every other line is not)."""
    trajectories: list[TrajectoryInfo]
    """The trajectories run, in command-line order."""
    eps: list[float]
    """Corruption probabilities ε, in command-line order (0 is always among them: the twin)."""
    every: list[int]
    """Reconciliation periods N (0: never), in command-line order."""
    seeds: int
    """Seeds 0 .. seeds-1 were run for every (trajectory, ε, N)."""
    core: list[str] | str | None
    """`--core`: `all`, a list of predicates, or null for the schema's `core` flags."""
    gate: bool
    """Whether the core write gate was on."""
    bootstrap_seed: int
    """Seed of the seed-bootstrap intervals (`seeds.bootstrap`)."""
    resamples: int
    """Bootstrap resamples per interval."""
    git_commit: str | None
    """HEAD of the repository the code ran from (null: not a git checkout)."""
    git_dirty: bool | None
    """Whether tracked files differed from HEAD (null: unknown)."""


class TrajectoryInfo(BaseModel):
    """One trajectory of the run."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    """The trajectory's `id`."""
    path: str
    """The path as given on the command line."""
    sha256: str
    """sha256 of the file's bytes."""
    checkpoints: int
    """T: its world-a post-update checkpoints."""


DriftHeader.model_rebuild()


class DriftRow(BaseModel):
    """One world-a post-update checkpoint of one run (trajectory, ε, N, seed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    trajectory: str
    """The trajectory's `id`."""
    eps: float
    """ε of the run."""
    every: int
    """N of the run (0: never reconciled)."""
    seed: int
    """Seed of the run's draws."""
    t: int
    """1-based index of the checkpoint among the world-a post-update checkpoints."""
    turn: str
    """The turn after which the checkpoint is taken."""
    date: str
    """Its date (ISO); S^phys and S* are taken as of it."""
    corrupted: tuple[tuple[str, str, str], str, str] | None
    """[[entity, predicate, scope], from, to] when this step corrupted M, else null."""
    reconciled: bool
    """Whether reconciliation ran at this step (after the corruption)."""
    C: int
    """Corruptions since the last reconciliation, this step's included (0 after one)."""
    D: int
    """D^c_t: slots whose S^phys value set differs from the twin's at this step."""
    differ: int
    """|{σ ∈ Σ_t : S^phys_t(σ) ≠ S*_t(σ)}|."""
    sigma: int
    """|Σ_t|: slots holding a value in S*_t or S^phys_t."""
    delta: float
    """δ_t = differ / sigma (0 when Σ_t is empty)."""
    rejected: int
    """Proposals the gate rejected while observing the turns since the previous checkpoint."""
    skipped: int
    """Proposals skipped (no longer apply to M, or not memory writes) over those turns."""
    replay_rejected: int
    """Rejected during this step's reconciliation replay (0 without one)."""
    replay_skipped: int
    """Skipped during this step's reconciliation replay (0 without one)."""


ForgetValues = dict[str, tuple[str, ...]]
"""forget event id -> the values its redaction removes from the log."""


@dataclass(frozen=True)
class Step:
    """One measured checkpoint of a run, before it is compared with the twin."""

    t: int
    checkpoint: Checkpoint
    corruption: Corruption | None
    reconciled: bool
    since: int
    phys: SlotValues
    rejected: int
    skipped: int
    replay_rejected: int
    replay_skipped: int
    forgets: ForgetValues
    """What each forget so far redacted (event id -> values)."""


def by_slot(facts: frozenset[Fact]) -> SlotValues:
    out: dict[Slot, set[str]] = {}
    for f in facts:
        out.setdefault(Slot(f.entity, f.predicate, f.scope), set()).add(f.value)
    return {s: frozenset(v) for s, v in out.items()}


def differing(left: SlotValues, right: SlotValues) -> int:
    """Slots whose value sets differ (a slot absent on one side holds the empty set)."""
    empty: frozenset[str] = frozenset()
    return sum(1 for s in left.keys() | right.keys() if left.get(s, empty) != right.get(s, empty))


@dataclass
class Prepared:
    """What every run of one trajectory shares: the walk's turns and the reference."""

    trajectory: Trajectory
    post_update: dict[str, Checkpoint]
    """World-a post-update checkpoints by turn (a turn has at most one)."""
    reference: dict[str, SlotValues]
    """S*_t by turn, as value sets."""
    turns: list[tuple[Observed | None, str]]
    """Every world-a turn in order: as observed (None for a redelivery) and its id."""

    @classmethod
    def of(cls, traj: Trajectory) -> Prepared:
        post = {c.turn: c for c in replay(traj).checkpoints if c.kind == "post-update"}
        turns: list[tuple[Observed | None, str]] = []
        for conv, turn in traj.turns():
            observed = None
            if turn.redelivers is None:
                observed = Observed.delivered(turn, traj.speaker_of(turn), conv)
            turns.append((observed, turn.id))
        return cls(traj, post, {t: by_slot(c.state) for t, c in post.items()}, turns)

    @property
    def horizon(self) -> int:
        return len(self.post_update)


@dataclass
class Twin:
    """The ε = 0 run with one N: its S^phys per step, and what each of its forgets redacted."""

    states: list[SlotValues]
    forgets: ForgetValues


def walk(
    prep: Prepared,
    eps: float,
    every: int,
    seed: int,
    core: frozenset[str],
    gate: bool = True,
    forgets: ForgetValues | None = None,
) -> Iterator[Step]:
    """The steps of one run, in checkpoint order.

    A forget redacts the log of the values it deletes (the slot's records in M and every
    value proposed for the slot, `Observation.forgotten`), as the `ssgm` producer redacts
    V. With `forgets` (the twin's), those of the uncorrupted M are used
    instead: the log is the ledger, and a corruption of M must not reach it, so a corrupted
    run's log is exactly its twin's (docs/decisions.md, "Drift (§13)"). Without, the values
    each forget redacted are recorded into `Step.forgets` of the step that follows."""
    traj = prep.trajectory
    schema: Schema = traj.schema
    memory = SSGMMemory(schema, traj.principal, core, gate)
    lexicon = Lexicon(schema, traj.principal)
    draws = Draws(seed)
    log: list[Observed] = []
    redacted: ForgetValues = {}
    t = since = rejected = skipped = 0
    for observed, turn_id in prep.turns:
        if observed is not None:
            log.append(observed)
            seen = memory.observe(observed)
            rejected += len(seen.rejected)
            skipped += len(seen.skipped)
            for event, deleted in seen.forgotten:
                values = deleted if forgets is None else forgets.get(event.id, ())
                redacted[event.id] = values
                if values:
                    log = redact_log(log, event, values, lexicon)
        checkpoint = prep.post_update.get(turn_id)
        if checkpoint is None:
            continue
        t += 1
        draw = draws.next()  # always drawn: the draws are shared across ε and N
        corruption = corrupt(memory, draw) if draw.u < eps else None
        if corruption is not None:
            since += 1
        reconciled = every > 0 and t % every == 0
        replay_rejected = replay_skipped = 0
        if reconciled:
            memory, replayed = memory.replay(log)
            replay_rejected, replay_skipped = len(replayed.rejected), len(replayed.skipped)
            since = 0
        yield Step(
            t,
            checkpoint,
            corruption,
            reconciled,
            since,
            by_slot(memory.state_at(checkpoint.date)),
            rejected,
            skipped,
            replay_rejected,
            replay_skipped,
            dict(redacted),
        )
        rejected = skipped = 0


def run_rows(
    prep: Prepared,
    eps: float,
    every: int,
    seed: int,
    core: frozenset[str],
    twin: Twin,
    gate: bool = True,
) -> list[DriftRow]:
    """One run's rows, D^c against `twin` (the ε = 0 run with the same N)."""
    rows = []
    for step in walk(prep, eps, every, seed, core, gate, twin.forgets):
        differ = differing(step.phys, prep.reference[step.checkpoint.turn])
        sigma = len(step.phys.keys() | prep.reference[step.checkpoint.turn].keys())
        c = step.corruption
        rows.append(
            DriftRow(
                trajectory=prep.trajectory.id,
                eps=eps,
                every=every,
                seed=seed,
                t=step.t,
                turn=step.checkpoint.turn,
                date=step.checkpoint.date.isoformat(),
                corrupted=None if c is None else (tuple(c.slot), c.old, c.new),
                reconciled=step.reconciled,
                C=step.since,
                D=differing(step.phys, twin.states[step.t - 1]),
                differ=differ,
                sigma=sigma,
                delta=differ / sigma if sigma else 0.0,
                rejected=step.rejected,
                skipped=step.skipped,
                replay_rejected=step.replay_rejected,
                replay_skipped=step.replay_skipped,
            )
        )
    return rows


def twin(prep: Prepared, every: int, core: frozenset[str], gate: bool) -> Twin:
    """The ε = 0 run with period `every` (the same for every seed: nothing is corrupted)."""
    states, forgets = [], {}
    for step in walk(prep, 0.0, every, 0, core, gate):
        states.append(step.phys)
        forgets = step.forgets
    return Twin(states, forgets)


# -- the grid ---------------------------------------------------------------------------

CoreArg = tuple[str, ...] | str | None
"""`--core`: a list of predicates, `all`, or None for the schema's flags."""

Key = tuple[int, int, int, int]
"""(trajectory index, ε index, N index, seed)."""


@dataclass(frozen=True)
class Grid:
    """What `place drift` runs: every (trajectory, ε, N, seed) of these."""

    paths: tuple[str, ...]
    eps: tuple[float, ...]
    every: tuple[int, ...]
    seeds: int
    core: CoreArg
    gate: bool = True


_CACHE: dict[tuple[str, CoreArg, bool], tuple[Prepared, frozenset[str], dict[int, Twin]]] = {}
"""Per process and (path, core, gate): the trajectory loaded and replayed, and its twins
walked, once."""


def preload(path: str, traj: Trajectory, core: CoreArg, gate: bool = True) -> Prepared:
    """Put `traj` (just read from `path`) in this process's cache; returns it prepared."""
    _CACHE[(path, core, gate)] = (Prepared.of(traj), core_predicates(traj.schema, core), {})
    return _CACHE[(path, core, gate)][0]


def _prepared(path: str, core: CoreArg, gate: bool, every: int) -> tuple[Prepared, Twin]:
    key = (path, core, gate)
    if key not in _CACHE:
        from place.reference.validate import load_trajectory

        preload(path, load_trajectory(path), core, gate)
    prep, cores, twins = _CACHE[key]
    if every not in twins:
        twins[every] = twin(prep, every, cores, gate)
    return prep, twins[every]


def _job(grid: Grid, key: Key) -> tuple[Key, list[DriftRow]]:
    ti, ei, ni, seed = key
    path, every = grid.paths[ti], grid.every[ni]
    prep, base = _prepared(path, grid.core, grid.gate, every)
    cores = _CACHE[(path, grid.core, grid.gate)][1]
    return key, run_rows(prep, grid.eps[ei], every, seed, cores, base, grid.gate)


def run_grid(
    grid: Grid, jobs: int = 1, progress: Callable[[int, int], None] | None = None
) -> list[DriftRow]:
    """Every run of the grid, rows ordered by (trajectory, ε, N, seed, t) in the grid's
    order; the same whatever `jobs` is."""
    keys = [
        (ti, ei, ni, seed)
        for ti in range(len(grid.paths))
        for ei in range(len(grid.eps))
        for ni in range(len(grid.every))
        for seed in range(grid.seeds)
    ]
    done: dict[Key, list[DriftRow]] = {}
    if jobs <= 1:
        for n, key in enumerate(keys, start=1):
            done[key] = _job(grid, key)[1]
            if progress is not None:
                progress(n, len(keys))
    else:
        # Chunks keep each worker on one trajectory and N for a while (its cache warm).
        with ProcessPoolExecutor(jobs) as pool:
            for n, (key, rows) in enumerate(
                pool.map(_job, [grid] * len(keys), keys, chunksize=max(1, grid.seeds // 2)),
                start=1,
            ):
                done[key] = rows
                if progress is not None:
                    progress(n, len(keys))
    return [row for key in keys for row in done[key]]


def trajectory_info(path: str | Path, traj: Trajectory, horizon: int) -> TrajectoryInfo:
    return TrajectoryInfo(id=traj.id, path=str(path), sha256=traj.sha256, checkpoints=horizon)
