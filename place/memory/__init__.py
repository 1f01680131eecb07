"""The physical store X_t: Mem0 on Qdrant, opened per condition row/world.

``telemetry`` is imported first: it sets ``MEM0_TELEMETRY=False`` (and the HF offline
flags) before anything imports mem0.

Modules: ``item`` (what a read returns, the read-only store protocol), ``store`` (one
store), ``view`` (its read-only view), ``backend`` (opens stores over shared resources),
``filters`` (principal filters), ``scan`` (everything stored), ``tables`` (side tables
beside a store: the ledger L), ``ids`` (record ids),
``config`` (Mem0 config, shared Qdrant client), ``unit_vectors`` (embeddings),
``mem0_compat`` (every reach into Mem0/qdrant-client internals, and the version check).
"""

from place.memory import telemetry
from place.memory.backend import Backend
from place.memory.item import ReadOnlyStore, StoredItem
from place.memory.scan import HistoryRow, PointRecord, StoreScan
from place.memory.store import METADATA_EVENT, MemoryStore
from place.memory.tables import SideRow, SideTables
from place.memory.view import read_only_view
from place.timing import PhaseTimer

__all__ = [
    "METADATA_EVENT",
    "Backend",
    "HistoryRow",
    "MemoryStore",
    "PhaseTimer",
    "PointRecord",
    "ReadOnlyStore",
    "SideRow",
    "SideTables",
    "StoreScan",
    "StoredItem",
    "read_only_view",
    "telemetry",
]
