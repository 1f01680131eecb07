"""Read policies (docs/method.md §3, §8, §12): native, qasc, posthoc, decay, recency,
fullcontext, cited.
Importing this package registers them; `POLICIES` maps each name to its declaration."""

from place.policies import (  # noqa: F401  (registers them)
    cited,
    decay,
    fullcontext,
    paper,
    posthoc,
    recency,
)
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
