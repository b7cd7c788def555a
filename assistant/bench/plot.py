"""Plots for benchmark reports (matplotlib, headless; an optional extra: pip install -e '.[bench]')."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assistant.language.registry import DEFAULT

__all__ = ["plot_backend_latency", "plot_e2e", "plot_turns", "plot_soak", "plot_store"]


def plot_backend_latency(rows: Sequence[dict[str, object]], path: Path, title: str) -> None:
    """One panel per batch size: p50 bars with p99 whiskers per backend, log scale (backends differ by 10x+)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({int(str(r["batch_size"])) for r in rows})
    fig, axes = plt.subplots(1, len(sizes), figsize=(5.2 * len(sizes), 3.8), squeeze=False)
    for ax, size in zip(axes[0], sizes, strict=True):
        chosen = [r for r in rows if r["batch_size"] == size]
        names = [f"{r['backend']}\n{r['precision']}"
                 + (f"\n{r['language']}" if r.get("language", DEFAULT.code) != DEFAULT.code else "")
                 for r in chosen]
        p50 = [float(str(r["p50_ms"])) for r in chosen]
        p99 = [float(str(r["p99_ms"])) for r in chosen]
        palette = ["#4C72B0", "#55A868", "#C44E52", "#8172B2", "#CCB974", "#64B5CD", "#8C8C8C"]
        bars = ax.bar(names, p50, color=[palette[i % len(palette)] for i in range(len(chosen))])
        ax.tick_params(axis="x", labelsize=7)
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


def _against_clients(axis: Any, clients: Sequence[int], ylabel: str, title: str) -> None:
    """An axis whose x is the number of concurrent clients (a log-2 scale, one tick per count measured)."""
    axis.set_xscale("log", base=2)
    axis.set_xticks(clients, [str(c) for c in clients])
    axis.set_xlabel("concurrent real-time clients")
    axis.set_ylabel(ylabel)
    axis.set_title(title)
    axis.grid(alpha=0.3)


def plot_e2e(points: Sequence[dict[str, Any]], path: Path, title: str, aim_s: float | None = None) -> None:
    """Left: the distribution of each stage's time from the end of speech (client clock), one box per client
    count. Right: voice-to-action p50/p95/p99 against the number of concurrent clients."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stages = ("speech_end", "transcript", "intent", "result", "first_reply_audio")
    colors = ["#4C72B0", "#55A868", "#C44E52", "#8172B2", "#CCB974", "#64B5CD", "#8C8C8C"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    width = 0.8 / max(1, len(points))
    for i, point in enumerate(points):
        samples = [[m["stages_s"][s] for m in point["measurements"] if s in m["stages_s"]] for s in stages]
        positions = [k + (i - (len(points) - 1) / 2) * width for k in range(len(stages))]
        drawn = [(p, x) for p, x in zip(positions, samples, strict=True) if x]
        if not drawn:
            continue
        boxes = left.boxplot([x for _, x in drawn], positions=[p for p, _ in drawn], widths=width * 0.9,
                             patch_artist=True, showfliers=True, flierprops={"markersize": 2})
        for box in boxes["boxes"]:
            box.set_facecolor(colors[i % len(colors)])
        left.plot([], [], color=colors[i % len(colors)], linewidth=6, label=f"{point['clients']} client(s)")
    left.set_xticks(range(len(stages)), [f"{s}\nreceived" for s in stages])
    left.set_ylabel("seconds after the end of speech")
    left.set_ylim(bottom=0)
    left.set_title("each stage, on the client clock")
    left.legend(fontsize=8)
    left.grid(axis="y", alpha=0.3)

    clients = [p["clients"] for p in points if p["voice_to_action"]]
    for key, style in (("p50_ms", "o-"), ("p95_ms", "s--"), ("p99_ms", "^:")):
        right.plot(clients, [p["voice_to_action"][key] / 1e3 for p in points if p["voice_to_action"]], style,
                   label=key.removesuffix("_ms"))
    for p in points:
        if not p["keeps_up"]:
            right.annotate("cannot keep up", (p["clients"], (p["voice_to_action"] or {}).get("p95_ms", 0) / 1e3),
                           color="#C44E52", fontsize=8, xytext=(4, 4), textcoords="offset points")
    if aim_s is not None:
        right.axhline(aim_s, color="#C44E52", linewidth=1, alpha=0.6, label=f"aim p95 {aim_s:g} s")
    _against_clients(right, clients, "voice-to-action, seconds", "voice-to-action against load")
    right.set_ylim(bottom=0)
    right.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_e2e_layouts(points: Sequence[dict[str, Any]], path: Path, title: str, aim_s: float | None = None) -> None:
    """Layouts side by side (one colour each) against the number of concurrent clients: voice-to-action p50 and
    p95, the share of requests done right, and the CPU cores each part used (gateways, model server, clients)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = ["#4C72B0", "#C44E52", "#55A868", "#8172B2", "#CCB974"]
    layouts = list(dict.fromkeys(p["load"]["layout"] for p in points))
    fig, (latency, right, cores) = plt.subplots(1, 3, figsize=(15, 4.4))
    for i, layout in enumerate(layouts):
        color = colors[i % len(colors)]
        mine = [p for p in points if p["load"]["layout"] == layout and p["voice_to_action"]]
        clients = [p["clients"] for p in mine]
        for key, style in (("p50_ms", "o-"), ("p95_ms", "s--")):
            latency.plot(clients, [p["voice_to_action"][key] / 1e3 for p in mine], style, color=color,
                         label=f"{layout} {key.removesuffix('_ms')}")
        for p in mine:
            if not p["keeps_up"]:
                latency.annotate("cannot keep up", (p["clients"], p["voice_to_action"]["p95_ms"] / 1e3),
                                 color=color, fontsize=8, xytext=(4, 4), textcoords="offset points")
        right.plot(clients, [100 * p["right"] / max(p["requests"], 1) for p in mine], "o-", color=color,
                   label=layout)
        cores.plot(clients, [sum(p["load"]["gateway_cores"]) for p in mine], "o-", color=color,
                   label=f"{layout}: gateways")
        if any(p["load"]["model_server_cores"] is not None for p in mine):
            cores.plot(clients, [p["load"]["model_server_cores"] or 0 for p in mine], "s--", color=color,
                       label=f"{layout}: model server")
        cores.plot(clients, [p["load"]["client_cores"] for p in mine], "^:", color=color,
                   label=f"{layout}: clients")
    if aim_s is not None:
        latency.axhline(aim_s, color="#8C8C8C", linewidth=1, alpha=0.8, label=f"aim p95 {aim_s:g} s")
    all_clients = sorted({p["clients"] for p in points})
    for axis, label, heading in ((latency, "voice-to-action, seconds", "voice-to-action against load"),
                                 (right, "requests done right, %", "the same answer under any load"),
                                 (cores, "CPU cores busy", "where the CPU went")):
        _against_clients(axis, all_clients, label, heading)
        axis.legend(fontsize=7)
    latency.set_ylim(bottom=0)
    cores.set_ylim(bottom=0)
    right.set_ylim(top=100.5)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_turns(points: Sequence[dict[str, Any]], path: Path, title: str) -> None:
    """False-cutoff rate against the p50 wait after the turn (lower left is better), one panel per split: each
    policy a point, a sweep of the reading's settings (`reading:open=MS+unsure=MS`) a curve; the legend says how
    many turns each policy booked as meant."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    splits = [s for s in ("tune", "untuned", "pause-free") if any(s in p["by_split"] for p in points)
              and any(p["by_split"].get(s, {}).get("pauses") for p in points)]
    fig, axes = plt.subplots(1, max(1, len(splits)), figsize=(6.2 * max(1, len(splits)), 4.8), squeeze=False)
    palette = ["#4C72B0", "#55A868", "#8172B2", "#CCB974", "#64B5CD", "#8C8C8C"]
    for ax, split in zip(axes[0], splits or ["all"], strict=False):
        scored = [(p["policy"], p["by_split"].get(split, p)) for p in points]
        scored = [(name, s) for name, s in scored if s.get("wait") is not None]
        sweep = [(name, s) for name, s in scored if name.startswith("reading:")]
        if sweep:
            ax.plot([s["wait"]["p50_ms"] for _, s in sweep], [100 * s["false_cutoff_rate"] for _, s in sweep],
                    color="#C44E52", alpha=0.5, linewidth=1, marker=".", label="reading, settings swept")
            for name, s in sweep:
                ax.annotate(name.partition(":")[2], (s["wait"]["p50_ms"], 100 * s["false_cutoff_rate"]), fontsize=6,
                            textcoords="offset points", xytext=(3, 3))
        for i, (name, s) in enumerate(n for n in scored if not n[0].startswith("reading:")):
            ours = name == "reading"
            ax.scatter([s["wait"]["p50_ms"]], [100 * s["false_cutoff_rate"]], s=110 if ours else 60, zorder=3,
                       color="#C44E52" if ours else palette[i % len(palette)], marker="*" if ours else "o",
                       label=f"{name}: {s['right']}/{s['turns']} booked as meant")
        ax.axhline(10, color="gray", linestyle=":", linewidth=1)
        ax.set_xlabel("wait from the end of speech to the result, p50 (ms)")
        ax.set_ylabel("false cutoffs at pauses inside turns (%)")
        ax.set_ylim(0, 105)
        ax.set_xlim(0, max([s["wait"]["p50_ms"] for _, s in scored] or [1.0]) * 1.1)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
        ax.set_title(f"{split} split", fontsize=9)
    fig.suptitle(textwrap.fill(title, 110), fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_soak(samples: Sequence[tuple[float, float]], path: Path, title: str) -> None:
    """The server's resident memory over the soak (MB against minutes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.8, 3.6))
    ax.plot([t / 60 for t, _ in samples], [mb for _, mb in samples], color="#4C72B0", marker=".", linewidth=1.2)
    ax.set_xlabel("minutes of load")
    ax.set_ylabel("server RSS (MB)")
    ax.set_ylim(0, max([mb for _, mb in samples] or [1.0]) * 1.2)
    ax.grid(alpha=0.3)
    ax.set_title(textwrap.fill(title, 70), fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_store(operations: dict[str, dict[str, dict[str, Any]]], path: Path, title: str) -> None:
    """Per operation, each backend's p50 bar with a p99 whisker, log scale (CalDAV is HTTP, SQLite a file)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    backends = list(operations)
    names = list(next(iter(operations.values())))
    fig, ax = plt.subplots(figsize=(8.5, 3.8))
    width = 0.8 / len(backends)
    for i, backend in enumerate(backends):
        p50 = [float(operations[backend][op]["p50_ms"]) for op in names]
        p99 = [float(operations[backend][op]["p99_ms"]) for op in names]
        xs = [x + (i - (len(backends) - 1) / 2) * width for x in range(len(names))]
        ax.bar(xs, p50, width, label=backend, color=["#4C72B0", "#C44E52", "#55A868"][i % 3])
        whiskers: list[list[float]] = [[0.0] * len(p50), [b - a for a, b in zip(p50, p99, strict=True)]]
        ax.errorbar(xs, p50, yerr=whiskers, fmt="none", ecolor="black", capsize=3)
    ax.set_xticks(range(len(names)), names)
    ax.set_yscale("log")
    ax.set_ylabel("ms per operation (p50, whisker p99)")
    ax.legend()
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
