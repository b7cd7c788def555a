"""The backend protocol: token ids + mask for a batch in, intent logits and slot logits out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

__all__ = ["BackendInfo", "BackendOptions", "JointModelFiles", "Logits", "NLUBackend"]

# (intent logits (batch, intents), slot logits (batch, seq, slot labels)), float32 on the host.
Logits = tuple[NDArray[np.float32], NDArray[np.float32]]

INPUT_NAMES = ("input_ids", "attention_mask")
OUTPUT_NAMES = ("intent_logits", "slot_logits")


@dataclass(frozen=True)
class JointModelFiles:
    """The artifacts of one trained joint model, as the recipe in models/ wrote them."""

    onnx_fp32: Path
    onnx_int8: Path | None  # present only when INT8 passed the accuracy gate
    torch_weights: Path  # safetensors state dict of engines.torch_joint.JointIntentSlotModel
    encoder_config: Path  # the encoder's config.json
    num_intents: int
    num_slot_labels: int


@dataclass(frozen=True)
class BackendOptions:
    precision: str = "auto"  # auto | fp32 | int8 (what a backend supports differs; auto picks its best)
    threads: int = 0  # CPU threads for one call; 0: the runtime's default (all physical cores)


@dataclass(frozen=True)
class BackendInfo:
    name: str  # registry name, e.g. "onnxruntime"
    device: str  # "cpu", "cuda:0"
    precision: str  # "fp32", "int8", "fp16"
    model: str  # file or description of what runs

    def describe(self) -> str:
        return f"{self.name} ({self.precision}, {self.device}) running {self.model}"


class NLUBackend(Protocol):
    def run(self, input_ids: NDArray[np.int64], attention_mask: NDArray[np.int64]) -> Logits:
        """One forward pass over a padded batch; must be safe to call from one worker thread at a time."""
        ...

    def info(self) -> BackendInfo: ...

    def close(self) -> None: ...
