"""Endpointing: per-frame voice decisions -> utterances. A state machine with no model in it.

    SILENCE --(voiced share of the last `start_window` frames >= start_ratio)--> SPEECH   emits SpeechStarted
    SPEECH  --(voiced share of the last `hangover` frames <= end_ratio)-------> SILENCE  emits SpeechEnded
            --(utterance reaches max_utterance)---------------------------------> cut, emits SpeechEnded(forced)

Decisions are taken over windows, not single frames, so a click does not start an utterance and a short pause
does not end one. The utterance keeps `pre_roll` of audio from before the start was detected (the first
syllable is quiet). An utterance with less voiced audio than `min_speech` is dropped (a cough, a door).
Times are audio time in milliseconds since the stream began, so the tests need no clock.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

__all__ = ["EndpointerConfig", "SpeechStarted", "SpeechEnded", "SpeechDropped", "Endpointer", "EndpointEvent"]


@dataclass(frozen=True)
class EndpointerConfig:
    frame_ms: int = 20
    pre_roll_ms: int = 300
    hangover_ms: int = 300
    min_speech_ms: int = 200
    max_utterance_ms: int = 15_000
    start_window_ms: int = 100
    start_ratio: float = 0.6
    end_ratio: float = 0.1

    def frames(self, ms: int) -> int:
        return max(1, ms // self.frame_ms)


@dataclass(frozen=True)
class SpeechStarted:
    start_ms: int  # audio time where the utterance (with its pre-roll) begins


@dataclass(frozen=True)
class SpeechEnded:
    audio: bytes  # the utterance's PCM, pre-roll included
    start_ms: int
    end_ms: int  # audio time where speech ended (before the hangover that confirmed it)
    decided_ms: int  # audio time at which the end was decided
    forced: bool = False  # cut at max_utterance_ms while speech went on


@dataclass(frozen=True)
class SpeechDropped:
    start_ms: int
    reason: str


EndpointEvent = SpeechStarted | SpeechEnded | SpeechDropped


class Endpointer:
    def __init__(self, config: EndpointerConfig | None = None) -> None:
        self.config = config or EndpointerConfig()
        c = self.config
        self._pre_roll: deque[bytes] = deque(maxlen=c.frames(c.pre_roll_ms))
        self._window: deque[bool] = deque(maxlen=c.frames(c.start_window_ms))
        self._tail: deque[bool] = deque(maxlen=c.frames(c.hangover_ms))
        self._frames: list[bytes] = []
        self._voiced_frames = 0
        self._last_voiced_ms = 0
        self._start_ms = 0
        self._now_ms = 0
        self.in_speech = False

    def push(self, frame: bytes, voiced: bool) -> list[EndpointEvent]:
        """One frame of audio and the VAD's decision for it; returns what happened."""
        c = self.config
        self._now_ms += c.frame_ms
        if voiced:
            self._last_voiced_ms = self._now_ms
        if not self.in_speech:
            return self._silence(frame, voiced)
        self._frames.append(frame)
        self._tail.append(voiced)
        self._voiced_frames += voiced
        events: list[EndpointEvent] = []
        if len(self._tail) == self._tail.maxlen and sum(self._tail) <= c.end_ratio * len(self._tail):
            events.append(self._finish(forced=False))
        elif self._now_ms - self._start_ms >= c.max_utterance_ms:
            events.append(self._finish(forced=True))
            self._begin(self._now_ms)  # speech goes on: the next utterance starts here
            events.append(SpeechStarted(self._start_ms))
        return events

    @property
    def pause_ms(self) -> int:
        """How long the speaker has been quiet within the current utterance (0 on a voiced frame)."""
        return self._now_ms - self._last_voiced_ms if self.in_speech else 0

    @property
    def speech_ms(self) -> int:
        """Length of the utterance so far (pre-roll included), without joining its audio; 0 outside speech."""
        return len(self._frames) * self.config.frame_ms if self.in_speech else 0

    def current_audio(self) -> bytes:
        """The utterance so far (pre-roll included); empty outside speech."""
        return b"".join(self._frames) if self.in_speech else b""

    def flush(self) -> list[EndpointEvent]:
        """The stream ended: an utterance in progress ends now."""
        return [self._finish(forced=False)] if self.in_speech else []

    def _silence(self, frame: bytes, voiced: bool) -> list[EndpointEvent]:
        c = self.config
        self._pre_roll.append(frame)
        self._window.append(voiced)
        if len(self._window) < (self._window.maxlen or 1) or sum(self._window) < c.start_ratio * len(self._window):
            return []
        start = self._now_ms - len(self._pre_roll) * c.frame_ms
        frames = list(self._pre_roll)
        self._begin(start)
        self._frames = frames
        self._voiced_frames = sum(self._window)
        return [SpeechStarted(start)]

    def _begin(self, start_ms: int) -> None:
        self.in_speech = True
        self._start_ms = start_ms
        self._frames = []
        self._voiced_frames = 0
        self._tail.clear()

    def _finish(self, forced: bool) -> EndpointEvent:
        c = self.config
        self.in_speech = False
        self._pre_roll.clear()
        self._window.clear()
        audio = b"".join(self._frames)
        self._frames = []
        if self._voiced_frames * c.frame_ms < c.min_speech_ms:
            return SpeechDropped(self._start_ms, f"only {self._voiced_frames * c.frame_ms} ms of speech")
        return SpeechEnded(audio, self._start_ms, self._last_voiced_ms, self._now_ms, forced)
