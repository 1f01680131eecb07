"""Extending `place` from outside the package (issue #25, docs/extending.md).

This module alone registers a read policy with a parameter (`fresh`, the example of
docs/extending.md), a producer with a parameter (`userlog`) and an LLM runtime (`dummy`, a
FAKE model: it runs nothing), then runs the extended smoke factorial with them through the
real `place run` (in-process: Hydra, the checks, the runner, the records and the report, on
real Qdrant in local mode and real MiniLM). No file of the package knows these names: each
is one decorated definition here, undone when the module's tests end.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar

import pytest
from annotated_types import Ge, Le

from place.cli import main as place_main
from place.eligibility import Interpretation
from place.governance.authorizer import ReadDecision
from place.memory.item import ReadOnlyStore, WritableStore
from place.params import Doc
from place.policies import POLICIES, PolicyContext, register_policy
from place.producers import PRODUCERS, ProducerContext, StepOutcome, register_producer
from place.producers.registry import written_on
from place.report.report import write_report
from place.runner.app import run_main
from place.runtime.base import (
    Completion,
    GeneratingChat,
    GenerationParameters,
    LLMRuntime,
    ModelIdentity,
)
from place.runtime.embedder import MINILM_DIMS, MINILM_NAME, minilm_mem0_embedder_config
from place.runtime.registry import RUNTIMES, register_runtime
from place.trajectory.model import Compaction, Conversation, Turn

pytestmark = pytest.mark.integration

# --- a read policy with a parameter: the k newest records within an age ----------------------


@dataclass
class FreshParams:
    max_age_days: Annotated[
        int, Ge(0), Le(3650), Doc("fresh: records written more than this many days ago drop.")
    ] = 365


class FreshRead:
    """The k most recently written records (by `written_on`, `written_seq`, then id), none
    older than `max_age_days` before the query's date."""

    name = "fresh"

    def __init__(self, k: int, params: FreshParams) -> None:
        self.k, self.max_age = k, params.max_age_days

    def read(
        self, store: ReadOnlyStore, query: str, tau: Interpretation, day: dt.date
    ) -> ReadDecision:
        oldest = (tau.as_of - dt.timedelta(days=self.max_age)).isoformat()
        pool = [
            item
            for item in store.search_filtered(query, None)
            if str(item.metadata.get("written_on") or "") >= oldest
        ]
        pool.sort(
            key=lambda i: (
                str(i.metadata.get("written_on") or ""),
                int(i.metadata.get("written_seq") or 0),
                i.id,
            ),
            reverse=True,
        )
        return ReadDecision(tuple(pool[: self.k]), admitted=len(pool))


def fresh(context: PolicyContext[FreshParams]) -> FreshRead:
    return FreshRead(context.k, context.params)


# --- a producer with a parameter: the user's own words, cut to a length ---------------------


@dataclass
class UserLogParams:
    max_chars: Annotated[
        int, Ge(10), Le(10_000), Doc("userlog: user turns are stored cut to this many characters.")
    ] = 400


class UserLogWriter:
    """Stores each user turn verbatim (no LLM, no lifecycle, tool turns ignored)."""

    def __init__(self, store: WritableStore, params: UserLogParams) -> None:
        self.store, self.params = store, params

    def write(self, turns: Sequence[Turn], conv: Conversation) -> StepOutcome:
        said = [
            {"role": "user", "content": t.text[: self.params.max_chars]}
            for t in turns
            if t.role == "user"
        ]
        if not said:
            return StepOutcome()
        stored = self.store.add_messages(said, written_on(conv.date))
        return StepOutcome([{"event": "ADD", "memory": text} for text in stored])

    def fork(self, store: WritableStore) -> UserLogWriter:
        return UserLogWriter(store, self.params)

    def resume(self, done: Sequence[tuple[Sequence[Turn], Conversation]]) -> None:
        """All state is in the store."""

    def compact(self, entry: Compaction, day: dt.date) -> StepOutcome:
        """Keeps no summaries (a compaction point writes nothing)."""
        return StepOutcome()


def userlog(store: WritableStore, context: ProducerContext[UserLogParams]) -> UserLogWriter:
    return UserLogWriter(store, context.params)


# --- a runtime: a FAKE model that echoes what it is shown ------------------------------------

_ITEM = re.compile(r"^- (.*)$", re.MULTILINE)


class EchoChat(GeneratingChat):
    """FAKE chat model: Mem0's fact extraction gets no facts; an answer prompt gets the
    memory items it shows, joined, or "unknown"."""

    parameters: ClassVar[dict[str, Any]] = {"fake": "echo"}

    def generate(
        self,
        messages: list[dict[str, Any]],
        *,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        if response_format is not None:  # Mem0 asks for JSON; the answer prompt does not
            return Completion('{"facts": []}', "stop")
        shown = _ITEM.findall(messages[-1]["content"])
        return Completion(" ".join(shown) if shown else "unknown", "stop")


class DummyRuntime(LLMRuntime):
    """FAKE runtime: no server; the chat model is `EchoChat`, the embedder real MiniLM."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self._chat = EchoChat()

    def start(self) -> None: ...

    def close(self) -> None: ...

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity(
            runtime="dummy",
            name="echo",
            identity="fake:echo",
            embedder_name=MINILM_NAME,
            embedder_identity="fake:minilm",
            embedding_dims=MINILM_DIMS,
            parameters=GenerationParameters(
                seed=int(self.model.seed), max_tokens=int(self.model.max_tokens)
            ),
        )

    @property
    def chat(self) -> EchoChat:
        return self._chat

    def mem0_llm_config(self) -> dict[str, Any]:
        # Mem0 needs a config to build; the runner puts this runtime's chat in its place.
        return {
            "provider": "openai",
            "config": {"model": "unused", "api_key": "sk-unused"},
        }

    def mem0_embedder_config(self) -> dict[str, Any]:
        return minilm_mem0_embedder_config()

    @property
    def embedding_dims(self) -> int:
        return MINILM_DIMS

    def doctor(self) -> dict[str, Any]:
        return {"model": self.model.name, "runtime": "dummy (a fake)", "problems": []}

    def token_counter(self) -> Callable[[str], int]:
        return lambda text: len(text) // 3 + 1


def dummy(model: Any, run_dir: Path, retry: Any) -> LLMRuntime:
    return DummyRuntime(model)


# --- registered for this module only ----------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def registered() -> Iterator[None]:
    with POLICIES.scoped(), PRODUCERS.scoped(), RUNTIMES.scoped():
        register_policy("fresh", params=FreshParams, display="Fresh")(fresh)
        register_producer("userlog", params=UserLogParams, display="UserLog")(userlog)
        register_runtime("dummy")(dummy)
        yield


DESIGN = [
    "design.name=ext",
    "design.producers=[native,append,css,userlog]",
    "design.policies=[native,posthoc,decay,qasc,fresh]",
]
MODEL = ["model.name=echo", "model.runtime=dummy"]


def place_run(run_dir: Path, *overrides: str) -> int:
    return run_main(
        [*DESIGN, *MODEL, "progress=false", f"hydra.run.dir={run_dir}", *overrides],
        report=write_report,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The extended smoke factorial plus the new producer and policy, on smoke and on one
    generated trajectory (two trajectories: a replication study)."""
    root = tmp_path_factory.mktemp("ext")
    out = {"smoke": root / "smoke", "generated": root / "generated"}
    assert place_run(out["smoke"], "trajectory=smoke", "design.fresh.max_age_days=30") == 0
    assert (
        place_run(
            out["generated"],
            "trajectory=generated",
            "trajectory.seed=3",
            "experiment=primary",
        )
        == 0
    )
    return out


def table_rows(table: Path) -> list[dict[str, str]]:
    """A table's CSV rows by header, past its `#` banner and note lines."""
    lines = [line for line in table.read_text().splitlines() if not line.startswith("#")]
    return list(csv.DictReader(lines))


def conditions_of(table: Path) -> set[str]:
    return {row["Condition"] for row in table_rows(table)}


NEW = ("UserLog/Native", "UserLog/QASC", "UserLog/Fresh", "Native/Fresh", "CSS/Fresh")


def test_the_new_conditions_run_and_appear_in_table_1(runs: dict[str, Path]) -> None:
    metrics = json.loads((runs["smoke"] / "metrics.json").read_text())
    conditions = [c[0] for c in metrics["design"]["conditions"]]
    assert len(conditions) == 4 * 5
    assert set(NEW) <= set(conditions)
    assert metrics["factorization"]["ok"]
    assert set(NEW) <= conditions_of(runs["smoke"] / "tables" / "table1a.csv")
    # The new producer's store holds the user's words: its state is read by β like Append's.
    assert metrics["conditions"]["UserLog/Native"]["state_correctness"] is not None


def test_the_new_producer_and_policy_have_their_effects(runs: dict[str, Path]) -> None:
    effects = json.loads((runs["smoke"] / "metrics.json").read_text())["effects"]
    for name in ("StateGain_UserLog", "LeakageDrop_UserLog", "SupportCost_Fresh"):
        assert name in effects, sorted(effects)
    assert "ExposureGap_Fresh" in effects
    header = table_rows(runs["smoke"] / "tables" / "table1b.csv")[0].keys()
    assert {"SupportCost_Fresh", "StateGain_UserLog"} <= set(header)


def test_the_new_conditions_are_scored_on_the_aoep_scorecard(runs: dict[str, Path]) -> None:
    aoep = json.loads((runs["smoke"] / "metrics.json").read_text())["aoep"]
    for name in NEW:
        assert aoep[name]["obligations"]["total"] > 0
        assert aoep[name]["invariants"]["total"] > 0
    assert set(NEW) <= conditions_of(runs["smoke"] / "tables" / "aoep.csv")


def test_the_new_conditions_enter_a_replication_study(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "study"
    code = place_main(
        ["compare", "--replications", str(runs["smoke"]), str(runs["generated"]), "--out", str(out)]
    )
    assert code == 0, capsys.readouterr().err
    assert set(NEW) <= conditions_of(out / "replications_endpoints.csv")
    effects = {row["Effect"] for row in table_rows(out / "replications_effects.csv")}
    assert {"SupportCost_Fresh", "StateGain_UserLog"} <= effects


def test_parameters_are_recorded_in_the_manifest(runs: dict[str, Path]) -> None:
    manifest = json.loads((runs["smoke"] / "manifest.json").read_text())
    assert manifest["parameters"]["fresh"] == {"max_age_days": 30}
    assert manifest["parameters"]["userlog"] == {"max_chars": 400}  # the declared default
    assert manifest["parameters"]["decay"] == {"eta": 30.0, "kappa": 1.5, "theta": 0.1}
    assert manifest["config"]["design"]["fresh"] == {"max_age_days": 30}
    assert manifest["header"]["model"]["runtime"] == "dummy"
    assert manifest["model_identity"]["runtime"] == "dummy"


@pytest.mark.parametrize(
    ("override", "allowed"),
    [
        ("design.fresh.max_age_days=-1", "an integer from 0 to 3650"),
        ("design.fresh.max_age_days=4000", "an integer from 0 to 3650"),
        ("design.userlog.max_chars=5", "an integer from 10 to 10000"),
    ],
)
def test_out_of_bounds_parameters_are_refused_before_anything_runs(
    override: str, allowed: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "never"
    assert place_run(run_dir, "trajectory=smoke", override) == 2
    err = capsys.readouterr().err
    assert f"{override}: must be {allowed}" in err, err
    assert not run_dir.exists()
    assert "Traceback" not in err


def test_the_new_parameters_are_documented_like_every_key() -> None:
    from place.runner.checks import configuration_markdown

    doc = configuration_markdown()
    assert "`design.fresh.max_age_days` | `365` | an integer from 0 to 3650" in doc
    assert "`design.userlog.max_chars` | `400` | an integer from 10 to 10000" in doc
    assert "one of: llamacpp, ollama, dummy" in doc


def test_an_unregistered_name_is_refused_with_the_registered_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert place_run(tmp_path / "x", "trajectory=smoke", "model.runtime=dumy") == 2
    err = capsys.readouterr().err
    assert "model.runtime=dumy: must be one of: llamacpp, ollama, dummy" in err, err


def test_the_documented_policy_module_registers_and_reads(tmp_path: Path) -> None:
    """docs/extending.md's worked example, executed as written: it registers `fresh` with its
    parameter set, and the policy it builds reads the k newest records within the age."""
    from place.policies import build_policy
    from place.readback import Readback

    doc = (Path(__file__).resolve().parents[2] / "docs" / "extending.md").read_text()
    code = re.search(r"```python\n(# place/policies/fresh\.py\n.*?)```", doc, re.S)
    assert code is not None, "the worked example is gone from docs/extending.md"
    module = types.ModuleType("doc_fresh")  # a real module: its dataclass resolves names
    with POLICIES.scoped(), pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, module.__name__, module)
        POLICIES.remove("fresh")  # this module's own registration, replaced by the doc's
        exec(compile(code.group(1), "docs/extending.md", "exec"), module.__dict__)
        spec = POLICIES["fresh"]
        assert spec.display == "Fresh" and spec.params is not None
        assert spec.make_params(None).max_age_days == 365
        policy = build_policy("fresh", 2, Readback(None), {"max_age_days": 10})  # type: ignore[arg-type]  # reason: this policy never calls β
    store = FakeDatedStore(["2024-01-01", "2024-03-01", "2024-03-09", "2024-03-10"])
    tau = Interpretation("ana", "hotel", "global", dt.date(2024, 3, 12))
    read = policy.read(store, "hotel?", tau, tau.as_of)
    assert [i.metadata["written_on"] for i in read.items] == ["2024-03-10", "2024-03-09"]
    assert read.admitted == 2  # 2024-03-01 is older than 10 days
    # one day, two records: the store's record counter, not the id, says which is newer
    same_day = FakeDatedStore(["2024-03-10", "2024-03-10"], seqs=[8, 7])
    assert [i.id for i in policy.read(same_day, "hotel?", tau, tau.as_of).items] == ["r0", "r1"]


class FakeDatedStore:
    """FAKE read-only store: one record per date (numbered in order unless `seqs` says
    otherwise), every search returns them all."""

    name = "fake"
    principal = "ana"

    def __init__(self, dates: list[str], seqs: list[int] | None = None) -> None:
        from place.memory.item import StoredItem

        numbers = seqs or list(range(1, len(dates) + 1))
        self.items = [
            StoredItem(f"r{i}", f"record {i}", {"written_on": d, "written_seq": n}, 1.0 - i / 10)
            for i, (d, n) in enumerate(zip(dates, numbers, strict=True))
        ]

    def search_filtered(self, query: str, limit: int | None, **_: Any) -> list[Any]:
        return list(self.items)
