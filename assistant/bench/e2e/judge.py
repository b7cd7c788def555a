"""What the server's events for one request come to: a measurement per utterance (stage times from the end of
speech in the audio, the server's own stamps, right or not, lost or not), and whether a point kept up."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from assistant.bench.e2e.corpus import CorpusItem
from assistant.clients.send import Received
from assistant.events import IntentEvent, Latency, ReplyHeard, ResultEvent, ServerEvent, SpeechEnd, Transcript

__all__ = ["Measurement", "Verdict", "measure_request", "judge", "CLIENT_STAGES"]

# client-clock events, in pipeline order: the stage each is measured as
CLIENT_STAGES: dict[str, type[ServerEvent]] = {"speech_end": SpeechEnd, "transcript": Transcript,
                                               "intent": IntentEvent, "result": ResultEvent,
                                               "first_reply_audio": ReplyHeard}  # with replies spoken
GROWTH_LIMIT_S = 1.0  # latency that rises by more than this over one point (trend line) is falling behind


@dataclass
class Measurement:
    """One utterance (or one lost request) as a client saw it."""

    client: int
    file: str
    sent_at_s: float  # when the request's first frame went out, seconds since the point began
    stages_s: dict[str, float] = field(default_factory=dict)  # client clock, from the end of speech in the audio
    server_ms: dict[str, float] = field(default_factory=dict)  # the server's `latency` event
    intent: str | None = None
    right: bool = False
    lost: bool = False  # no result within the wait

    @property
    def voice_to_action_s(self) -> float | None:
        return self.stages_s.get("result")


def _is_right(item: CorpusItem, intent: IntentEvent | None, result: ResultEvent | None) -> bool:
    """The intent is the expected one, the room (when the corpus names one) is heard, and a committed command
    has the expected times. Under load, two clients may ask for the same slot: the second gets a clarify about
    the conflict, which is right too, so times are checked only on commands that went through."""
    if intent is None or result is None or intent.intent != item.intent:
        return False
    room = item.expected.get("room")
    command = result.result.get("command") or {}
    if room and command.get("room") != room and not any(
            s["name"] == "room" and room in s["text"].lower() for s in intent.slots):
        return False
    if result.result.get("committed"):
        if command.get("action") == "reschedule_meeting" and command.get("amends"):  # a reopened turn's booking
            command = {**command, "start": command.get("new_start"), "end": command.get("new_end")}
        return all(command.get(k) == item.expected[k] for k in ("start", "end") if k in item.expected)
    return True


E = TypeVar("E", bound=ServerEvent)


def _event(by_type: dict[type[ServerEvent], Received], kind: type[E]) -> E | None:
    found = by_type.get(kind)
    return found.event if found is not None and isinstance(found.event, kind) else None


def measure_request(client: int, item: CorpusItem, sent_at_s: float, received: Sequence[Received], finished: bool
                    ) -> list[Measurement]:
    """Turn one request's server events into one measurement per utterance. `finished`: the server closed the
    stream after sending everything; when it did not, an utterance (or the request) without a result is lost."""
    ends = {r.event.utterance: r.event for r in received if isinstance(r.event, SpeechEnd)}
    out = []
    for utterance, end in ends.items():
        end_s = end.audio_ms / 1000
        mine: dict[type[ServerEvent], Received] = {
            type(r.event): r for r in received if getattr(r.event, "utterance", None) == utterance}
        m = Measurement(client, item.file, sent_at_s)
        for stage, kind in CLIENT_STAGES.items():
            if kind in mine:
                m.stages_s[stage] = round(mine[kind].t - end_s, 4)
        latency, intent, result = _event(mine, Latency), _event(mine, IntentEvent), _event(mine, ResultEvent)
        if latency is not None:
            m.server_ms = dict(latency.stages_ms)
        if intent is not None:
            m.intent = intent.intent
        if result is not None:
            m.right = _is_right(item, intent, result)
        else:  # an empty transcript is an answer (no words, so nothing to do); silence from the server is not
            m.lost = not finished or Transcript not in mine
        out.append(m)
    return out or [Measurement(client, item.file, sent_at_s, lost=not finished)]


@dataclass(frozen=True)
class Verdict:
    keeps_up: bool
    reason: str


def judge(measurements: Sequence[Measurement], duration_s: float) -> Verdict:
    lost = sum(m.lost for m in measurements)
    if lost:
        return Verdict(False, f"cannot keep up: {lost} of {len(measurements)} requests got no result in time")
    timed = [(m.sent_at_s, m.voice_to_action_s) for m in measurements if m.voice_to_action_s is not None]
    if len(timed) >= 4:
        x, y = np.asarray(timed, dtype=np.float64).T
        if np.ptp(x) > 0:
            slope = float(np.polyfit(x, y, 1)[0])
            growth = slope * max(duration_s, float(np.ptp(x)))
            if growth > GROWTH_LIMIT_S:
                return Verdict(False, f"cannot keep up: latency grows {slope * 1e3:.0f} ms per second of load "
                                      f"({growth:.1f} s over the run)")
    return Verdict(True, "keeps up")
