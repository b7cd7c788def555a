"""A point's report: the server's compute per second of audio from its /metrics, the latency of each stage, the
tables printed and the JSON written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from assistant.bench.e2e.judge import CLIENT_STAGES, Measurement, Verdict
from assistant.bench.report import LatencyStats, format_table, metric_samples

__all__ = ["Point", "summarize", "print_report", "metrics_url", "scrape", "server_load", "e2e_plot_title",
           "SERVER_STAGES"]

SERVER_STAGES = ("speech_end_decided", "transcript", "intent", "result")  # the `latency` event's stamps


def metrics_url(url: str) -> str:
    return url.replace("ws://", "http://", 1).replace("wss://", "https://", 1).rstrip("/") + "/metrics"


def scrape(url: str) -> dict[str, Any] | None:
    """The server's counters that the report needs and its models, or None when it has no /metrics."""
    samples = metric_samples(metrics_url(url))
    if samples is None:
        return None
    out: dict[str, Any] = {"compute_s": 0.0, "asr_s": 0.0, "audio_s": 0.0, "partials": 0.0, "partials_shed": 0.0,
                           "models": {}}
    for sample in samples:
        if sample.name == "voice_models_info":
            out["models"] = dict(sample.labels)
        elif sample.name == "voice_compute_seconds_sum":
            out["compute_s"] += sample.value
            if sample.labels.get("work", "").startswith("asr"):
                out["asr_s"] += sample.value
        elif sample.name == "voice_audio_seconds_total":
            out["audio_s"] = sample.value
        elif sample.name == "voice_compute_seconds_count" and sample.labels.get("work") == "asr_partial":
            out["partials"] = sample.value
        elif sample.name == "voice_partials_shed_total":
            out["partials_shed"] += sample.value
    return out


def server_load(before: dict[str, Any] | None, after: dict[str, Any] | None, wall_s: float
                 ) -> dict[str, Any] | None:
    """Compute per second of audio (below 1 the server can keep up in principle) and the share of wall time the
    recognizer was busy, over one point."""
    if before is None or after is None:
        return None
    delta = {k: after[k] - before[k] for k in ("compute_s", "asr_s", "audio_s", "partials", "partials_shed")}
    audio = delta["audio_s"] or float("nan")
    return {"compute_per_audio_second": round(delta["compute_s"] / audio, 4),
            "asr_busy_share": round(delta["asr_s"] / wall_s, 4), "audio_s": round(delta["audio_s"], 1),
            "partials_decoded": int(delta["partials"]), "partials_shed": int(delta["partials_shed"]),
            "models": after["models"]}


def _stats(values: Sequence[float]) -> dict[str, Any] | None:
    return LatencyStats.from_seconds(values).as_dict() if values else None


Stats = dict[str, Any] | None  # LatencyStats.as_dict() of a stage; None when no request reached it


@dataclass(frozen=True)
class Point:
    """One client count's result. `server`: what its /metrics said over the point (compute per second of audio,
    the models); `load`: what the layout's processes used (`LoadProbe`). `to_dict()` is the report's JSON."""

    clients: int
    wall_s: float
    measurements: tuple[Measurement, ...]
    verdict: Verdict
    client_stages: dict[str, Stats]
    server_stages: dict[str, Stats]
    server: dict[str, Any] | None = None
    load: dict[str, Any] | None = None

    @property
    def keeps_up(self) -> bool:
        return self.verdict.keeps_up

    @property
    def voice_to_action(self) -> Stats:
        return self.client_stages["result"]

    @property
    def right(self) -> int:
        return sum(m.right for m in self.measurements)

    def to_dict(self) -> dict[str, Any]:
        measurements = self.measurements
        return {
            "clients": self.clients, "wall_s": round(self.wall_s, 1), "requests": len(measurements),
            "understood": sum(m.intent is not None for m in measurements), "right": self.right,
            "lost": sum(m.lost for m in measurements), "keeps_up": self.keeps_up, "verdict": self.verdict.reason,
            "voice_to_action": self.voice_to_action, "client_stages": self.client_stages,
            "server_stages": self.server_stages, "server": self.server, "load": self.load,
            "measurements": [asdict(m) for m in measurements],
        }


def summarize(clients: int, measurements: Sequence[Measurement], wall_s: float, verdict: Verdict,
              server: dict[str, Any] | None, load: dict[str, Any] | None = None) -> Point:
    answered = [m for m in measurements if not m.lost]
    client_stages = {s: _stats([m.stages_s[s] for m in answered if s in m.stages_s]) for s in CLIENT_STAGES}
    server_stages = {s: _stats([m.server_ms[s] / 1e3 for m in answered if s in m.server_ms]) for s in SERVER_STAGES
                     if any(s in m.server_ms for m in answered)}
    return Point(clients, wall_s, tuple(measurements), verdict, client_stages, server_stages, server, load)


def _ms(stats: dict[str, Any] | None, key: str) -> str:
    return f"{stats[key]:.0f}" if stats else "-"


def _load_row(p: Point) -> list[Any]:
    """The point's line in the 'where the time went' table."""
    load = p.load or {}
    if not load:
        return ["-", p.clients, *["-"] * 6]
    gpus, batching = load["gpu_utilization_percent"], load["triton_batching"] or {}
    return [load["layout"], p.clients, "+".join(f"{c:.2f}" for c in load["gateway_cores"]),
            "-" if load["model_server_cores"] is None else f"{load['model_server_cores']:.2f}",
            f"{load['client_cores']:.2f}", load["frames_per_s_per_gateway"],
            "/".join(f"{g:.0f}" for g in gpus) if gpus else "-",
            ", ".join(f"{model} {b['requests_per_execution']:g} / {b['queue_ms_mean']:g} / "
                      f"{b['execution_ms_mean']:g} ms" for model, b in sorted(batching.items())) or "-"]


def print_report(points: Sequence[Point]) -> None:
    rows = []
    for p in points:
        v, st = p.voice_to_action, p.client_stages
        load = p.server or {}
        requests = len(p.measurements)
        rows.append([p.clients, requests, f"{p.right}/{requests}", _ms(v, "p50_ms"),
                     _ms(v, "p95_ms"), _ms(v, "p99_ms"), _ms(st["speech_end"], "p50_ms"),
                     _ms(st["transcript"], "p50_ms"), _ms(st["intent"], "p50_ms"),
                     load.get("compute_per_audio_second", "-"), p.verdict.reason])
    print(format_table(["clients", "requests", "right", "voice-to-action p50 ms", "p95 ms", "p99 ms",
                        "speech_end p50", "transcript p50", "intent p50", "compute/audio s", "verdict"], rows))
    if any(p.load for p in points):
        print("\nwhere the time went (CPU cores busy over the point; frames: 20 ms websocket frames received):")
        print(format_table(["layout", "clients", "gateway cores", "model-server cores", "client cores",
                            "frames/s per gateway", "GPU %",
                            "batching (requests per execution / queue / execution ms)"],
                           [_load_row(p) for p in points]))
    for p in points:
        stage_rows = [[f"client: {s}", _ms(x, "p50_ms"), _ms(x, "p95_ms"), _ms(x, "p99_ms")]
                      for s, x in p.client_stages.items()]
        stage_rows += [[f"server: {s}", _ms(x, "p50_ms"), _ms(x, "p95_ms"), _ms(x, "p99_ms")]
                       for s, x in p.server_stages.items()]
        where = f" ({p.load['layout']})" if p.load else ""
        print(f"\n{p.clients} client(s){where}, ms from the end of speech in the audio:")
        print(format_table(["stage", "p50", "p95", "p99"], stage_rows))


def e2e_plot_title(machine: dict[str, Any], models: dict[str, str]) -> str:
    where = machine["gpus"][0].split(",")[0] if machine.get("gpus") else f"{machine['cores']}-core {machine['cpu']}"
    return (f"voice-to-action under load, {where}: faster-whisper {models.get('asr_model', '?')} "
            f"({models.get('asr_device', '?')}), NLU {models.get('nlu_backend', '?')} "
            f"{models.get('nlu_precision', '')}")
