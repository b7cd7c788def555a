"""INT8 dynamic quantization for the CPU (weights int8 per output channel, activations quantized on the fly by
ONNX Runtime), and the choice of which encoder layers stay float.

ONNX Runtime quantizes the weight matrix products. The word embedding table is stored apart
(`quantize_word_embeddings`): ONNX Runtime's own Gather quantization, one scale for the whole table, cost the
Chinese model most of its loss (docs/multilingual.md); one scale per row costs little, and where the gate still
refuses it, the table is stored as float16.

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

import numpy as np
import onnx
import onnx.numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

__all__ = ["quantize_int8", "weight_layers", "most_changing_layers", "MAX_FLOAT_LAYERS", "TABLE_FORMATS",
           "quantize_word_embeddings"]

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


WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"


TABLE_FORMATS = ("int8", "float16")  # tried in this order; the first the accuracy gate accepts is kept


def quantize_word_embeddings(path: Path, table_format: str) -> None:
    """The word embedding table stored smaller, in place: "int8" with one scale per row (per token), or "float16".

    A lookup is not a product, so ONNX Runtime's quantizer treats the table as one tensor with one scale, and
    that cost the Chinese model most of its INT8 loss. One scale per row keeps each token's vector to 1/254 of
    its own largest weight, a quarter of the float size; the table is most of a small model's bytes. The graph
    reads Gather(table) -> Cast -> (Mul by Gather(row scales)): the same vector, to rounding.
    """
    model = onnx.load(str(path))
    graph = model.graph
    table = next(init for init in graph.initializer if init.name.endswith(WORD_EMBEDDINGS))
    lookup = next(node for node in graph.node if node.op_type == "Gather" and node.input[0] == table.name)
    weights = onnx.numpy_helper.to_array(table).astype(np.float32)
    ids, out, name = lookup.input[1], lookup.output[0], lookup.name
    cast = onnx.helper.make_node("Cast", [f"{out}.stored"], [f"{out}.float" if table_format == "int8" else out],
                                 name=f"{name}_cast", to=onnx.TensorProto.FLOAT)
    nodes = [onnx.helper.make_node("Gather", [f"{table.name}.{table_format}", ids], [f"{out}.stored"],
                                   name=f"{name}_{table_format}"), cast]
    if table_format == "int8":
        scales = np.abs(weights).max(axis=1, keepdims=True) / 127.0
        scales[scales == 0] = 1.0
        stored = np.clip(np.rint(weights / scales), -127, 127).astype(np.int8)
        extra = [onnx.numpy_helper.from_array(scales.astype(np.float32), f"{table.name}.scale")]
        nodes += [onnx.helper.make_node("Gather", [f"{table.name}.scale", ids], [f"{out}.scale"], name=f"{name}_scale"),
                  onnx.helper.make_node("Mul", [f"{out}.float", f"{out}.scale"], [out], name=f"{name}_rescale")]
    elif table_format == "float16":
        stored, extra = weights.astype(np.float16), []
    else:
        raise ValueError(f"word embeddings as {table_format!r}: one of {TABLE_FORMATS}")
    graph.initializer.remove(table)
    graph.initializer.extend([onnx.numpy_helper.from_array(stored, f"{table.name}.{table_format}"), *extra])
    at = list(graph.node).index(lookup)
    graph.node.remove(lookup)
    for offset, node in enumerate(nodes):
        graph.node.insert(at + offset, node)
    onnx.save(model, str(path))
