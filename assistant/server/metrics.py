"""Prometheus metrics of the voice server, served at GET /metrics on the websocket port.

One registry per server (not the library's global one), so tests and benchmarks can run several servers in one
process. Latencies are histograms (Prometheus aggregates them across servers); compute and audio are counters,
so `rate(voice_compute_seconds_total) / rate(voice_audio_seconds_total)` is the real-time factor.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = ["ServerMetrics", "CONTENT_TYPE_LATEST"]

# From 10 ms to 30 s: a GPU's whole pipeline to a CPU that cannot keep up.
_LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0)
_COMPUTE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.5, 2.0, 5.0)


class ServerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.stage_latency = Histogram(
            "voice_stage_latency_seconds", "Time from the arrival of the audio where speech ended to each stage",
            ["stage"], registry=r, buckets=_LATENCY_BUCKETS)
        self.compute = Histogram(
            "voice_compute_seconds",
            "Time one model call took in its worker (asr_final, asr_read, asr_partial, nlu, turn, tts)",
            ["work"], registry=r, buckets=_COMPUTE_BUCKETS)
        self.batch_size = Histogram(
            "voice_batch_size",
            "Requests per model call of the dynamic batchers (asr_final, asr_read, asr_partial, nlu, turn)",
            ["work"], registry=r, buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256))
        self.replies = Counter("voice_replies_spoken", "Spoken replies by how they ended: played (sent whole) or "
                               "cut (the speaker cut in)", ["end"], registry=r)
        self.audio = Counter("voice_audio_seconds", "Audio received from clients, in seconds", registry=r)
        self.sessions = Gauge("voice_active_sessions", "Connections with a started session", registry=r)
        self.queue_depth = Gauge("voice_queue_depth", "Model calls waiting or running, per worker", ["worker"],
                                 registry=r)
        self.partials_shed = Counter("voice_partials_shed", "Partial decodes skipped: recognizer busy, or others "
                                     "speaking while decodes are slow", ["reason"], registry=r)
        self.utterances = Counter("voice_utterances", "Utterances understood, by intent", ["intent"], registry=r)
        self.errors = Counter("voice_errors", "Error events sent to clients, by code", ["code"], registry=r)
        self.models = Info("voice_models", "Models and backends in use", registry=r)
        self.turn = Info("voice_turn", "End-of-turn settings ([turn]): model and thresholds in ms", registry=r)
        self.turn_verdicts = Counter("voice_turn_verdicts", "Reads at a pause, by what they said about the turn "
                                     "(complete, incomplete, unsure) or why none was taken (shed, failed)",
                                     ["verdict"], registry=r)
        self.connections = Gauge("voice_connections", "Open websocket connections (started or not)", registry=r)
        self.refused = Counter("voice_refused", "Requests refused: connections over a cap, a forbidden Host or "
                               "Origin, a missing or wrong token, work over a queue bound", ["reason"], registry=r)
        self.closed = Counter("voice_sessions_closed", "Connections the server closed for a limit (start_timeout, "
                              "idle_timeout, session_too_long, too_fast, unauthorized)", ["reason"], registry=r)
        self.limits = Info("voice_limits", "Per-client limits ([limits]) and access rules ([access])", registry=r)
        self.language_ready = Gauge("voice_language_ready", "1 when the language is served; 0 while it is being "
                                    "built or loaded in the background, or when that failed", ["language"],
                                    registry=r)
        self.language_build = Gauge("voice_language_build_fraction", "How far a language's background build has "
                                    "come (0-1)", ["language", "state"], registry=r)
        self.finals_reused = Counter("voice_finals_reused", "Turns acted on from the read at their last pause, "
                                     "without decoding again", registry=r)

    def render(self) -> bytes:
        return generate_latest(self.registry)
