"""Every `type: ignore` left in the code says which error it silences and why (issue #14).

mypy's `ignore-without-code` already refuses a bare ignore; this adds the reason, so the next
reader can tell a real limit of the stubs from a silenced bug.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<rest>.*)$")
"""A mypy ignore comment and what follows it on the line."""
WITH_REASON = re.compile(r"^\[[a-z-]+(,\s*[a-z-]+)*\]\s+#\s*reason:\s*\S")


def ignores() -> list[tuple[str, int, str]]:
    found = []
    for folder in ("place", "benchmarks", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                match = IGNORE.search(line)
                if match:
                    found.append((str(path.relative_to(ROOT)), number, match["rest"].strip()))
    return found


def test_every_type_ignore_names_its_code_and_reason() -> None:
    bare = [f"{p}:{n}: ignore{rest}" for p, n, rest in ignores() if not WITH_REASON.match(rest)]
    assert bare == [], "write `# type: ignore[code]  # reason: ...`"


def test_the_check_sees_the_ignores() -> None:
    # The scan must find the ignores that are known to exist, or the test above proves nothing.
    assert any(p == "place/runner/config.py" for p, _, _ in ignores())
    assert not WITH_REASON.match("[attr-defined]")
    assert WITH_REASON.match("[attr-defined]  # reason: a module global")
