"""PLACE: governed lifecycle state and query-time eligibility for persistent-memory agents."""

from place.determinism import pin_cpu_kernels

# Before anything imports torch: cap its CPU kernels at AVX2 (place/determinism.py).
pin_cpu_kernels()

__version__ = "0.3.0"
