"""FP16 and INT8 Q/DQ ONNX files of the trained joint model, for TensorRT.

TensorRT 11 builds strongly typed networks only: the precision of every layer comes from the ONNX file, not from
builder flags. So the GPU precisions are separate ONNX files made here, on any CPU machine, from the FP32 export:

- fp16: weights and activations in FP16 except the ops whose accumulation overflows or loses too much in FP16
  (LayerNormalization, Softmax and the reductions around them, Erf in GELU); inputs and outputs keep their types,
  so every backend is fed and read the same way.
- int8: explicit quantization, QuantizeLinear/DequantizeLinear pairs calibrated on generated requests (ONNX
  Runtime static QDQ, entropy calibration: on the dev split it keeps slot F1 within 0.1 point of FP32, where
  99.99th-percentile calibration lost 1.5 points). Only the weight x activation MatMuls are quantized;
  attention's activation x activation MatMuls, the FFN output projection (after GELU, it carries most of the
  INT8 error) and the two heads stay in float. Symmetric scales and no INT32 bias, the Q/DQ form TensorRT fuses.

These files are not part of the model recipe: they are derived from model.onnx and cached beside it by
models/precision_files.py, with their accuracy against FP32 measured there (the gate: models/accuracy_gate.py).
"""

from __future__ import annotations

import sys
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import onnx

from assistant.nlu.tokenizer import TokenizedText, WordPieceTokenizer
from engines.base import INPUT_NAMES

__all__ = ["FP16_KEEP_FP32_OPS", "to_fp16", "to_int8_qdq", "int8_excluded_nodes"]

# Ops kept in FP32 in the FP16 file: normalization statistics and softmax sums overflow or lose precision in FP16.
FP16_KEEP_FP32_OPS = ("LayerNormalization", "Softmax", "ReduceMean", "Pow", "Sqrt", "Erf")
CALIBRATION_BATCH = 16


def to_fp16(fp32_path: Path, out_path: Path) -> None:
    from onnxconverter_common import float16

    model = onnx.load(str(fp32_path))
    with warnings.catch_warnings(record=True) as truncated:  # one warning per clipped weight: dozens
        warnings.simplefilter("always")
        converted = float16.convert_float_to_float16(model, keep_io_types=True,
                                                     op_block_list=list(FP16_KEEP_FP32_OPS))
    if truncated:  # weights under FP16's smallest normal become +-1e-7, the mask's -3.4e38 becomes -1e4
        print(f"[precision] FP16: {len(truncated)} values outside FP16's range were clipped (tiny weights to "
              f"1e-7, the attention mask's minimum to -1e4)", file=sys.stderr, flush=True)
    _retarget_float_casts(converted)
    onnx.save(converted, str(out_path))


def _retarget_float_casts(model: onnx.ModelProto) -> None:
    """The converter retypes a Cast-to-float's output as FP16 but leaves the Cast's `to` at FLOAT (the export's
    mask cast in mean pooling), which ONNX Runtime and TensorRT reject as a type mismatch: point those at FP16."""
    fp16_values = {v.name for v in model.graph.value_info
                   if v.type.tensor_type.elem_type == onnx.TensorProto.FLOAT16}
    for node in model.graph.node:
        if node.op_type == "Cast" and node.output[0] in fp16_values:
            for attr in node.attribute:
                if attr.name == "to" and attr.i == onnx.TensorProto.FLOAT:
                    attr.i = onnx.TensorProto.FLOAT16


def int8_excluded_nodes(model: onnx.ModelProto) -> list[str]:
    """MatMul/Gemm nodes that stay in float: activation x activation products (attention scores and context),
    the FFN output projection of every layer, and the classification heads."""
    weights = {init.name for init in model.graph.initializer}
    excluded = []
    for node in model.graph.node:
        if node.op_type not in ("MatMul", "Gemm"):
            continue
        if not any(name in weights for name in node.input):
            excluded.append(node.name)  # activation x activation
        elif "/output/dense/" in node.name and "/attention/" not in node.name:
            excluded.append(node.name)  # the FFN output projection after GELU
        elif "_head/" in node.name:
            excluded.append(node.name)
    return excluded


class _CalibrationReader:
    """Feeds ONNX Runtime's calibrator padded batches of one fixed length (histogram calibration collects
    histograms per tensor and fails on ragged shapes)."""

    def __init__(self, items: Sequence[TokenizedText], tokenizer: WordPieceTokenizer) -> None:
        length = max(item.num_tokens for item in items)
        self._batches: Iterator[dict[str, np.ndarray]] = iter([
            dict(zip(INPUT_NAMES, (b.input_ids, b.attention_mask), strict=True))
            for b in (tokenizer.batch(items[i : i + CALIBRATION_BATCH], pad_to_multiple=length)
                      for i in range(0, len(items) - CALIBRATION_BATCH + 1, CALIBRATION_BATCH))
        ])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self._batches, None)

    def rewind(self) -> None:  # part of ONNX Runtime's CalibrationDataReader protocol; one pass is all we need
        pass


def to_int8_qdq(fp32_path: Path, out_path: Path, calibration: Sequence[TokenizedText],
                tokenizer: WordPieceTokenizer) -> None:
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    with tempfile.TemporaryDirectory() as tmp:
        prepared = Path(tmp) / "prepared.onnx"
        # Symbolic shape inference is skipped: it cannot follow the encoder's dynamic attention-mask arithmetic.
        quant_pre_process(str(fp32_path), str(prepared), skip_symbolic_shape=True)
        excluded = int8_excluded_nodes(onnx.load(str(prepared), load_external_data=False))
        quantize_static(
            str(prepared), str(out_path), _CalibrationReader(calibration, tokenizer),
            quant_format=QuantFormat.QDQ, op_types_to_quantize=["MatMul", "Gemm"], nodes_to_exclude=excluded,
            per_channel=True, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
            calibrate_method=CalibrationMethod.Entropy,
            extra_options={"ActivationSymmetric": True, "WeightSymmetric": True, "QuantizeBias": False},
        )
