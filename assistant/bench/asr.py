"""`assistant bench asr`: speech recognition per command, the product's recognizer against faster-whisper alone.

In one run and interleaved (so clocks, caches and GPU boost states are shared): faster-whisper's own
`WhisperModel.transcribe` with the same options, the product's recognizer on one command, and the product's
batched call on `--batch` commands at once (what the server does when several utterances end together).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from assistant.bench.e2e.corpus import load_corpus
from assistant.bench.report import LatencyStats, format_table, machine_info, write_report
from assistant.config import Settings
from assistant.errors import ConfigError
from assistant.language.registry import DEFAULT

__all__ = ["run_asr_bench", "ASRBenchOptions"]


@dataclass(frozen=True)
class ASRBenchOptions:
    corpus: Path  # requests.json + WAVs
    asr_model: str | None = None  # default: the config's [asr] model
    batch: int = 16  # commands in one batched call
    rounds: int = 5  # passes over the corpus
    json: Path | None = None


def run_asr_bench(settings: Settings, options: ASRBenchOptions) -> int:
    from assistant.asr.whisper import WhisperRecognizer, float_audio
    from assistant.wiring import build_recognizer, recognizer_hotwords

    asr = settings.asr
    model = options.asr_model or asr.model
    recognizer = build_recognizer(settings, model)
    if not isinstance(recognizer, WhisperRecognizer):
        raise ConfigError("bench asr measures faster-whisper's batching ([asr] engine = \"whisper\"); "
                          "bench voice --engines compares the engines")
    commands = [item.pcm for item in load_corpus(options.corpus) if item.rate == 16_000 and item.channels == 1]
    raw = recognizer.whisper  # faster-whisper itself, the same loaded weights

    def alone(pcm: bytes) -> Any:
        segments, _ = raw.transcribe(float_audio(pcm), beam_size=asr.beam_size, language=DEFAULT.code,
                                     condition_on_previous_text=False, without_timestamps=True, vad_filter=False,
                                     hotwords=recognizer_hotwords(settings))
        return list(segments)

    batched = f"recognizer, batch of {options.batch} (per command)"
    timings: dict[str, list[float]] = {"faster-whisper alone": [], "recognizer, 1 command": [], batched: []}
    for _ in range(2):  # warm-up of every path
        alone(commands[0])
        recognizer.transcribe_batch(commands[: options.batch])
    for round_ in tqdm(range(options.rounds), desc="bench asr", unit="round", file=sys.stderr):
        for pcm in commands:
            started = time.perf_counter()
            alone(pcm)
            timings["faster-whisper alone"].append(time.perf_counter() - started)
            started = time.perf_counter()
            recognizer.transcribe_batch([pcm])
            timings["recognizer, 1 command"].append(time.perf_counter() - started)
        batch = [commands[(round_ + j) % len(commands)] for j in range(options.batch)]
        started = time.perf_counter()
        recognizer.transcribe_batch(batch)
        timings[batched].append((time.perf_counter() - started) / len(batch))
    stats = {name: LatencyStats.from_seconds(samples) for name, samples in timings.items()}
    base = stats["faster-whisper alone"].p50_ms
    rows = [[name, f"{s.p50_ms:.1f}", f"{s.p95_ms:.1f}", f"{s.p50_ms / base:.2f}"] for name, s in stats.items()]
    print(f"{model} on {asr.device} ({asr.compute_type}, beam {asr.beam_size}), {len(commands)} spoken commands")
    print(format_table(["path", "p50 ms", "p95 ms", "p50 / alone"], rows))
    if options.json:
        write_report(options.json, {
            "benchmark": "speech recognition per command: product recognizer vs faster-whisper alone",
            "command": " ".join(["assistant", "bench", "asr", *sys.argv[3:]]), "machine": machine_info(),
            "model": model, "device": asr.device, "compute_type": asr.compute_type, "beam_size": asr.beam_size,
            "commands": len(commands), "rounds": options.rounds,
            "rows": [{"path": name, **s.as_dict()} for name, s in stats.items()],
        })
    return 0
