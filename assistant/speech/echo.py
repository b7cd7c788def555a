"""The assistant must not hear itself: WebRTC's acoustic echo canceller (AEC3, in livekit's packaged
AudioProcessingModule) on a session's microphone audio, fed with the reply audio the client is playing.

The server knows what it sent, and the client says when it began playing it (`playback` `started`, with its
position in the microphone stream; AEC3 finds the remaining delay itself). A reply the client does not say it
plays (`assistant send`, which plays nothing) has no echo and changes nothing. From a session's first played reply
on, each 10 ms of its microphone audio goes through the canceller with the 10 ms of reply audio due at the same
time (silence between replies); before it audio passes untouched. What the canceller leaves of the echo, a
double-talk gate silences for voice detection (DoubleTalkGate). Measured in docs/speech.md.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

__all__ = ["EchoCanceller", "DoubleTalkGate"]

RATE = 16_000
_TEN_MS = RATE // 100


@dataclass
class _Segment:
    start_ms: int
    audio: np.ndarray  # int16 at 16 kHz
    reply: int = 0
    playing: bool = True  # the client said it plays it (a client that plays nothing has no echo to take out)

    @property
    def end_ms(self) -> int:
        return self.start_ms + len(self.audio) * 1000 // RATE


class EchoCanceller:
    def __init__(self, tail_ms: int = 800) -> None:
        self.tail_ms = tail_ms
        self._segments: list[_Segment] = []
        self._apm: object | None = None  # made at the first reply: sessions that never play pay nothing
        self._gate = DoubleTalkGate()

    def play(self, audio: np.ndarray, at_ms: int, reply: int = 0, playing: bool = True) -> int:
        """Reply audio (int16, 16 kHz) the client plays from stream position `at_ms`; returns where it ends.
        `playing=False`: sent, not yet known to be played (`started` confirms it)."""
        segment = _Segment(at_ms, audio, reply, playing)
        self._segments.append(segment)
        return segment.end_ms

    def started(self, reply: int, by_ms: int) -> None:
        """The client said it plays `reply`, and where its sound really began: its audio moves by `by_ms`."""
        for segment in self._segments:
            if segment.reply == reply:
                segment.start_ms += by_ms
                segment.playing = True

    def cut(self, at_ms: int) -> None:
        """The client stopped playing at `at_ms` (barge-in): nothing after it comes back."""
        kept = []
        for segment in self._segments:
            if segment.start_ms < at_ms:
                keep = (at_ms - segment.start_ms) * RATE // 1000
                kept.append(_Segment(segment.start_ms, segment.audio[:keep], segment.reply, segment.playing))
        self._segments = kept

    def clean(self, frames: list[bytes], first_ms: int, frame_ms: int) -> list[tuple[bytes, bytes]]:
        """16 kHz PCM frames starting at stream position `first_ms`, with the echo of what plays taken out. Before
        the first reply frames pass untouched; from it on, every frame goes through the canceller (switching it
        off between replies would hand the voice detector a step from processed to raw noise, which it hears as
        speech)."""
        if self._apm is None and not any(segment.playing for segment in self._segments):
            return [(frame, frame) for frame in frames]
        out = [self._frame(frame, first_ms + i * frame_ms) for i, frame in enumerate(frames)]
        done = first_ms + len(frames) * frame_ms - self.tail_ms
        self._segments = [segment for segment in self._segments if segment.end_ms > done]
        return out

    def _frame(self, frame: bytes, at_ms: int) -> tuple[bytes, bytes]:
        """(what voice detection hears, what is kept as audio) of one frame."""
        from livekit import rtc

        if self._apm is None:
            self._apm = rtc.AudioProcessingModule(echo_cancellation=True, noise_suppression=True,
                                                  high_pass_filter=True)
        apm = self._apm
        assert isinstance(apm, rtc.AudioProcessingModule)
        mic = np.frombuffer(frame, np.int16)
        cleaned = []
        for start in range(0, len(mic) - _TEN_MS + 1, _TEN_MS):
            ms = at_ms + start * 1000 // RATE
            reference = self._reference(ms)
            self._gate.far(reference)
            far = rtc.AudioFrame(reference.tobytes(), RATE, 1, _TEN_MS)
            apm.process_reverse_stream(far)
            near = rtc.AudioFrame(mic[start:start + _TEN_MS].tobytes(), RATE, 1, _TEN_MS)
            apm.process_stream(near)
            cleaned.append(np.frombuffer(near.data, np.int16))
        if not cleaned:
            return frame, frame
        heard, kept = self._gate.decide(mic, np.concatenate(cleaned))
        return heard.tobytes(), kept.tobytes()

    def _reference(self, at_ms: int) -> np.ndarray:
        """The 10 ms of reply audio due at `at_ms` (silence where nothing plays)."""
        out = np.zeros(_TEN_MS, np.int16)
        for segment in self._segments:
            if not segment.playing:
                continue
            offset = (at_ms - segment.start_ms) * RATE // 1000
            if offset + _TEN_MS <= 0 or offset >= len(segment.audio):
                continue
            lo, hi = max(offset, 0), min(offset + _TEN_MS, len(segment.audio))
            out[lo - offset:hi - offset] = segment.audio[lo:hi]
        return out


class DoubleTalkGate:
    """Tells the speaker's voice from what is left of the reply's echo, 20 ms at a time.

    AEC3 takes the echo 40-46 dB down, but about 1 % of echo-only frames leak through at -10 dB, and webrtcvad
    hears them as speech (measured: docs/speech.md). So while a reply plays (and its echo rings), a frame counts
    only where the microphone is clearly louder than the echo alone would be: `margin` times the echo path's gain
    (`erl`, learned from the frames the echo dominated) times the loudest reply audio of the last
    `window_ms` (the echo of anything played that recently may still arrive), falling slowly after it (the room
    rings). Voice detection hears echo alone as silence. The audio kept is the canceller's, or the microphone's
    where the canceller swallowed more than the echo (AEC3 mutes some double talk: the speaker's words must not
    be lost)."""

    FAR_FLOOR = 30.0  # reply audio quieter than this (RMS, 16-bit) is silence: nothing to echo
    QUIET = 50.0  # a microphone frame this quiet tells nothing about the echo
    ECHO_DOMINATED = 0.5  # the canceller took more than 6 dB away: the echo dominated the frame
    NO_ECHO = 0.9  # ... less than 1 dB: no echo came
    JUMP = 2.0  # a frame this much louder than the echo has been is a speaker starting, never learnt as echo
    RISE = 1.1  # ... and the echo's level is learnt upwards at most this much a frame

    def __init__(self, window_ms: int = 400, margin: float = 1.2, initial_erl: float = 0.5,
                 decay: float = 0.98, far_fall: float = 0.97) -> None:
        self.margin, self.decay, self.far_fall = margin, decay, far_fall
        self._far_level = 0.0  # the window's loudest reply audio, falling slowly after it (the room still rings)
        # the echo's loudest level at the microphone against the loudest reply audio of the window, tracked as an
        # envelope: up at once on a frame that was surely echo, down slowly
        self.erl = initial_erl
        self._far: deque[float] = deque(maxlen=max(1, window_ms // 10))

    def far(self, reference: np.ndarray) -> None:
        self._far.append(_rms(reference))

    def decide(self, mic: np.ndarray, cleaned: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(what voice detection hears, what is kept as the utterance's audio) of a frame: the microphone's
        `mic` and the canceller's output `cleaned`."""
        self._far_level = far = max(max(self._far, default=0.0), self._far_level * self.far_fall)
        level_in, level_out = _rms(mic), _rms(cleaned)
        if far <= self.FAR_FLOOR:
            quieter = _no_louder(cleaned, mic, level_in)
            return quieter, quieter
        # learn the echo's level from every frame the canceller took at least half away (the echo dominated it);
        # forget slowly, only where it took nothing (no echo came) and sound came in: a pause in the reply, or the
        # canceller still converging, is no sign that the echo got quieter. (While AEC3 converges it also takes a
        # speaker's first words away: learnt too, they make a barge-in early in a reply wait: docs/speech.md.)
        if level_out < self.ECHO_DOMINATED * level_in and level_in < self.JUMP * self.erl * far:
            self.erl = max(self.erl, min(2.0, level_in / far, self.erl * self.RISE))
        elif level_out > self.NO_ECHO * level_in and level_in > self.QUIET:
            self.erl *= self.decay
        echo = self.erl * far  # the loudest the echo alone would be
        # kept: the canceller's output, unless it swallowed what is louder than the echo could be (AEC3 mutes the
        # first hundreds of ms of double talk while it converges: "No, Denali" came out "Denali")
        swallowed = level_out < 0.1 * level_in and level_in >= echo
        kept = mic.copy() if swallowed else _no_louder(cleaned, mic, level_in)
        if level_in < self.margin * echo:  # no louder than the echo alone: voice detection hears nothing
            return np.zeros_like(cleaned), kept
        return kept, kept


def _rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(samples.astype(np.float64) ** 2))) if len(samples) else 0.0


def _no_louder(cleaned: np.ndarray, mic: np.ndarray, level_in: float) -> np.ndarray:
    """The canceller only takes sound away: where its output is louder than what came in (its comfort noise over
    digital silence, a start-up transient), it is scaled down to the input's level, so it never makes a voice
    detector hear speech that the microphone did not."""
    level_out = _rms(cleaned)
    if level_out <= level_in:
        return cleaned.copy()
    return (cleaned * (level_in / level_out)).astype(np.int16)
