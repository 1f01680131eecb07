"""Read policies (docs/method.md §3, §8): native, qasc, posthoc, decay, recency, fullcontext.
Importing this package registers them; `POLICIES` maps each name to its declaration."""

from place.policies import decay, fullcontext, paper, posthoc, recency  # noqa: F401  (registers them)
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
