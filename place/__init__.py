"""PLACE: governed lifecycle state and query-time eligibility for persistent-memory agents."""

__version__ = "0.1.0"
