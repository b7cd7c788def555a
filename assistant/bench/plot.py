"""Plots for benchmark reports (matplotlib, headless; an optional extra: pip install -e '.[bench]')."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

__all__ = ["plot_backend_latency"]


def plot_backend_latency(rows: Sequence[dict[str, object]], path: Path, title: str) -> None:
    """One panel per batch size: p50 bars with p99 whiskers per backend, log scale (backends differ by 10x+)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({int(str(r["batch_size"])) for r in rows})
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.5 * len(sizes), 3.6), squeeze=False)
    for ax, size in zip(axes[0], sizes, strict=True):
        chosen = [r for r in rows if r["batch_size"] == size]
        names = [f"{r['backend']}\n{r['precision']}" for r in chosen]
        p50 = [float(str(r["p50_ms"])) for r in chosen]
        p99 = [float(str(r["p99_ms"])) for r in chosen]
        bars = ax.bar(names, p50, color=["#4C72B0", "#55A868", "#C44E52", "#8172B2", "#CCB974"][: len(chosen)])
        ax.errorbar(names, p50, yerr=[[0] * len(p50), [b - a for a, b in zip(p50, p99, strict=True)]],
                    fmt="none", ecolor="black", capsize=4, label="p99")
        for bar, value in zip(bars, p50, strict=True):
            ax.annotate(f"{value:.2f}", (bar.get_x() + bar.get_width() / 2, value), ha="center", va="bottom",
                        fontsize=8, xytext=(0, 2), textcoords="offset points")
        ax.set_yscale("log")
        ax.set_title(f"batch {size}")
        ax.set_ylabel("ms per call (p50, whisker p99)")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
