"""Issue 15's acceptance: `place run` on the smoke trajectory with the paper's model config
(Ollama runtime) against the FAKE Ollama server, at answer.concurrency 1 and 4: the same
records, in the same order, and byte-identical metrics. The fake answers by echoing the
memory items it is shown and embeds by hashed words, so answers depend on what each read
exposed; each chat request takes 50 ms, and the fake counts how many overlap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.ollama_server import FakeOllamaServer
from smoke_runs import finish, place_run

pytestmark = [pytest.mark.slow, pytest.mark.integration]

RECORDS = ("checkpoints", "queries", "probes", "steps", "forgets")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[Path, int]]:
    out = {}
    for concurrency in (1, 4):
        run_dir = tmp_path_factory.mktemp(f"ollama-c{concurrency}") / "run"
        with FakeOllamaServer(echo=True, latency=0.05) as server:
            finish(
                place_run(
                    run_dir,
                    "model=qwen2.5-7b",
                    f"model.base_url={server.url}",
                    f"answer.concurrency={concurrency}",
                    "design=extended",
                )
            )
            out[concurrency] = (run_dir, server.max_chats_in_flight)
    return out


def _lines(run_dir: Path, name: str) -> list[dict]:
    rows = [json.loads(x) for x in (run_dir / "records" / f"{name}.jsonl").read_text().splitlines()]
    for row in rows:
        row.pop("seconds", None)
    return rows


def test_the_answer_calls_overlapped(runs) -> None:
    assert runs[1][1] == 1
    assert runs[4][1] > 1


@pytest.mark.parametrize("name", RECORDS)
def test_records_are_those_of_the_sequential_run(runs, name: str) -> None:
    assert _lines(runs[4][0], name) == _lines(runs[1][0], name)


def test_metrics_are_byte_identical_and_answers_vary(runs) -> None:
    assert (runs[4][0] / "metrics.json").read_bytes() == (runs[1][0] / "metrics.json").read_bytes()
    answers = {r["raw_answer"] for r in _lines(runs[1][0], "queries")}
    assert len(answers) > 5  # the fake echoes what each read exposed: not one canned reply
    manifests = [json.loads((runs[c][0] / "manifest.json").read_text()) for c in (1, 4)]
    assert manifests[0]["cache"]["misses"] == manifests[1]["cache"]["misses"]
    assert manifests[0]["cache"]["hits"] == manifests[1]["cache"]["hits"]
