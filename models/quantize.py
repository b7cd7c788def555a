"""INT8 dynamic quantization for the CPU (weights int8, activations quantized on the fly by ONNX Runtime)."""

from __future__ import annotations

from pathlib import Path

from onnxruntime.quantization import QuantType, quantize_dynamic

__all__ = ["quantize_int8"]


def quantize_int8(fp32_path: Path, int8_path: Path) -> None:
    quantize_dynamic(str(fp32_path), str(int8_path), weight_type=QuantType.QInt8, per_channel=True)
