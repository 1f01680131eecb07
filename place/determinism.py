"""Pin the CPU kernels of the numeric libraries a run uses, so that cold runs agree across
x86-64 machines (docs/reproducibility.md).

Greedy decoding and similarity ranking are only as portable as the arithmetic under them.
llama.cpp is compiled for a fixed instruction set by the project's install (Makefile:
AVX2/FMA/F16C, no AVX-512). torch (MiniLM embeddings) picks its kernels at run time from the
processor it finds: on an AVX-512 machine its own kernels, MKL's GEMMs and oneDNN's
primitives take AVX-512 paths whose floating-point results differ in the last bits from the
AVX2 paths of a machine without it, and a similarity score that moves by 1e-7 can reorder
two records. The variables below cap all three at AVX2 on every machine. They must be set
before torch is imported, hence at package import; a value the user already set wins.
"""

from __future__ import annotations

import os
from typing import Any

PINNED_ENV: dict[str, str] = {
    "ATEN_CPU_CAPABILITY": "avx2",  # torch's own vectorised kernels
    "MKL_CBWR": "AVX2",  # MKL conditional numerical reproducibility: the AVX2 code path
    "ONEDNN_MAX_CPU_ISA": "AVX2",  # oneDNN (MKL-DNN) primitives
}


MINILM_DTYPE = "float64"
"""The precision MiniLM computes in (place/memory/backend.py); vectors are stored as float32.

Capping the instruction set is not enough across processor vendors: MKL's `MKL_CBWR=AVX2`
branch is reproducible on Intel processors only, and on an AMD EPYC the same float32
embeddings came out a few ulps apart from an Intel Xeon's, which moved recorded similarity
scores in their sixth decimal. In float64 those kernel differences sit ~1e-16 below the
value, and rounding to the float32 vector removes them: with float64, the smoke replay's
records were identical under every kernel choice we could force on one machine (MKL branch
AVX2/AVX/COMPATIBLE, torch avx2/avx512, oneDNN AVX2/AVX-512, OpenBLAS Haswell/SkylakeX),
where float32 changed seven record lines. It costs ~8 ms per embedding on one thread."""


def pin_cpu_kernels() -> None:
    for key, value in PINNED_ENV.items():
        os.environ.setdefault(key, value)


def compute_identity() -> dict[str, Any]:
    """What the arithmetic of this run ran on: recorded in the manifest."""
    info: dict[str, Any] = {
        "cpu": _cpu_model(),
        "env": {k: os.environ.get(k) for k in PINNED_ENV},
        "minilm_dtype": MINILM_DTYPE,
        "llama_cpp_system_info": None,
        "torch_cpu_capability": None,
    }
    try:
        import llama_cpp

        info["llama_cpp_system_info"] = llama_cpp.llama_print_system_info().decode().strip()
    except ImportError:  # not installed (an Ollama-only install): nothing to record
        pass
    try:
        import torch

        info["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    except ImportError:  # not installed
        pass
    return info


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None
