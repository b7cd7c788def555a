"""`assistant bench nlu`: NLU backends side by side in one run.

For each backend and batch size: the whole backend call (numpy ids + mask in, numpy logits out) on real
tokenized requests, p50/p99 latency and throughput; the first backend listed with torch-eager is the baseline
that speed-ups are stated against. With `--language en,zh` both models are measured in the same run (English
requests on MiniLM, Chinese ones on multilingual-e5): what routing by language costs a Chinese request.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from tqdm import tqdm

from assistant.bench.calls import MIN_CALLS, time_calls, token_batches
from assistant.bench.e2e.corpus import CORPUS_NOW, CORPUS_TZ
from assistant.bench.report import LatencyStats, format_table, machine_info, write_report
from assistant.config import Settings
from assistant.errors import BackendUnavailable
from assistant.language.registry import DEFAULT, get
from assistant.nlu.model_folder import NLUModel
from assistant.nlu.tokenizer import WordPieceTokenizer
from assistant.wiring import language_model
from engines.base import BackendOptions, ShapeProfile
from engines.registry import create_backend, unavailable_reason
from models.datagen.splits import GeneratorConfig, generate_splits

__all__ = ["run_nlu_bench", "whole_path", "BenchRow", "NLUBenchOptions"]

BASELINE = "torch-eager"


@dataclass(frozen=True)
class NLUBenchOptions:
    backends: tuple[tuple[str, str], ...] = (("onnxruntime", "fp32"), ("onnxruntime", "int8"), ("torch-eager", "fp32"))
    batch_sizes: tuple[int, ...] = (1, 32)
    seconds: float = 3.0  # measuring time per backend and batch size
    threads: int = 0  # CPU threads per call (0: the runtime's default)
    json: Path | None = None
    plot: Path | None = None
    whole_path: bool = False  # also: the whole text path against the model call alone (the first backend)
    languages: tuple[str, ...] = (DEFAULT.code,)  # which models: "en" (MiniLM), "zh" (multilingual-e5)


@dataclass(frozen=True)
class BenchRow:
    backend: str
    precision: str
    batch_size: int
    latency: LatencyStats
    throughput: float  # requests per second
    language: str = DEFAULT.code  # whose model: "en" MiniLM, "zh" multilingual-e5

    def as_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "precision": self.precision, "batch_size": self.batch_size,
                **self.latency.as_dict(), "requests_per_s": round(self.throughput, 1), "language": self.language}


def whole_path(settings: Settings, model: NLUModel, backend_spec: tuple[str, str], texts: list[str],
               seconds: float) -> dict[str, Any]:
    """One request at a time: the backend call alone, and the whole text path a request takes (clean, tokenize,
    model, decode, normalize, guard, dispatch as a dry run against an empty SQLite store), interleaved so both
    see the same machine state. The difference is what the text stages around the model cost."""
    from assistant.text_pipeline import Turn
    from assistant.wiring import build_parser, build_text_pipeline

    name, precision = backend_spec
    tuned = replace(settings, nlu=replace(settings.nlu, backend=name, precision=precision))
    parser = build_parser(tuned, model)
    pipeline = build_text_pipeline(tuned, Path(":memory:"), commit=False, parser=parser)
    tokenizer = parser.tokenizer
    batches = [tokenizer.batch([item]) for item in tokenizer.tokenize(texts)]
    now = datetime.fromisoformat(CORPUS_NOW).replace(tzinfo=ZoneInfo(CORPUS_TZ))  # the requests' reference
    model_s: list[float] = []
    path_s: list[float] = []
    deadline = time.perf_counter() + seconds
    i = 0
    while time.perf_counter() < deadline or len(path_s) < MIN_CALLS:
        batch, text = batches[i % len(batches)], texts[i % len(texts)]
        started = time.perf_counter()
        parser.backend.run(batch.input_ids, batch.attention_mask)
        model_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        pipeline.act_many([Turn(text, f"whole-path-{i}", now)], commit=False)
        path_s.append(time.perf_counter() - started)
        i += 1
    model_only, whole = LatencyStats.from_seconds(model_s), LatencyStats.from_seconds(path_s)
    info = parser.backend.info()
    print(format_table(["backend", "model call p50 ms", "whole text path p50 ms", "text stages p50 ms"], [[
        f"{info.name} {info.precision}", f"{model_only.p50_ms:.3f}", f"{whole.p50_ms:.3f}",
        f"{whole.p50_ms - model_only.p50_ms:.3f}"]]))
    parser.backend.close()
    return {"backend": info.name, "precision": info.precision, "device": info.device, "requests": len(path_s),
            "model_call": model_only.as_dict(), "whole_text_path": whole.as_dict()}


def _model_and_texts(settings: Settings, language: str) -> tuple[NLUModel, list[str]]:
    """The language's model and 512 of its dev requests (held-out templates)."""
    model = language_model(settings, get(language))
    _, dev = generate_splits(GeneratorConfig(train_size=0, dev_size=512, language=language))
    return model, [e.text for e in dev]


def run_nlu_bench(settings: Settings, options: NLUBenchOptions) -> int:
    sizes = list(options.batch_sizes)
    specs = options.backends
    rows: list[BenchRow] = []
    skipped: dict[str, str] = {}
    devices: dict[str, str] = {}
    models: dict[str, str] = {}
    # GPU backends are built / captured for the largest batch measured, so no batch is split
    configured = settings.nlu.shapes
    top = max(max(sizes), configured.batch[2])
    shapes = ShapeProfile((1, min(8, top), top), configured.seq)
    loaded = {language: _model_and_texts(settings, language) for language in options.languages}
    cases = len(specs) * len(sizes) * len(loaded)
    with tqdm(total=cases, desc="bench nlu", unit="case", file=sys.stderr) as bar:
        for language, (model, texts) in loaded.items():
            models[language] = model.key
            tokenizer = WordPieceTokenizer(model.tokenizer_file)
            batches = {size: token_batches(tokenizer, texts, size) for size in sizes}
            for name, precision in specs:
                reason = unavailable_reason(name)
                if reason is not None:
                    skipped[f"{name}:{precision}"] = reason
                    bar.update(len(sizes))
                    continue
                try:
                    backend = create_backend(name, model.files, BackendOptions(precision, options.threads, shapes))
                except BackendUnavailable as exc:
                    skipped[f"{name}:{precision}"] = str(exc)
                    bar.update(len(sizes))
                    continue
                info = backend.info()
                devices[info.name] = info.device
                for size in sizes:
                    samples = time_calls(backend.run, batches[size], options.seconds)
                    bar.update()
                    stats = LatencyStats.from_seconds(samples)
                    rows.append(BenchRow(info.name, info.precision, size, stats, size * len(samples) / sum(samples),
                                         language))
                backend.close()
    # the baseline is the first eager PyTorch backend measured (torch-eager on a CPU, torch-eager-cuda on a GPU)
    base_name = next((r.backend for r in rows if r.backend.startswith(BASELINE)), BASELINE)
    baseline = {(r.language, r.batch_size): r for r in rows if r.backend == base_name}
    table = []
    for r in rows:
        base = baseline.get((r.language, r.batch_size))
        speedup = f"{base.latency.p50_ms / r.latency.p50_ms:.1f}x" if base else "-"
        table.append([r.language, r.backend, r.precision, r.batch_size, f"{r.latency.p50_ms:.3f}",
                      f"{r.latency.p99_ms:.3f}", f"{r.throughput:,.0f}", speedup])
    print(format_table(["model", "backend", "precision", "batch", "p50 ms", "p99 ms", "requests/s",
                        f"p50 speed-up vs {base_name}"], table))
    for spec, reason in skipped.items():
        print(f"skipped {spec}: {reason}")
    measured = [(name, precision) for name, precision in specs if f"{name}:{precision}" not in skipped]
    first_model, first_texts = next(iter(loaded.values()))
    path = whole_path(settings, first_model, measured[0], first_texts, options.seconds) \
        if options.whole_path and measured else None
    if options.plot:
        from assistant.bench.plot import plot_backend_latency

        gpu = next((d for d in devices.values() if d.startswith("cuda") and " " in d), None)  # "cuda:0 NAME"
        where = gpu.split(" ", 1)[-1] if gpu else f"{machine_info()['cpu']} ({machine_info()['cores']} cores)"
        plot_backend_latency([r.as_dict() for r in rows], options.plot, f"NLU backend call, {where}")
    if options.json:
        write_report(options.json, {
            "benchmark": "nlu backends, whole backend call (numpy in, numpy out)",
            "command": " ".join(["assistant", "bench", "nlu", *sys.argv[3:]]),
            "machine": machine_info(), "model": models[options.languages[0]], "models": models,
            "threads": options.threads,
            "baseline": base_name, "devices": devices, "gpu_shapes": shapes.describe(),
            "rows": [r.as_dict() for r in rows], "skipped": skipped, "whole_path": path,
        })
    return 0
