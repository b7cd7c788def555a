"""One speaker's audio stream, sans I/O: client PCM in, what happened out. No asyncio, no clock, no models.

    feed(pcm) -> PCM decoding + resampling -> 20 ms frames -> webrtcvad -> endpointer -> [events]

The events say what the stream's owner should do, in audio time (milliseconds since the first frame):
an utterance started; a partial transcript is due (the utterance so far); the speaker paused (the utterance so
far, to read before deciding whether the turn is over); speech resumed after such a pause; the utterance ended
(its audio, for the final decode); an utterance was dropped (too little speech).

A pause stops the stream: frames fed after it wait until the owner calls `decide(hangover_ms)` with the
silence that should end this turn (short for a complete request, long for one that lacks a slot). So the
decision is taken at the frame where the pause began, in audio time, however fast the audio arrives and however
long the reading took: the same audio always gives the same turns. Deciding *when* work is due lives here;
whether the shared recognizer has room for it, and when the audio arrived on a wall clock, are the owner's
business (assistant/server/session.py), so this class is tested with scripted frames like the endpointer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from assistant.audio.endpointer import (
    Endpointer,
    EndpointerConfig,
    EndpointEvent,
    PauseStarted,
    SpeechEnded,
    SpeechResumed,
    SpeechStarted,
)
from assistant.audio.pcm import TARGET_RATE, PcmDecoder
from assistant.audio.vad import WebRtcVad

__all__ = ["StreamConfig", "VoiceStream", "VoiceDetector", "EchoFilter", "UtteranceStarted", "PartialDue", "PauseDue",
           "UtteranceResumed", "UtteranceEnded", "UtteranceDropped", "StreamEvent"]


class VoiceDetector(Protocol):
    def is_voiced(self, frame: bytes) -> bool: ...


class EchoFilter(Protocol):
    """Takes what the assistant itself plays out of the microphone's frames (assistant/speech/echo.py): for each
    frame, what voice detection hears (the echo's residue silenced) and what is kept as the utterance's audio (all
    the speaker said, the first soft syllable of a barge-in too)."""

    def clean(self, frames: list[bytes], first_ms: int, frame_ms: int) -> list[tuple[bytes, bytes]]: ...


@dataclass(frozen=True)
class StreamConfig:
    endpointer: EndpointerConfig = field(default_factory=EndpointerConfig)
    vad_aggressiveness: int = 2  # webrtcvad 0 (least) .. 3 (most eager to call audio non-speech)
    partial_interval_ms: int = 600  # re-decode the growing utterance this often while speech goes on; 0: never
    quiet_below_peak_db: float = 40.0  # a frame this far under the speech before it is silence (0: webrtcvad only)


@dataclass(frozen=True)
class UtteranceStarted:
    utterance: int  # 1, 2, ... within the stream
    start_ms: int  # where the utterance (with its pre-roll) begins


@dataclass(frozen=True)
class PartialDue:
    """Time to re-decode the utterance so far (only ever on a voiced frame: never in a pause that may be its end,
    where a partial decode would hold the recognizer just when the final decode needs it)."""

    utterance: int
    audio: bytes  # 16 kHz PCM of the utterance so far, pre-roll included
    at_ms: int


@dataclass(frozen=True)
class PauseDue:
    """The speaker paused inside an utterance: read the audio so far, then call `VoiceStream.decide`."""

    utterance: int
    audio: bytes  # 16 kHz PCM of the utterance so far, pre-roll included
    at_ms: int
    speech_end_ms: int  # the last voiced frame: the final decode can reuse this reading if no voice follows


@dataclass(frozen=True)
class UtteranceResumed:
    """Speech went on after a pause: what was read at the pause is stale."""

    utterance: int
    at_ms: int


@dataclass(frozen=True)
class UtteranceEnded:
    utterance: int
    audio: bytes  # the utterance's 16 kHz PCM, pre-roll included
    start_ms: int
    end_ms: int  # where speech ended, before the hangover that confirmed it
    decided_ms: int  # where the end was decided
    forced: bool  # cut at the maximum utterance length while speech went on


@dataclass(frozen=True)
class UtteranceDropped:
    utterance: int
    start_ms: int
    reason: str


StreamEvent = UtteranceStarted | PartialDue | PauseDue | UtteranceResumed | UtteranceEnded | UtteranceDropped


class VoiceStream:
    def __init__(self, sample_rate: int, channels: int = 1, sample_format: str = "pcm_s16le",
                 config: StreamConfig | None = None, vad: VoiceDetector | None = None) -> None:
        """Raises InputError (code unsupported_audio) for a format, rate or channel count it cannot take.
        `vad`: webrtcvad at the configured aggressiveness unless another detector is given."""
        self.config = config or StreamConfig()
        frame_ms = self.config.endpointer.frame_ms
        self._decoder = PcmDecoder(sample_rate, channels, sample_format, frame_ms)
        self._vad = vad or WebRtcVad(self.config.vad_aggressiveness, TARGET_RATE, frame_ms,
                                     self.config.quiet_below_peak_db)
        self._endpointer = Endpointer(self.config.endpointer)
        self.utterance = 0  # the current (or last) utterance's number
        self.audio_ms = 0  # audio fed so far, in whole frames (some may wait behind a pause's decision)
        self.position_ms = 0  # audio the endpointer has seen
        self._next_partial_ms = 0
        # frames fed while a pause waits for its decision: (the audio, what voice detection hears of it)
        self._waiting: list[tuple[bytes, bytes]] = []
        self._paused = False  # a PauseDue was emitted and `decide` has not been called
        self.echo: EchoFilter | None = None  # set by an owner that plays replies to this speaker

    def duration_s(self, byte_count: int) -> float:
        """Seconds of audio in `byte_count` bytes of this client's PCM (its rate and channels)."""
        return byte_count / (2 * self._decoder.channels * self._decoder.sample_rate)

    @property
    def awaiting_decision(self) -> bool:
        return self._paused

    @property
    def in_speech(self) -> bool:
        return self._endpointer.in_speech

    def feed(self, pcm: bytes) -> list[StreamEvent]:
        """Any number of bytes of client audio (a sample may be split across calls). Stops after a PauseDue."""
        frames = self._cleaned(self._decoder.feed(pcm))
        self.audio_ms += len(frames) * self.config.endpointer.frame_ms
        self._waiting += frames
        return [] if self._paused else self._run()

    def decide(self, hangover_ms: int | None) -> list[StreamEvent]:
        """The answer to a PauseDue: the silence that ends this turn (None: the configured hangover). Goes on
        with the frames that waited, and stops again at the next pause."""
        if not self._paused:
            raise RuntimeError("decide() answers a PauseDue; none is waiting")
        self._paused = False
        if hangover_ms is not None:
            self._endpointer.set_hangover(hangover_ms)
        return self._run()

    def finish(self) -> list[StreamEvent]:
        """The client's audio ended: what is left of it, and the open utterance ends here. A pause still
        waiting for its decision takes the configured hangover."""
        frames = self._cleaned(self._decoder.flush())
        self.audio_ms += len(frames) * self.config.endpointer.frame_ms
        self._waiting += frames
        events: list[StreamEvent] = []
        while True:
            events += self._run()
            if not self._paused:
                break
            self._paused = False
        return events + [self._event(e) for e in self._endpointer.flush()]

    def _cleaned(self, frames: list[bytes]) -> list[tuple[bytes, bytes]]:
        if self.echo is None or not frames:
            return [(frame, frame) for frame in frames]
        return [(kept, heard) for heard, kept in self.echo.clean(frames, self.audio_ms,
                                                                  self.config.endpointer.frame_ms)]

    def _run(self) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        frames, self._waiting = self._waiting, []
        for i, (frame, heard) in enumerate(frames):  # webrtcvad on a 20 ms frame takes microseconds
            self.position_ms += self.config.endpointer.frame_ms
            events += [self._event(e) for e in self._endpointer.push(frame, self._vad.is_voiced(heard))]
            partial = self._partial_due()
            if partial is not None:
                events.append(partial)
            if self._paused:  # the rest waits for the owner's decision on this pause
                self._waiting = frames[i + 1 :]
                break
        return events

    def _event(self, event: EndpointEvent) -> StreamEvent:
        if isinstance(event, SpeechStarted):
            self.utterance += 1
            self._next_partial_ms = self.config.partial_interval_ms
            return UtteranceStarted(self.utterance, event.start_ms)
        if isinstance(event, PauseStarted):
            self._paused = True
            return PauseDue(self.utterance, self._endpointer.current_audio(), event.at_ms, event.speech_end_ms)
        if isinstance(event, SpeechResumed):
            return UtteranceResumed(self.utterance, event.at_ms)
        if isinstance(event, SpeechEnded):
            return UtteranceEnded(self.utterance, event.audio, event.start_ms, event.end_ms, event.decided_ms,
                                  event.forced)
        return UtteranceDropped(self.utterance, event.start_ms, event.reason)

    def _partial_due(self) -> PartialDue | None:
        interval = self.config.partial_interval_ms
        speech_ms = self._endpointer.speech_ms  # never the joined audio: that copy per frame grew with the utterance
        if not interval or not self._endpointer.in_speech or speech_ms < self._next_partial_ms:
            return None
        if self._endpointer.pause_ms > 0:
            return None  # due, and taken on the next voiced frame
        self._next_partial_ms = speech_ms + interval
        return PartialDue(self.utterance, self._endpointer.current_audio(), self.position_ms)
