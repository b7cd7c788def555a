"""The ONNX file of the trained model at a chosen precision (fp32 | fp16 | int8), for TensorRT.

fp32 is the recipe's own model.onnx. fp16 and int8 (Q/DQ) are made from it on first use (models/precision.py),
each in its own cache folder next to the model, under a lock, renamed into place when complete, with its
accuracy on the dev split measured by ONNX Runtime against FP32 and written beside it. A file that fails the
accuracy gate (models/accuracy_gate.py) is kept for inspection but refused for use.
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assistant.cache import build_folder, locked
from assistant.errors import ModelUnavailable
from assistant.nlu.model_folder import NLUModel
from assistant.nlu.tokenizer import WordPieceTokenizer
from models.accuracy_gate import MAX_DROP_POINTS, accepted, drops

if TYPE_CHECKING:
    from models.datagen.sampling import GeneratorConfig
    from models.example import Example

__all__ = ["PRECISIONS", "CALIBRATION_REQUESTS", "PrecisionFile", "ensure_precision_file", "calibration_requests"]

PRECISIONS = ("fp32", "fp16", "int8")
CALIBRATION_REQUESTS = 800
_ACCURACY = "accuracy.json"


@dataclass(frozen=True)
class PrecisionFile:
    precision: str
    onnx: Path
    accuracy: dict[str, Any]  # {"fp32": scores, "<precision>": scores, "drop": {...}, "accepted": bool}


def _say(message: str) -> None:
    print(f"[precision] {message}", file=sys.stderr, flush=True)


def ensure_precision_file(model: NLUModel, precision: str, allow_rejected: bool = False) -> PrecisionFile:
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    if precision == "fp32":
        return PrecisionFile("fp32", model.files.onnx_fp32, {"fp32": model.manifest["dev"]["onnx_fp32"]})
    folder = model.files.gpu_onnx(precision).parent
    if not (folder / _ACCURACY).exists():
        with locked(model.folder.parent / f"{folder.name}.lock"):
            if not (folder / _ACCURACY).exists():
                build_folder(folder, lambda staging: _build(model, precision, staging))
    accuracy = json.loads((folder / _ACCURACY).read_text())
    if not accuracy["accepted"] and not allow_rejected:
        raise ModelUnavailable(
            f"the {precision} model loses too much accuracy against FP32 on dev ({_drops(accuracy)}; the limit "
            f"is {MAX_DROP_POINTS} points); it is kept in {folder} for inspection")
    return PrecisionFile(precision, folder / "model.onnx", accuracy)


def _drops(accuracy: dict[str, Any]) -> str:
    return ", ".join(f"{k} -{v:.2f}" for k, v in accuracy["drop"].items())


def _build(model: NLUModel, precision: str, out: Path) -> None:
    from models.datagen.splits import GeneratorConfig, generate_splits
    from models.precision import to_fp16, to_int8_qdq

    tokenizer = WordPieceTokenizer(model.tokenizer_file)
    generator = GeneratorConfig(**model.manifest["generator"])  # the model's own: same template split, same dev
    target = out / "model.onnx"
    if precision == "fp16":
        _say("converting to FP16 (LayerNorm, Softmax, reductions and GELU's Erf stay FP32)")
        to_fp16(model.files.onnx_fp32, target)
    else:
        requests = calibration_requests(generator, CALIBRATION_REQUESTS)
        _say(f"calibrating INT8 Q/DQ on {len(requests)} generated requests")
        to_int8_qdq(model.files.onnx_fp32, target, tokenizer.tokenize([r.text for r in requests]), tokenizer)
    _say(f"checking {precision} against FP32 on the dev split with ONNX Runtime")
    _, dev = generate_splits(generator)
    scores = _dev_scores(model, target, dev, tokenizer)
    fp32 = model.manifest["dev"]["onnx_fp32"]
    drop = drops(fp32, scores)
    accuracy = {"fp32": fp32, precision: scores, "drop": drop, "accepted": accepted(drop),
                "max_drop_points": MAX_DROP_POINTS, "onnx_bytes": target.stat().st_size}
    _say(f"{precision}: intent accuracy {scores['intent_accuracy']:.2f} (FP32 {fp32['intent_accuracy']:.2f}), "
         f"slot F1 {scores['slot_f1']:.2f} (FP32 {fp32['slot_f1']:.2f})")
    (out / _ACCURACY).write_text(json.dumps(accuracy, indent=2) + "\n")


def calibration_requests(generator: GeneratorConfig, n: int) -> list[Example]:
    """INT8 calibration requests in the model's own language, from its training templates with a seed of their
    own: never the dev requests. (Here, not in models/datagen: a change there is a new model and retrains it.)"""
    from models.datagen.sampling import generate, split_templates
    from models.datagen.splits import language_data

    data = language_data(generator.language)
    train_templates, _ = split_templates(generator.seed, generator.dev_template_fraction, data.TEMPLATES)
    return generate(train_templates, n, random.Random(generator.seed + 1009), data.render_example)


def _dev_scores(model: NLUModel, onnx_path: Path, dev: list[Any], tokenizer: WordPieceTokenizer) -> dict[str, Any]:
    from dataclasses import replace

    from engines.base import BackendOptions
    from engines.onnxruntime import OnnxRuntimeBackend
    from models.train import evaluate, featurize

    features = featurize(dev, tokenizer, int(model.manifest["training"]["max_tokens"]))
    # ONNX Runtime runs the file as it is: its precision is in the graph, the backend's "fp32" only names it.
    backend = OnnxRuntimeBackend(replace(model.files, onnx_fp32=onnx_path), BackendOptions("fp32"))
    return evaluate(backend.run, features, tokenizer, model.labels).as_dict()
