"""Read policies (docs/method.md §3, §8): native, qasc, posthoc, decay. Importing this package
registers them; `POLICIES` maps each name to its declaration."""

from place.policies import decay, paper, posthoc  # noqa: F401  (registers the policies)
from place.policies.registry import (
    POLICIES,
    PolicyContext,
    PolicySpec,
    ReadPolicy,
    build_policy,
    register_policy,
)

__all__ = [
    "POLICIES",
    "PolicyContext",
    "PolicySpec",
    "ReadPolicy",
    "build_policy",
    "register_policy",
]
