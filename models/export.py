"""Export the joint model to ONNX (dynamic batch and sequence axes) and check it against PyTorch.

This ONNX file is the one every other backend starts from: ONNX Runtime runs it, INT8 quantization rewrites it,
TensorRT compiles it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch

from engines.base import INPUT_NAMES, OUTPUT_NAMES
from engines.torch_joint import JointIntentSlotModel

__all__ = ["export_onnx", "max_abs_difference"]

OPSET = 17


def export_onnx(model: JointIntentSlotModel, path: Path) -> None:
    model = model.eval()
    # any ids the (trimmed) vocabulary has: the graph is traced with dynamic axes and keeps no input values
    ids = torch.tensor([[101, 2338, 23914, 4826, 2012, 1023, 102]]) % model.encoder.config.vocab_size
    mask = torch.ones_like(ids)
    dynamic = {0: "batch", 1: "sequence"}
    with torch.inference_mode():
        torch.onnx.export(
            model,
            (ids, mask),
            str(path),
            input_names=list(INPUT_NAMES),
            output_names=list(OUTPUT_NAMES),
            dynamic_axes={
                "input_ids": dynamic, "attention_mask": dynamic,
                "intent_logits": {0: "batch"}, "slot_logits": dynamic,
            },
            opset_version=OPSET,
            dynamo=False,  # the TorchScript exporter: stable names and shapes that TensorRT's parser takes
        )


def max_abs_difference(model: JointIntentSlotModel, onnx_path: Path, input_ids: np.ndarray,
                       attention_mask: np.ndarray) -> float:
    """Largest absolute difference between PyTorch and ONNX Runtime on one batch, over both outputs."""
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    feeds = {"input_ids": input_ids, "attention_mask": attention_mask}
    onnx_intent, onnx_slots = session.run(list(OUTPUT_NAMES), feeds)
    with torch.inference_mode():
        torch_intent, torch_slots = model(torch.from_numpy(input_ids), torch.from_numpy(attention_mask))
    # Padding positions carry no meaning; compare real tokens only.
    real = attention_mask.astype(bool)
    return max(
        float(np.abs(onnx_intent - torch_intent.numpy()).max()),
        float(np.abs(onnx_slots[real] - torch_slots.numpy()[real]).max()),
    )
