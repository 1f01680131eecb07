"""Keep Mem0's PostHog telemetry and every model download off, before mem0 is imported.

mem0 1.0.11 reads ``MEM0_TELEMETRY`` once, at import of ``mem0.memory.telemetry``
(``os.environ.get("MEM0_TELEMETRY", "True")``), builds a module-level ``client_telemetry``
(a PostHog client when on) at that same moment, and ``mem0.memory.main`` copies the flag
into its own namespace (``from mem0.memory.telemetry import MEM0_TELEMETRY``). So the
variable must be in ``os.environ`` before the first ``import mem0``: this module is imported
first by ``place.memory`` and sets it. If mem0 was imported earlier with telemetry on, the
flags are forced off in both modules and the PostHog client is shut down (no event is sent:
PostHog only sends from ``capture``, and every ``capture_event`` returns early when off).
"""

from __future__ import annotations

import logging
import os
import sys

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
    tele = sys.modules.get("mem0.memory.telemetry")
    if tele is None or getattr(tele, "MEM0_TELEMETRY", False) is False:
        return
    # mem0 was imported before us with telemetry on: switch it off where it is read.
    _log.warning("mem0 was imported before place.memory; forcing its telemetry off")
    tele.MEM0_TELEMETRY = False  # type: ignore[attr-defined]
    main = sys.modules.get("mem0.memory.main")
    if main is not None:
        main.MEM0_TELEMETRY = False  # type: ignore[attr-defined]
    client = getattr(tele, "client_telemetry", None)
    if client is not None:
        client.close()


def telemetry_is_off() -> bool:
    """True when mem0 (if imported) has telemetry off and holds no PostHog client."""
    if os.environ.get("MEM0_TELEMETRY", "").lower() not in ("false", "0", "no"):
        return False
    tele = sys.modules.get("mem0.memory.telemetry")
    if tele is None:
        return True
    main = sys.modules.get("mem0.memory.main")
    return (
        tele.MEM0_TELEMETRY is False
        and (main is None or main.MEM0_TELEMETRY is False)
        and getattr(tele.client_telemetry, "posthog", None) is None
        and getattr(tele, "_oss_telemetry_instance", None) is None
    )


disable_telemetry()
