"""The report format every benchmark shares: latency percentiles, the machine, and a printed table."""

from __future__ import annotations

import json
import os
import platform
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


def machine_info() -> dict[str, Any]:
    return {"cpu": _cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "when": datetime.now(UTC).isoformat(timespec="seconds")}


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
