"""`assistant bench model-files`: what a served model folder costs, folders side by side in one run.

For each folder (the shipped models by default; an older build's folder beside them to compare): the size of the
file a CPU serves, the vocabulary, how long ONNX Runtime takes to load it, how much memory loading it adds to a
fresh process, the per-request latency on its language's dev requests (batch 1), and the dev scores its build
recorded. Load time and memory are measured in a fresh process per folder and sample, so one folder's pages never
help another's.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from assistant.bench.report import format_table, machine_info, write_report
from assistant.nlu.model_folder import load_model

__all__ = ["ModelFilesOptions", "run_model_files_bench"]

# Run in a fresh interpreter: import the runtime, read RSS, load the model, read RSS, time a request at a time.
_PROBE = r"""
import json, sys, time
import onnxruntime, tokenizers, numpy
from assistant.nlu.model_folder import load_model
from assistant.nlu.tokenizer import WordPieceTokenizer
from engines.base import BackendOptions
from engines.onnxruntime import OnnxRuntimeBackend

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

folder, texts = sys.argv[1], json.loads(sys.stdin.read())
before = rss()
started = time.perf_counter()
model = load_model(__import__("pathlib").Path(folder))
backend = OnnxRuntimeBackend(model.files, BackendOptions("auto", 1))
tokenizer = WordPieceTokenizer(model.tokenizer_file)
load_s = time.perf_counter() - started
loaded = rss()
latencies = []
for text in texts:
    batch = tokenizer.batch(tokenizer.tokenize([text]))
    t = time.perf_counter()
    backend.run(batch.input_ids, batch.attention_mask)
    latencies.append(time.perf_counter() - t)
print(json.dumps({"load_s": load_s, "rss_added_mb": loaded - before, "rss_mb": rss(), "latencies": latencies}))
"""


@dataclass(frozen=True)
class ModelFilesOptions:
    folders: dict[str, Path]  # label -> model folder
    samples: int = 5  # fresh processes per folder
    requests: int = 200  # dev requests timed in each
    json: Path | None = None


def _dev_texts(language: str, count: int) -> list[str]:
    from models.datagen.splits import generate_splits
    from models.model_cache import language_recipe

    _, dev = generate_splits(language_recipe(language)[0])
    return [example.text for example in dev[:count]]


def _probe(folder: Path, texts: list[str]) -> dict[str, Any]:
    run = subprocess.run([sys.executable, "-c", _PROBE, str(folder)], input=json.dumps(texts), capture_output=True,
                         text=True, check=True)
    result: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return result


def run_model_files_bench(options: ModelFilesOptions) -> int:
    rows, report = [], {}
    texts: dict[str, list[str]] = {}
    work = [(label, i) for label in options.folders for i in range(options.samples)]
    samples: dict[str, list[dict[str, Any]]] = {label: [] for label in options.folders}
    for label, _ in tqdm(sorted(work, key=lambda item: item[1]), desc="model folders", unit="process"):
        model = load_model(options.folders[label])  # alternated: every folder sees the machine as the others do
        language = str(model.manifest["language"])
        texts.setdefault(language, _dev_texts(language, options.requests))
        samples[label].append(_probe(model.folder, texts[language]))
    for label, folder in options.folders.items():
        model = load_model(folder)
        served = model.files.onnx_int8 or model.files.onnx_fp32
        latencies = [s for sample in samples[label] for s in sample["latencies"]]
        vocabulary = json.loads(model.files.encoder_config.read_text())["vocab_size"]
        entry = {
            "folder": str(folder), "language": model.manifest["language"], "key": model.key,
            "served_file": served.name, "served_mb": round(served.stat().st_size / 1e6, 1),
            "tokenizer_mb": round(model.tokenizer_file.stat().st_size / 1e6, 2), "vocabulary": vocabulary,
            "word_embeddings": model.manifest.get("int8_word_embeddings", "float32"),
            "load_s_median": round(statistics.median(s["load_s"] for s in samples[label]), 3),
            "rss_added_mb_median": round(statistics.median(s["rss_added_mb"] for s in samples[label]), 1),
            "latency_ms_p50": round(1000 * statistics.median(latencies), 2),
            "dev_int8": model.manifest["dev"].get("onnx_int8"),
        }
        report[label] = entry
        dev = entry["dev_int8"] or {}
        rows.append([label, entry["language"], entry["vocabulary"], entry["word_embeddings"], entry["served_mb"],
                     entry["load_s_median"], entry["rss_added_mb_median"], entry["latency_ms_p50"],
                     dev.get("intent_accuracy", "-"), dev.get("slot_f1", "-"), dev.get("sentence_accuracy", "-")])
    print(format_table(["folder", "language", "vocabulary", "embeddings", "file MB", "load s", "memory +MB",
                        "p50 ms", "dev intent %", "dev slot F1", "dev sentence %"], rows))
    if options.json is not None:
        write_report(options.json, {"command": " ".join(["assistant", "bench", "model-files", *sys.argv[3:]]),
                                    "samples": options.samples, "requests": options.requests,
                                    "machine": machine_info(), "folders": report})
    return 0
