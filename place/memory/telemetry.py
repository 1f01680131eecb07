"""Keep Mem0's PostHog telemetry and every model download off, before mem0 is imported.

mem0 1.0.11 reads ``MEM0_TELEMETRY`` once, at import of ``mem0.memory.telemetry``
(``os.environ.get("MEM0_TELEMETRY", "True")``), builds a module-level ``client_telemetry``
(a PostHog client when on) at that same moment, and ``mem0.memory.main`` copies the flag
into its own namespace (``from mem0.memory.telemetry import MEM0_TELEMETRY``). So the
variable must be in ``os.environ`` before the first ``import mem0``: this module is imported
first by ``place.memory`` and sets it. If mem0 was imported earlier with telemetry on, the
flags are forced off in both modules and the PostHog client is shut down (no event is sent:
PostHog only sends from ``capture``, and every ``capture_event`` returns early when off);
that reach into mem0's modules is in place/memory/mem0_compat.py.
"""

from __future__ import annotations

import logging
import os

from place.memory import mem0_compat

_log = logging.getLogger(__name__)

#: Environment that keeps the experiment offline and telemetry-free.
OFFLINE_ENV: dict[str, str] = {
    "MEM0_TELEMETRY": "False",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


def disable_telemetry() -> None:
    """Set the offline/telemetry-off environment and neutralize an already imported mem0."""
    for key, value in OFFLINE_ENV.items():
        os.environ[key] = value
    if not mem0_compat.mem0_telemetry_was_on():
        return
    # mem0 was imported before us with telemetry on: switch it off where it is read.
    _log.warning("mem0 was imported before place.memory; forcing its telemetry off")
    mem0_compat.switch_mem0_telemetry_off()


def telemetry_is_off() -> bool:
    """True when mem0 (if imported) has telemetry off and holds no PostHog client."""
    if os.environ.get("MEM0_TELEMETRY", "").lower() not in ("false", "0", "no"):
        return False
    return mem0_compat.mem0_telemetry_is_off()


disable_telemetry()
