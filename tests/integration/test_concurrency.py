"""Concurrent answer calls (`answer.concurrency`): the same records, cache and metrics as a
sequential run. The extended factorial on the smoke trajectory, in-process (real runner,
records, report, Qdrant local and MiniLM), with the FAKE answer model behind the real LLM
call cache; each call takes 20 ms, like a server decoding."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from fakes.scripted_chat import ScriptedChat
from inprocess import run_inprocess

from place.design import EXTENDED
from place.reference.validate import load_trajectory
from place.runtime import CachedChatModel, LLMCallCache

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parents[2]
SMOKE = load_trajectory(ROOT / "trajectories" / "smoke.yaml")


def _run(run_dir: Path, concurrency: int) -> tuple[ScriptedChat, dict]:
    chat = ScriptedChat(latency=0.02)
    with LLMCallCache(run_dir / "llm_cache.sqlite") as cache:
        cached = CachedChatModel(chat, cache, "scripted-fake")
        run_inprocess(run_dir, SMOKE, EXTENDED, chat=cached, concurrency=concurrency, plots=False)
        stats = {"hits": cache.hits, "misses": cache.misses}
    return chat, stats


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[Path, ScriptedChat, dict]]:
    out = {}
    for concurrency in (1, 4):
        run_dir = tmp_path_factory.mktemp(f"c{concurrency}") / "run"
        chat, stats = _run(run_dir, concurrency)
        out[concurrency] = (run_dir, chat, stats)
    return out


def _records(run_dir: Path, name: str) -> list[dict]:
    lines = (run_dir / "records" / name).read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    for row in rows:
        row.pop("seconds", None)  # step wall time: the only field that may differ
    return rows


def test_answer_calls_really_overlap(runs) -> None:
    assert runs[1][1].max_in_flight == 1
    assert runs[4][1].max_in_flight > 1


@pytest.mark.parametrize(
    "name", ["checkpoints.jsonl", "queries.jsonl", "probes.jsonl", "steps.jsonl", "forgets.jsonl"]
)
def test_records_and_their_order_are_those_of_the_sequential_run(runs, name: str) -> None:
    assert _records(runs[4][0], name) == _records(runs[1][0], name)


def test_metrics_are_byte_identical(runs) -> None:
    assert (runs[4][0] / "metrics.json").read_bytes() == (runs[1][0] / "metrics.json").read_bytes()


def test_the_cache_makes_the_same_calls(runs) -> None:
    """Single flight: identical prompts in one unit are one model call at any concurrency."""
    assert runs[4][2] == runs[1][2]
    assert len(runs[4][1].calls) == len(runs[1][1].calls) == runs[1][2]["misses"]

    def contents(run_dir: Path) -> dict[str, str]:
        with sqlite3.connect(run_dir / "llm_cache.sqlite") as db:
            return dict(db.execute("SELECT key, response FROM llm_calls"))

    assert contents(runs[4][0]) == contents(runs[1][0])
