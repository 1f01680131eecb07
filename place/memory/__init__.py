"""The physical store X_t: Mem0 on Qdrant, opened per condition row/world.

``telemetry`` is imported first: it sets ``MEM0_TELEMETRY=False`` (and the HF offline
flags) before anything imports mem0.
"""

from place.memory import telemetry
from place.memory.scan import HistoryRow, PointRecord, StoreScan
from place.memory.store import (
    METADATA_EVENT,
    Backend,
    MemoryStore,
    PhaseTimer,
    ReadOnlyStore,
    StoredItem,
    read_only_view,
)

__all__ = [
    "METADATA_EVENT",
    "Backend",
    "HistoryRow",
    "MemoryStore",
    "PhaseTimer",
    "PointRecord",
    "ReadOnlyStore",
    "StoreScan",
    "StoredItem",
    "read_only_view",
    "telemetry",
]
