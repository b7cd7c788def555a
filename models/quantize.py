"""INT8 dynamic quantization for the CPU (weights int8 per output channel, activations quantized on the fly by
ONNX Runtime), and the choice of which encoder layers stay float.

Only the weight matrix products are quantized: the word embeddings stay float. Quantizing the embedding table
(ONNX Runtime's default also takes Gather) cost the Chinese model most of its loss, for no speed (a lookup is
not a product); the English model lost 0.24 intent points with it and 0.05 without (docs/multilingual.md).

Where the file still fails the accuracy gate, the layers whose quantization moves the outputs the most are kept
float, one at a time, worst first. "Most" is measured on calibration requests (the model's own language, from
its training templates, never the dev split, which only gates): each layer quantized alone, its logits against
FP32's.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import onnx
from onnxruntime.quantization import QuantType, quantize_dynamic

__all__ = ["quantize_int8", "weight_layers", "most_changing_layers", "MAX_FLOAT_LAYERS"]

MAX_FLOAT_LAYERS = 3  # a model that needs more layers kept float to pass the gate is served in FP32
_LAYER = re.compile(r"layer\.(\d+)")


def _say(message: str) -> None:
    print(f"[nlu] {message}", file=sys.stderr, flush=True)


def weight_layers(fp32_path: Path) -> dict[str, list[str]]:
    """The weight matrix products (MatMul with a constant operand) by encoder layer ("layer.3"), the heads and
    anything outside a layer under "heads"."""
    graph = onnx.load(str(fp32_path), load_external_data=False).graph
    constants = {init.name for init in graph.initializer}
    layers: dict[str, list[str]] = {}
    for node in graph.node:
        if node.op_type == "MatMul" and any(name in constants for name in node.input):
            found = _LAYER.search(node.name)
            layers.setdefault(f"layer.{found.group(1)}" if found else "heads", []).append(node.name)
    return layers


def quantize_int8(fp32_path: Path, int8_path: Path, float_layers: tuple[str, ...] = ()) -> None:
    """`float_layers`: layers (weight_layers' keys) left in FP32."""
    layers = weight_layers(fp32_path)
    excluded = [node for layer in float_layers for node in layers.get(layer, [])]
    quantize_dynamic(str(fp32_path), str(int8_path), weight_type=QuantType.QInt8, per_channel=True,
                     op_types_to_quantize=["MatMul"], nodes_to_exclude=excluded)


def most_changing_layers(fp32_path: Path, scratch: Path, change: Callable[[Path], float]) -> list[str]:
    """Layers ordered by how much quantizing each alone moves the outputs: `change(onnx_path)` measures a file
    against FP32 on calibration requests (0 = the same logits)."""
    layers = weight_layers(fp32_path)
    moved: dict[str, float] = {}
    for i, layer in enumerate(layers, 1):
        only = tuple(other for other in layers if other != layer)
        quantize_int8(fp32_path, scratch, float_layers=only)
        moved[layer] = change(scratch)
        _say(f"INT8 sensitivity {i}/{len(layers)}: {layer} alone moves the logits by {moved[layer]:.4f}")
    scratch.unlink(missing_ok=True)
    return sorted(layers, key=lambda layer: -moved[layer])
