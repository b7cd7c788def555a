"""The backend protocol: token ids + mask for a batch in, intent logits and slot logits out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

__all__ = ["BackendInfo", "BackendOptions", "JointModelFiles", "Logits", "NLUBackend", "ShapeProfile"]

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

    @property
    def folder(self) -> Path:
        return self.onnx_fp32.parent

    def gpu_onnx(self, precision: str) -> Path:
        """The ONNX file that carries `precision` for TensorRT (strongly typed: precision lives in the file).
        fp32 is the export itself; fp16 and int8 (Q/DQ) are derived files in sibling folders
        (models/precision_files.py makes them)."""
        if precision == "fp32":
            return self.onnx_fp32
        return self.folder.parent / f"{self.folder.name}.{precision}" / "model.onnx"

    @property
    def engine_folder(self) -> Path:
        """Where TensorRT engines built from this model's ONNX files are cached."""
        return self.folder.parent / f"{self.folder.name}.engines"


@dataclass(frozen=True)
class ShapeProfile:
    """Input shapes a GPU backend is built for: (min, opt, max) batch size and sequence length. TensorRT builds
    one optimization profile from it; the CUDA-graph backend captures buckets up to the maxima. A larger batch
    is split; a longer sequence is refused before it gets here (the parser's max_tokens)."""

    batch: tuple[int, int, int] = (1, 8, 64)
    seq: tuple[int, int, int] = (8, 32, 128)

    def __post_init__(self) -> None:
        for name, (low, opt, high) in (("batch", self.batch), ("seq", self.seq)):
            if not 1 <= low <= opt <= high:
                raise ValueError(f"{name} profile must be 1 <= min <= opt <= max, got {low}/{opt}/{high}")

    def describe(self) -> str:
        return f"batch {'/'.join(map(str, self.batch))}, seq {'/'.join(map(str, self.seq))}"


@dataclass(frozen=True)
class BackendOptions:
    precision: str = "auto"  # auto | fp32 | fp16 | int8 (what a backend supports differs; auto picks its best)
    threads: int = 0  # CPU threads for one call; 0: the runtime's default (all physical cores)
    shapes: ShapeProfile = ShapeProfile()  # GPU backends: the shapes to build or capture for


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
