"""Read policies (method.md §3, §8): native, qasc, posthoc, decay. Importing this package
registers them; `POLICIES` maps each name to its factory."""

from place.policies import decay, paper, posthoc  # noqa: F401  (registers the policies)
from place.policies.registry import POLICIES, PolicyContext, ReadPolicy, build_policy

__all__ = ["POLICIES", "PolicyContext", "ReadPolicy", "build_policy"]
