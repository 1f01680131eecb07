"""A generated `small` trajectory, governance story included, through the real runner
(docs/generator.md, "The governance story of `small`"; docs/method.md §11): design=aoep,
in-process, on the real stack (Mem0, Qdrant local mode, MiniLM) with the FAKE models of
tests/fakes/. What the pilot trajectory shows by hand holds on what the generator writes:
PLACE keeps every item that reads no answer, the floor keeps no obligation and holds every
invariant, and the act gate decides every delivery as the reference does."""

from __future__ import annotations

import json
from typing import Any

import inprocess
import pytest

from place.design import make_design
from place.generate import generate
from place.reference.validate import load_trajectory

pytestmark = pytest.mark.integration

AOEP = make_design(
    "aoep",
    ["none", "append", "extract", "native", "css"],
    ["native", "recency", "fullcontext", "qasc"],
)
STORY_KINDS = (
    "act",
    "surface",
    "epoch",
    "block",
    "rollback",
    "authority",
    "traceability",
    "non-exposure",
    "idempotence",
)
"""The §11 item kinds the story guarantees: every one."""


@pytest.fixture(scope="module")
def metrics(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("governed")
    # Seed 2: its compaction summarizes the story's slot, so a task's argument can come from
    # the derived summary (the replication study found its source unrecorded there).
    path = out / "small-2.yaml"
    path.write_text(generate(2, "small").text, encoding="utf-8")
    m = inprocess.run_inprocess(out / "run", load_trajectory(path), AOEP, plots=False)
    assert m["factorization"]["ok"], m["factorization"]
    compactions = (out / "run" / "records" / "compactions.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["producer"] for line in compactions) == sorted(AOEP.producers)
    return m


def test_the_story_makes_items_of_every_kind_it_guarantees(metrics: dict[str, Any]) -> None:
    card = metrics["aoep"]["PLACE"]
    kinds = {**card["obligations"]["kinds"], **card["invariants"]["kinds"]}
    assert all(kinds[k]["total"] > 0 for k in STORY_KINDS), {k: kinds[k] for k in STORY_KINDS}


def test_place_keeps_every_answer_free_item_and_the_floor_none(metrics: dict[str, Any]) -> None:
    place = metrics["aoep"]["PLACE"]["model_independent"]
    floor = metrics["aoep"]["None/Native"]["model_independent"]
    for family in ("obligations", "invariants"):
        assert place[family]["passed"] == place[family]["total"] > 0, (family, place[family])
    assert floor["obligations"]["passed"] == 0
    assert floor["invariants"]["passed"] == floor["invariants"]["total"]


def test_the_act_gate_decides_every_delivery_as_the_reference(metrics: dict[str, Any]) -> None:
    tasks = metrics["tasks"]["PLACE"]
    assert tasks["deliveries"] > 0 and tasks["matching"] == tasks["deliveries"], tasks
    assert tasks["blocked"] > 0 and tasks["executed"] > 0, tasks
