"""The paper's two read policies, registered: Native top-k and QASC (place/governance/)."""

from __future__ import annotations

from place.governance.authorizer import NativeRead, QASCRead
from place.policies.registry import PolicyContext, register_policy


@register_policy("native", display="Native")
def native(context: PolicyContext[None]) -> NativeRead:
    return NativeRead(context.k)


@register_policy("qasc", governance=True, display="QASC")
def qasc(context: PolicyContext[None]) -> QASCRead:
    return QASCRead(context.k, context.readback)
