"""Voice-to-action stamps -> the `latency` event and the stage histograms, in one place.

A session hands every event it sends to `LatencyObserver.seen(event, at)` with the monotonic time it was
produced; the clock starts at the arrival of the audio where speech ended (`speech_ended`). The stages are
the events themselves: `speech_end` (the end decided, after the hangover, in real time), `transcript`, `intent`,
`result`, and for a session whose replies are spoken, `reply_audio` (its first audio sent). When the last stage is
seen, the observer returns the utterance's `latency` event to send.
"""

from __future__ import annotations

from assistant.events import IntentEvent, Latency, ReplyAudio, ResultEvent, ServerEvent, SpeechEnd, Transcript
from assistant.server.metrics import ServerMetrics

__all__ = ["LatencyObserver", "STAGES"]

# event type -> stage name, in pipeline order (the `latency` event's keys)
STAGES: dict[type[ServerEvent], str] = {SpeechEnd: "speech_end_decided", Transcript: "transcript",
                                        IntentEvent: "intent", ResultEvent: "result", ReplyAudio: "reply_audio"}


class LatencyObserver:
    def __init__(self, metrics: ServerMetrics, awaits_reply: bool = False) -> None:
        """`awaits_reply`: replies are spoken; the latency event waits for the first reply audio."""
        self._metrics = metrics
        self._last = "reply_audio" if awaits_reply else "result"
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
        if stage != self._last:
            return None
        del self._origin[utterance]
        return Latency(utterance, self._stages.pop(utterance))

    def unspoken(self, utterance: int) -> Latency | None:
        """A result whose reply was not spoken (no voice for its language, or cut before its first sound): the
        latency event as far as it got."""
        self._origin.pop(utterance, None)
        stages = self._stages.pop(utterance, None)
        return Latency(utterance, stages) if stages is not None else None

    def forget(self, utterance: int) -> None:
        """The utterance ends without a result (nothing was said, or it failed)."""
        self._origin.pop(utterance, None)
        self._stages.pop(utterance, None)
