"""Issue #26's small CLI items: `python -m place`, a closed stdout pipe (`place ... | head`),
`place generate --out` in a missing directory, and `place doctor/run -h/--help`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from place.cli import main

ROOT = Path(__file__).parents[2]
SMOKE = str(ROOT / "trajectories" / "smoke.yaml")
PRIMARY = str(ROOT / "trajectories" / "primary.yaml")
BAD = str(sorted((ROOT / "tests" / "data" / "bad").iterdir())[0])
NOISE = ("Traceback", "BrokenPipeError", "Exception ignored", "Logging error")
"""What stderr must not show when the reader of stdout has gone."""


def _env(buffered: bool = True) -> dict[str, str]:
    """The environment of a `place` subprocess; unbuffered, every print writes at once (and a
    closed pipe raises inside the command), buffered it shows at the final flush."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return env if buffered else {**env, "PYTHONUNBUFFERED": "1"}


def _place(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "place", *args],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


# --- 1. python -m place ------------------------------------------------------------------------


def test_python_m_place_is_place(capsys) -> None:
    proc = _place("validate", SMOKE)
    assert main(["validate", SMOKE]) == 0
    assert (proc.returncode, proc.stdout) == (0, capsys.readouterr().out)


@pytest.mark.parametrize(
    ("args", "code", "err"),
    [
        (["parse", SMOKE, "--text", "x", "--predicate", "nope"], 2, "allowed:"),
        (["validate", BAD], 2, BAD),
        ([], 2, "usage: place"),  # argparse: a command is required
    ],
    ids=["place-error", "invalid-file", "no-command"],
)
def test_python_m_place_keeps_the_exit_codes(args: list[str], code: int, err: str) -> None:
    proc = _place(*args)
    assert proc.returncode == code
    assert err in proc.stderr and "Traceback" not in proc.stderr


# --- 2. a closed pipe on stdout ------------------------------------------------------------------


def _into_closed_pipe(args: list[str], buffered: bool = True, cwd: Path = ROOT):
    """Run `place ARGS` with stdout a pipe whose reader has already gone (what `| head` leaves
    once head exits): every write to it fails with EPIPE."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "place", *args],
            cwd=cwd,
            env=_env(buffered),
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write)


CLOSED_PIPE_CASES = {
    "validate": ["validate", SMOKE],
    "reference-json": ["reference", PRIMARY, "--json"],
    "parse": ["parse", SMOKE, "--text", "the flight is at 9:40"],
    "doctor": ["doctor"],  # the embedded model: nothing is started
    "run-help": ["run", "--help"],
    "run-check": ["run", "--check", "trajectory=smoke"],
    "run-cfg": ["run", "--cfg", "job", "trajectory=smoke"],  # Hydra prints inside its own catch
}


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("args", list(CLOSED_PIPE_CASES.values()), ids=list(CLOSED_PIPE_CASES))
def test_a_closed_pipe_exits_141_without_a_traceback(args: list[str], buffered: bool) -> None:
    proc = _into_closed_pipe(args, buffered)
    assert proc.returncode == 141, proc.stderr
    assert not [n for n in NOISE if n in proc.stderr], proc.stderr


@pytest.mark.parametrize(
    ("buffered", "code"), [(True, 141), (False, 0)], ids=["buffered", "unbuffered"]
)
def test_argparse_help_into_a_closed_pipe(buffered: bool, code: int) -> None:
    """`place --help`: argparse writes the help and exits 0; buffered, the closed pipe shows at
    the flush in `main` (141). Unbuffered, argparse's own write drops the error (its
    `_print_message` ignores OSError) and exits 0. Quiet either way."""
    proc = _into_closed_pipe(["--help"], buffered)
    assert (proc.returncode, proc.stderr) == (code, "")


def test_generate_into_a_closed_pipe_still_writes_the_file(tmp_path: Path) -> None:
    out = tmp_path / "gen.yaml"
    proc = _into_closed_pipe(["generate", "--seed", "1", "--design", "small", "--out", str(out)])
    assert proc.returncode == 141 and proc.stderr == ""
    assert out.is_file()


def test_a_failed_command_keeps_its_status_on_a_closed_pipe() -> None:
    """Buffered, the failure is known before the flush finds the pipe closed: exit 2, and the
    message on stderr."""
    proc = _into_closed_pipe(["validate", SMOKE, BAD])
    assert proc.returncode == 2
    assert BAD in proc.stderr and not [n for n in NOISE if n in proc.stderr]


def test_a_failed_sweep_keeps_its_status_and_hydra_logs_quietly(tmp_path: Path) -> None:
    """`place run -m` with stdout closed: Hydra's launch lines (logged to stdout) are dropped
    without logging's "--- Logging error ---" tracebacks; the jobs fail (no Ollama server on
    the port) and the sweep exits 1 as it would on a terminal."""
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = _into_closed_pipe(
        [
            "run",
            "-m",
            "model=qwen2.5-3b,qwen2.5-7b",
            f"model.base_url=http://127.0.0.1:{port}",
            "model.retries=1",
            "trajectory=smoke",
            "experiment=primary",
            f"hydra.sweep.dir={tmp_path / 'sweep'}",
        ]
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("is unreachable") == 2
    assert "Logging error" not in proc.stderr and "BrokenPipeError" not in proc.stderr


def test_head_gets_the_first_line_and_place_exits_141() -> None:
    """A real `| head -1` (bash, pipefail): the primary trajectory's reference JSON (about
    0.5 MB) fills the pipe, so place is still writing when head exits."""
    script = f'set -o pipefail; "{sys.executable}" -m place reference "{PRIMARY}" --json | head -1'
    proc = subprocess.run(
        ["bash", "-c", script], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (141, "{\n", "")


def test_main_restores_stdout_after_a_hydra_command(capsys) -> None:
    before = sys.stdout
    assert main(["doctor", "--help"]) == 0
    assert sys.stdout is before
    assert capsys.readouterr().out.startswith("usage: place doctor")


# --- 3. place generate --out in a missing directory ----------------------------------------------


def test_generate_refuses_a_missing_directory_and_creates_nothing(tmp_path: Path, capsys) -> None:
    out = tmp_path / "no" / "such" / "dir" / "x.yaml"
    assert main(["generate", "--seed", "1", "--design", "small", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"the directory {tmp_path / 'no' / 'such' / 'dir'} does not exist" in err
    assert "allowed: a file in an existing directory" in err
    assert list(tmp_path.iterdir()) == []


def test_generate_refuses_a_file_as_the_directory(tmp_path: Path, capsys) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    assert main(["generate", "--seed", "1", "--out", str(tmp_path / "f" / "x.yaml")]) == 2
    assert f"the directory {tmp_path / 'f'} is not a directory" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["f"]


def test_generate_into_the_current_directory(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--seed", "1", "--design", "small", "--out", "x.yaml"]) == 0
    assert (tmp_path / "x.yaml").is_file()
    assert "x.yaml: generated:" in capsys.readouterr().out


# --- 4. place doctor / place run -h, --help ---------------------------------------------------


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_doctor_help_prints_usage_and_runs_nothing(flag: str, tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the default trajectory path does not resolve here
    assert main(["doctor", flag, "model=qwen2.5-7b"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("usage: place doctor [-h] [key=value ...]")
    assert "qwen2.5-3b, qwen2.5-7b, smollm2-135m" in captured.out
    assert captured.err == "" and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_run_help_prints_usage_and_hydras_help_and_creates_nothing(flag: str, tmp_path: Path):
    # Outside the repository: the checks (which would refuse the default trajectory path
    # there) are not run, and nothing is written.
    proc = subprocess.run(
        [sys.executable, "-m", "place", "run", flag, "model=qwen2.5-7b"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: place run [--check] [-m | --multirun]")
    assert "place run is powered by Hydra." in proc.stdout
    assert "== Configuration groups ==" in proc.stdout
    assert "name: qwen2.5-7b" in proc.stdout  # the composed config, with the override
    assert proc.stderr == "" and list(tmp_path.iterdir()) == []


def test_run_help_with_a_bad_override_exits_2_without_a_traceback(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "place", "run", "--help", "model.n_ctx=abc"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "place run: error: model.n_ctx=abc: must be an integer" in proc.stderr
    assert "Traceback" not in proc.stderr and list(tmp_path.iterdir()) == []
