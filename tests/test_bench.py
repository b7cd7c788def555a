"""The benchmark harness itself: structure and correctness of its report, never its speed."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.bench.report import LatencyStats, format_table


def test_latency_stats_percentiles() -> None:
    stats = LatencyStats.from_seconds([i / 1000 for i in range(1, 101)])  # 1..100 ms
    assert stats.n == 100
    assert stats.p50_ms == pytest.approx(50.5)
    assert stats.p99_ms == pytest.approx(99.01)
    assert stats.mean_ms == pytest.approx(50.5)


def test_table_is_markdown() -> None:
    table = format_table(["a", "bb"], [[1, "x"], [22, "yyy"]])
    assert table.splitlines() == ["| a  | bb  |", "| -- | --- |", "| 1  | x   |", "| 22 | yyy |"]


@pytest.mark.usefixtures("meeting_model")
def test_bench_nlu_reports_every_backend_and_batch(tmp_path: Path) -> None:
    out = tmp_path / "nlu.json"
    proc = subprocess.run(
        [sys.executable, "-m", "assistant", "bench", "nlu", "--seconds", "0.05", "--batch-sizes", "1,4",
         "--backends", "onnxruntime:fp32,torch-eager,no-such-backend", "--json", str(out),
         "--plot", str(tmp_path / "nlu.png")],
        capture_output=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    report = json.loads(out.read_text())
    rows = {(r["backend"], r["batch_size"]) for r in report["rows"]}
    assert rows == {("onnxruntime", 1), ("onnxruntime", 4), ("torch-eager", 1), ("torch-eager", 4)}
    assert all(r["n"] >= 20 and 0 < r["p50_ms"] <= r["p99_ms"] for r in report["rows"])
    assert "unknown backend" in report["skipped"]["no-such-backend:auto"]
    assert report["machine"]["cores"] >= 1
    assert "speed-up vs torch-eager" in proc.stdout.decode()
    assert (tmp_path / "nlu.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
