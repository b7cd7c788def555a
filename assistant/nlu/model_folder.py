"""A trained joint NLU model on disk: the folder the recipe in models/ writes (ONNX files, weights, labels,
tokenizer, manifest), loaded as it is. Finding or building one in the cache is the build side's job
(models/model_cache.py); the runtime only reads a folder it is given."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assistant.errors import ModelUnavailable
from assistant.nlu.labels import LabelSet
from engines.base import JointModelFiles

__all__ = ["NLUModel", "load_model"]


@dataclass(frozen=True)
class NLUModel:
    folder: Path
    files: JointModelFiles
    labels: LabelSet
    tokenizer_file: Path
    manifest: dict[str, Any]

    @property
    def key(self) -> str:
        return str(self.manifest["key"])


def load_model(folder: Path) -> NLUModel:
    manifest_file = folder / "manifest.json"
    if not manifest_file.exists():
        raise ModelUnavailable(f"no trained model in {folder} (manifest.json missing)")
    labels = LabelSet.load(folder / "labels.json")
    int8 = folder / "model.int8.onnx"
    files = JointModelFiles(
        onnx_fp32=folder / "model.onnx",
        onnx_int8=int8 if int8.exists() else None,
        torch_weights=folder / "joint_model.safetensors",
        encoder_config=folder / "encoder_config.json",
        num_intents=len(labels.intents),
        num_slot_labels=len(labels.slot_labels),
    )
    return NLUModel(folder, files, labels, folder / "tokenizer.json", json.loads(manifest_file.read_text()))
