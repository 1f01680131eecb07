"""FAKE package metadata for the version gate's tests."""

from __future__ import annotations


class FakeVersionLookup:
    """FAKE ``installed_version``: answers from a dict instead of the installed metadata."""

    def __init__(self, **versions: str | None) -> None:
        self.versions = {"mem0ai": "1.0.11", "qdrant-client": "1.20.0"}
        self.versions.update({k.replace("_", "-"): v for k, v in versions.items()})

    def __call__(self, distribution: str) -> str | None:
        return self.versions[distribution]
