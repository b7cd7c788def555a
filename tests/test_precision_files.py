"""The FP16 and INT8 Q/DQ ONNX files TensorRT builds from: made from the real model, checked against FP32 on
the dev split with ONNX Runtime (the one accuracy gate: models/accuracy_gate.py), and shaped the way TensorRT
needs them."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import onnx
import pytest

from assistant.errors import ModelUnavailable
from assistant.nlu.model_folder import NLUModel
from models.accuracy_gate import MAX_DROP_POINTS, accepted, drops
from models.precision import FP16_KEEP_FP32_OPS
from models.precision_files import ensure_precision_file


@pytest.mark.parametrize("precision", ["fp16", "int8"])
@pytest.mark.parametrize("language_model", ["meeting_model", "chinese_model"])
def test_each_precision_passes_the_accuracy_gate_against_fp32_on_dev(request: pytest.FixtureRequest,
                                                                    language_model: str, precision: str) -> None:
    # The Chinese model's files too: its INT8 file is calibrated on Chinese requests (models/precision_files.py)
    made = ensure_precision_file(request.getfixturevalue(language_model), precision)
    assert made.onnx.exists() and made.accuracy["accepted"]
    for metric in ("intent_accuracy", "slot_f1"):
        assert made.accuracy["drop"][metric] <= MAX_DROP_POINTS
        assert made.accuracy[precision][metric] > 95.0  # measured, not copied from FP32
    assert made.accuracy[precision]["count"] == made.accuracy["fp32"]["count"]


def _io_types(model: onnx.ModelProto) -> set[int]:
    return {v.type.tensor_type.elem_type for v in [*model.graph.input, *model.graph.output]}


def test_the_fp16_file_keeps_float32_io_and_normalization(meeting_model: NLUModel) -> None:
    model = onnx.load(str(ensure_precision_file(meeting_model, "fp16").onnx))
    assert _io_types(model) == {onnx.TensorProto.INT64, onnx.TensorProto.FLOAT}  # fed and read like FP32
    weights = Counter(init.data_type for init in model.graph.initializer if len(init.dims) == 2)
    assert weights[onnx.TensorProto.FLOAT16] > 30 and weights[onnx.TensorProto.FLOAT] == 0  # matrices in FP16
    produced_by = {out: node for node in model.graph.node for out in node.output}
    norms = [node for node in model.graph.node if node.op_type == "LayerNormalization"]
    assert len(norms) == 13 and "LayerNormalization" in FP16_KEEP_FP32_OPS
    for node in norms:
        feeder = produced_by.get(node.input[0])
        assert feeder is not None and feeder.op_type == "Cast"  # cast up to FP32 before normalizing


def test_the_int8_file_quantizes_weight_matmuls_and_leaves_the_sensitive_ones_float(meeting_model: NLUModel
                                                                                   ) -> None:
    model = onnx.load(str(ensure_precision_file(meeting_model, "int8").onnx))
    ops = Counter(node.op_type for node in model.graph.node)
    assert ops["QuantizeLinear"] > 0 and ops["DequantizeLinear"] > ops["QuantizeLinear"]
    dequantized = {out for node in model.graph.node if node.op_type == "DequantizeLinear" for out in node.output}
    matmuls = {node.name: node for node in model.graph.node if node.op_type in ("MatMul", "Gemm")}
    quantized = {name for name, node in matmuls.items() if any(i in dequantized for i in node.input)}
    assert any("/attention/self/query/" in name for name in quantized)
    assert not any("/output/dense/" in n and "/attention/" not in n for n in quantized)  # FFN output stays float
    assert not any("_head/" in name for name in quantized)
    for scale in (init for init in model.graph.initializer if init.name.endswith("_zero_point")):
        assert all(v == 0 for v in onnx.numpy_helper.to_array(scale).ravel())  # symmetric, as TensorRT wants


def test_a_file_that_lost_too_much_is_refused_but_kept(meeting_model: NLUModel, tmp_path: Path) -> None:
    # a model folder whose int8 check failed: the refusal names the numbers and the folder
    folder = tmp_path / meeting_model.folder.name
    files = replace(meeting_model.files, onnx_fp32=folder / "model.onnx")
    rejected = files.gpu_onnx("int8").parent
    rejected.mkdir()
    (rejected / "model.onnx").write_bytes(b"")
    (rejected / "accuracy.json").write_text(json.dumps({
        "fp32": {}, "int8": {}, "drop": {"intent_accuracy": 0.2, "slot_f1": 1.5}, "accepted": False}))
    copy = replace(meeting_model, folder=folder, files=files)
    with pytest.raises(ModelUnavailable, match=r"slot_f1 -1\.50.*kept in"):
        ensure_precision_file(copy, "int8")
    assert ensure_precision_file(copy, "int8", allow_rejected=True).accuracy["accepted"] is False


def test_one_gate_for_every_derived_file() -> None:
    fp32 = {"intent_accuracy": 98.62, "slot_f1": 98.88, "sentence_accuracy": 96.86, "count": 2100}
    assert drops(fp32, {"intent_accuracy": 98.67, "slot_f1": 98.38}) == {"intent_accuracy": -0.05, "slot_f1": 0.5}
    assert accepted(drops(fp32, {"intent_accuracy": 98.67, "slot_f1": 98.38}))  # exactly at the limit: kept
    assert not accepted(drops(fp32, {"intent_accuracy": 98.62, "slot_f1": 98.37}))  # 0.51 points lost
