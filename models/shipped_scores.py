"""The shipped INT8 models' dev scores on the processor this runs on, beside what the build measured (its
manifest). int8 kernels differ between processors (AVX-512 VNNI multiplies u8 by s8 exactly; AVX2 without VNNI
adds pairs in 16 bits and can saturate), so the accuracy gate's numbers are checked where the model runs:

    python -m models.shipped_scores en zh                          # this processor
    qemu-x86_64 -cpu Haswell .venv/bin/python -m models.shipped_scores en zh   # an AVX2 processor, emulated

(qemu-user's TCG emulates AVX2 exactly and no AVX-512 or VNNI, so ONNX Runtime takes its AVX2 kernels: the
scores are that processor's, the time is not.) Prints one JSON line per language and split."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from assistant.language.registry import get
from assistant.nlu.labels import LabelSet
from assistant.nlu.tokenizer import WordPieceTokenizer
from engines.base import BackendOptions, JointModelFiles
from engines.onnxruntime import OnnxRuntimeBackend
from models.datagen.splits import GeneratorConfig, generate_splits
from models.heard.corpus import heard_examples
from models.model_cache import SHIPPED
from models.train import evaluate, featurize

__all__ = ["shipped_scores"]


def shipped_scores(code: str) -> list[dict[str, object]]:
    """The shipped model's scores on its dev requests and its heard corpus's dev rows, on this processor."""
    folder = SHIPPED / get(code).code
    manifest = json.loads((folder / "manifest.json").read_text())
    _, dev = generate_splits(GeneratorConfig(**manifest["generator"]))
    tokenizer = WordPieceTokenizer(folder / "tokenizer.json")
    labels = LabelSet.load(folder / "labels.json")
    model = folder / "model.int8.onnx"
    files = JointModelFiles(model, model, Path("unused.safetensors"), folder / "encoder_config.json",
                            len(labels.intents), len(labels.slot_labels))
    run = OnnxRuntimeBackend(files, BackendOptions("int8")).run
    max_tokens = manifest["training"]["max_tokens"]
    out: list[dict[str, object]] = []
    for split, examples, built in (("dev", dev, manifest["dev"]["onnx_int8"]),
                                   ("heard dev", heard_examples(code, "dev"), manifest.get("heard_dev"))):
        if not examples:
            continue
        started = time.monotonic()
        scores = evaluate(run, featurize(examples, tokenizer, max_tokens), tokenizer, labels)
        out.append({"language": code, "split": split, "requests": len(examples), "here": scores.as_dict(),
                    "built": built, "seconds": round(time.monotonic() - started, 1)})
    return out


def main(argv: list[str]) -> int:
    for code in argv or ["en"]:
        for row in shipped_scores(code):
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
