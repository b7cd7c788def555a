"""The CPU's INT8 files: every model, English and Chinese, ships one that passed the accuracy gate, with the word
embedding table stored apart (int8 with a scale per row, or float16: the manifest says which); the layers a failing
file would keep float are found and left float (models/quantize.py)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import onnx
import pytest

from assistant.nlu.model_folder import NLUModel
from assistant.nlu.tokenizer import WordPieceTokenizer
from models.accuracy_gate import MAX_DROP_POINTS
from models.datagen.sampling import GeneratorConfig
from models.quantize import most_changing_layers, quantize_int8, weight_layers
from models.recipe import _logit_change
from models.train_config import TrainConfig


def _ops(path: Path) -> Counter[str]:
    return Counter(node.op_type for node in onnx.load(str(path), load_external_data=False).graph.node)


@pytest.mark.parametrize("language_model", ["meeting_model", "chinese_model"])
def test_each_model_ships_an_int8_file_that_passed_the_gate(request: pytest.FixtureRequest,
                                                            language_model: str) -> None:
    model: NLUModel = request.getfixturevalue(language_model)
    manifest = model.manifest
    assert manifest["int8_kept"] and model.files.onnx_int8 is not None and model.files.onnx_int8.exists()
    fp32, int8 = manifest["dev"]["onnx_fp32"], manifest["dev"]["onnx_int8"]
    for metric in ("intent_accuracy", "slot_f1"):
        assert fp32[metric] - int8[metric] <= MAX_DROP_POINTS
    ops = _ops(model.files.onnx_int8)
    assert ops["MatMulInteger"] > 0 and ops["Gather"] >= 1  # products quantized ...
    vocabulary = json.loads(model.files.encoder_config.read_text())["vocab_size"]
    graph = onnx.load(str(model.files.onnx_int8), load_external_data=False).graph
    tables = {init.name: init for init in graph.initializer if init.dims and init.dims[0] == vocabulary}
    stored = {"int8": onnx.TensorProto.INT8, "float16": onnx.TensorProto.FLOAT16,
              "float32": onnx.TensorProto.FLOAT}[manifest["int8_word_embeddings"]]
    words = [init for name, init in tables.items() if "word_embeddings" in name and not name.endswith(".scale")]
    assert len(words) == 1 and words[0].data_type == stored  # ... and the table as the gate accepted it
    assert ops["DynamicQuantizeLinear"] > 0 and not any(  # never ONNX Runtime's one scale for the whole table
        node.op_type == "DequantizeLinear" and words[0].name in node.input for node in graph.node)


def test_layers_kept_float_are_left_float_and_ranked_by_how_far_they_move_the_outputs(
        meeting_model: NLUModel, tmp_path: Path) -> None:
    fp32 = meeting_model.files.onnx_fp32
    layers = weight_layers(fp32)
    assert sorted(layers) == sorted([f"layer.{i}" for i in range(6)] + ["heads"])
    all_int8, two_float = tmp_path / "all.onnx", tmp_path / "two.onnx"
    quantize_int8(fp32, all_int8)
    quantize_int8(fp32, two_float, float_layers=("layer.0", "layer.5"))
    kept_float = len(layers["layer.0"]) + len(layers["layer.5"])
    assert _ops(all_int8)["MatMulInteger"] - _ops(two_float)["MatMulInteger"] == kept_float

    generator = GeneratorConfig(**meeting_model.manifest["generator"])
    training = TrainConfig(**meeting_model.manifest["training"])
    change = _logit_change(meeting_model.files, generator, training, WordPieceTokenizer(meeting_model.tokenizer_file))
    assert change(fp32) == 0.0 < change(two_float) < change(all_int8)
    order = most_changing_layers(fp32, tmp_path / "scratch.onnx", change)
    assert sorted(order) == sorted(layers) and not (tmp_path / "scratch.onnx").exists()
