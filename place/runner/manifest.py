"""manifest.json: what was run, on what, with which inputs, and what it cost."""

from __future__ import annotations

import datetime as dt
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from place import __version__
from place.determinism import compute_identity

MANIFEST_SCHEMA = "place-manifest/1"
PACKAGES = (
    "mem0ai",
    "qdrant-client",
    "llama_cpp_python",
    "ollama",
    "sentence-transformers",
    "torch",
    "hydra-core",
    "numpy",
    "pandas",
    "pydantic",
)


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_state(repo: Path) -> dict[str, Any]:
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args], cwd=repo, capture_output=True, text=True, timeout=10, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip()

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def base_manifest(
    config: dict[str, Any], header: dict[str, Any], seeds: dict[str, Any], repo: Path
) -> dict[str, Any]:
    return {
        "schema": MANIFEST_SCHEMA,
        "status": "running",
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "place_version": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
        "compute": compute_identity(),
        "git": git_state(repo),
        "config": config,
        "header": header,
        "seeds": seeds,
    }
