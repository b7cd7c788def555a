"""Voice-to-action stamps -> the `latency` event and the stage histograms, in one place.

A session hands every event it sends to `LatencyObserver.seen(event, at)` with the monotonic time it was
produced; the clock starts at the arrival of the audio where speech ended (`speech_ended`). The stages are
the events themselves: `speech_end` (the end decided, after the hangover, in real time), `transcript`, `intent`,
`result`. When the result is seen, the observer returns the utterance's `latency` event to send.
"""

from __future__ import annotations

from assistant.events import IntentEvent, Latency, ResultEvent, ServerEvent, SpeechEnd, Transcript
from assistant.server.metrics import ServerMetrics

__all__ = ["LatencyObserver", "STAGES"]

# event type -> stage name, in pipeline order (the `latency` event's keys)
STAGES: dict[type[ServerEvent], str] = {SpeechEnd: "speech_end_decided", Transcript: "transcript",
                                        IntentEvent: "intent", ResultEvent: "result"}


class LatencyObserver:
    def __init__(self, metrics: ServerMetrics) -> None:
        self._metrics = metrics
        self._origin: dict[int, float] = {}  # utterance -> arrival of the audio where its speech ended
        self._stages: dict[int, dict[str, float]] = {}

    def speech_ended(self, utterance: int, audio_arrived_at: float) -> None:
        self._origin[utterance] = audio_arrived_at
        self._stages[utterance] = {}

    def seen(self, event: ServerEvent, at: float) -> Latency | None:
        stage = STAGES.get(type(event))
        utterance = getattr(event, "utterance", None)
        if stage is None or utterance not in self._origin:
            return None
        elapsed = at - self._origin[utterance]
        self._stages[utterance][stage] = round(elapsed * 1e3, 1)
        self._metrics.stage_latency.labels(stage).observe(elapsed)
        if stage != "result":
            return None
        del self._origin[utterance]
        return Latency(utterance, self._stages.pop(utterance))

    def forget(self, utterance: int) -> None:
        """The utterance ends without a result (nothing was said, or it failed)."""
        self._origin.pop(utterance, None)
        self._stages.pop(utterance, None)
