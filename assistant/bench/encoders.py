"""`assistant bench encoders`: the English and the Chinese model's networks side by side, in one run.

What routing by language costs a request: MiniLM-L6 (English) against multilingual-e5-small (12 layers; Chinese
and mixed requests), each on its own dev requests, per backend and batch size. Speed depends on the network's
shapes, not on its weights: a model folder's `encoder_config.json`, `labels.json` and `tokenizer.json` are enough.
Its trained weights are used when the folder has them; a folder without (copied to a GPU machine to measure there)
gets untrained weights of the same shapes, and the report says which.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from assistant.bench.calls import time_calls, token_batches
from assistant.bench.report import LatencyStats, format_table, machine_info, write_report
from assistant.errors import BackendUnavailable
from assistant.language.registry import DEFAULT
from assistant.nlu.tokenizer import WordPieceTokenizer
from engines.base import BackendOptions, JointModelFiles, ShapeProfile
from engines.registry import create_backend, unavailable_reason
from models.datagen.splits import GeneratorConfig, generate_splits

__all__ = ["EncoderBenchOptions", "run_encoder_bench"]

@dataclass(frozen=True)
class EncoderBenchOptions:
    folders: dict[str, Path]  # language -> model folder
    backends: tuple[tuple[str, str], ...] = (("onnxruntime", "fp32"), ("torch-eager", "fp32"))
    batch_sizes: tuple[int, ...] = (1, 32)
    seconds: float = 3.0
    json: Path | None = None


def _files(folder: Path, scratch: Path) -> tuple[JointModelFiles, bool]:
    """The folder's model files; untrained weights of its shapes when it has none (returns trained or not)."""
    labels = json.loads((folder / "labels.json").read_text())
    intents, slots = len(labels["intents"]), len(labels["slot_labels"])
    weights = folder / "joint_model.safetensors"
    trained = weights.exists()
    if not trained:
        from safetensors.torch import save_file

        from engines.torch_joint import JointIntentSlotModel

        model = JointIntentSlotModel.from_config(folder / "encoder_config.json", intents, slots)
        weights = scratch / f"{folder.name}.safetensors"
        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(weights))
    onnx = folder / "model.onnx"
    int8 = folder / "model.int8.onnx"
    return JointModelFiles(onnx, int8 if int8.exists() else None, weights, folder / "encoder_config.json", intents,
                           slots), trained


def run_encoder_bench(options: EncoderBenchOptions) -> int:
    rows: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    trained: dict[str, bool] = {}
    top = max(options.batch_sizes)
    shapes = ShapeProfile((1, min(8, top), max(top, 8)), (8, 32, 128))
    cases = len(options.folders) * len(options.backends) * len(options.batch_sizes)
    with tempfile.TemporaryDirectory() as scratch, tqdm(total=cases, desc="bench encoders", unit="case",
                                                         file=sys.stderr) as bar:
        for language, folder in options.folders.items():
            files, trained[language] = _files(folder, Path(scratch))
            tokenizer = WordPieceTokenizer(folder / "tokenizer.json")
            _, dev = generate_splits(GeneratorConfig(train_size=0, dev_size=512, language=language))
            batches = {size: token_batches(tokenizer, [e.text for e in dev], size) for size in options.batch_sizes}
            for name, precision in options.backends:
                reason = unavailable_reason(name)
                if reason is None and name == "onnxruntime" and not files.onnx_fp32.exists():
                    reason = f"no ONNX file in {folder} (copy model.onnx there, or measure a PyTorch backend)"
                try:
                    if reason is not None:
                        raise BackendUnavailable(reason)
                    backend = create_backend(name, files, BackendOptions(precision, 0, shapes))
                except BackendUnavailable as exc:
                    skipped[f"{language} {name}:{precision}"] = str(exc)
                    bar.update(len(options.batch_sizes))
                    continue
                info = backend.info()
                for size in options.batch_sizes:
                    stats = LatencyStats.from_seconds(time_calls(backend.run, batches[size], options.seconds))
                    rows.append({"language": language, "backend": info.name, "precision": info.precision,
                                 "device": info.device, "batch_size": size, **stats.as_dict()})
                    bar.update()
                backend.close()
    english = {(r["backend"], r["precision"], r["batch_size"]): r["p50_ms"] for r in rows
               if r["language"] == DEFAULT.code}
    table = []
    for r in rows:
        base = english.get((r["backend"], r["precision"], r["batch_size"]))
        ratio = f"{r['p50_ms'] / base:.2f}x" if base and r["language"] != DEFAULT.code else "-"
        table.append([r["language"], r["backend"], r["precision"], r["batch_size"], f"{r['p50_ms']:.3f}",
                      f"{r['p99_ms']:.3f}", ratio])
    print(format_table(["model", "backend", "precision", "batch", "p50 ms", "p99 ms", "p50 vs English"], table))
    for case, reason in skipped.items():
        print(f"skipped {case}: {reason}")
    if options.json:
        write_report(options.json, {
            "benchmark": "the English (MiniLM-L6) and the Chinese (multilingual-e5-small) network, backend call",
            "command": " ".join(["assistant", "bench", "encoders", *sys.argv[3:]]), "machine": machine_info(),
            "weights_trained": trained, "rows": rows, "skipped": skipped})
    return 0
