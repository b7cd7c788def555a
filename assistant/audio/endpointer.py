"""Endpointing: per-frame voice decisions -> utterances. A state machine with no model in it.

    SILENCE --(voiced share of the last `start_window` frames >= start_ratio)--> SPEECH   emits SpeechStarted
    SPEECH  --(voiced share of the last `hangover` frames <= end_ratio)-------> SILENCE  emits SpeechEnded
            --(utterance reaches max_utterance)---------------------------------> cut, emits SpeechEnded(forced)
            --(the last `pause` frames silent, once per pause)------------------> emits PauseStarted
            --(a voiced frame breaks that pause)---------------------------------> emits SpeechResumed

The hangover is the end-of-turn policy's knob: `set_hangover` changes it for the pause in progress (a reading of
the words so far says the request is complete: end sooner; or that it lacks a slot: hold longer), and speech
resuming puts it back to the configured one.

Decisions are taken over windows, not single frames, so a click does not start an utterance and a short pause
does not end one. The utterance keeps `pre_roll` of audio from before the start was detected (the first
syllable is quiet). An utterance with less voiced audio than `min_speech` is dropped (a cough, a door).
Times are audio time in milliseconds since the stream began, so the tests need no clock.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from itertools import islice

__all__ = ["EndpointerConfig", "SpeechStarted", "SpeechEnded", "SpeechDropped", "PauseStarted", "SpeechResumed",
           "Endpointer", "EndpointEvent"]


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
    pause_ms: int = 0  # this much silence inside an utterance is a pause (PauseStarted); 0 = not reported

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
class PauseStarted:
    at_ms: int  # audio time the pause was noticed (pause_ms after the last voiced frame, about)
    speech_end_ms: int  # the last voiced frame before it


@dataclass(frozen=True)
class SpeechResumed:
    at_ms: int


@dataclass(frozen=True)
class SpeechDropped:
    start_ms: int
    reason: str


EndpointEvent = SpeechStarted | SpeechEnded | SpeechDropped | PauseStarted | SpeechResumed


class Endpointer:
    def __init__(self, config: EndpointerConfig | None = None) -> None:
        self.config = config or EndpointerConfig()
        c = self.config
        self._pre_roll: deque[bytes] = deque(maxlen=c.frames(c.pre_roll_ms))
        self._window: deque[bool] = deque(maxlen=c.frames(c.start_window_ms))
        self._tail: deque[bool] = deque(maxlen=self._tail_frames())
        self._hangover = c.frames(c.hangover_ms)  # frames of near-silence that end the utterance now
        self._paused = False
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
        events: list[EndpointEvent] = self._pause_change()
        if self._quiet(self._hangover):
            events.append(self._finish(forced=False))
        elif self._now_ms - self._start_ms >= c.max_utterance_ms:
            events.append(self._finish(forced=True))
            self._begin(self._now_ms)  # speech goes on: the next utterance starts here
            events.append(SpeechStarted(self._start_ms))
        return events

    def set_hangover(self, ms: int) -> None:
        """The silence that ends the utterance, for the pause in progress (back to the configured one when
        speech resumes). Lower than the silence already heard: the utterance ends on the next frame."""
        frames = self.config.frames(ms)
        if frames > (self._tail.maxlen or 0):
            self._tail = deque(self._tail, maxlen=frames)
        self._hangover = frames

    def _tail_frames(self) -> int:
        c = self.config
        return max(c.frames(c.hangover_ms), c.frames(c.pause_ms))

    def _quiet(self, frames: int) -> bool:
        """The last `frames` frames are (nearly) all silent."""
        if len(self._tail) < frames:
            return False
        recent = sum(islice(reversed(self._tail), frames))
        return recent <= self.config.end_ratio * frames

    def _pause_change(self) -> list[EndpointEvent]:
        c = self.config
        if not c.pause_ms:
            return []
        paused = self._quiet(c.frames(c.pause_ms))
        if paused == self._paused:
            return []
        self._paused = paused
        if paused:
            return [PauseStarted(self._now_ms, self._last_voiced_ms)]
        self._hangover = c.frames(c.hangover_ms)
        self._tail.clear()  # the pause is over: a new one must be a whole hangover long to end the utterance
        self._tail.append(True)
        return [SpeechResumed(self._now_ms)]

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
        self._tail = deque(maxlen=self._tail_frames())
        self._hangover = self.config.frames(self.config.hangover_ms)
        self._paused = False

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
