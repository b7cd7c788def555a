"""The report format every benchmark shares: latency percentiles, the machine, and a printed table."""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import platform
import subprocess
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["LatencyStats", "machine_info", "write_report", "format_table"]


@dataclass(frozen=True)
class LatencyStats:
    """Percentiles in milliseconds over n samples."""

    n: int
    mean_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float

    @classmethod
    def from_seconds(cls, samples: Sequence[float]) -> LatencyStats:
        ms = np.asarray(samples, dtype=np.float64) * 1e3
        p50, p95, p99 = np.percentile(ms, [50, 95, 99])
        return cls(len(ms), round(float(ms.mean()), 4), round(float(p50), 4), round(float(p95), 4),
                   round(float(p99), 4))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _gpus() -> list[str]:
    """GPU name, driver and memory from nvidia-smi; empty where there is none."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in out.splitlines() if line.strip()]


def _versions() -> dict[str, str]:
    found = {}
    for package in ("torch", "onnxruntime", "ctranslate2", "faster-whisper", "tensorrt", "cuda-bindings"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found[package] = importlib.metadata.version(package)
    return found


def machine_info() -> dict[str, Any]:
    return {"cpu": _cpu_model(), "cores": os.cpu_count(), "gpus": _gpus(), "python": platform.python_version(),
            "packages": _versions(), "platform": platform.platform(),
            "when": datetime.now(UTC).isoformat(timespec="seconds")}


def metric_samples(url: str) -> list[Any] | None:
    """Every sample on a Prometheus /metrics page (prometheus_client's parser: a counter's samples are named
    NAME_total), or None when nothing answers there."""
    from prometheus_client.parser import text_string_to_metric_families

    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            text = response.read().decode()
    except OSError:
        return None
    return [sample for family in text_string_to_metric_families(text) for sample in family.samples]


def write_report(path: Path, report: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2) + "\n")


def format_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table (readable in a terminal and pasteable into the README)."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |" for row in cells]
    lines.insert(1, "| " + " | ".join("-" * w for w in widths) + " |")
    return "\n".join(lines)
