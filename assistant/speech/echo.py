"""The assistant must not hear itself: WebRTC's acoustic echo canceller (AEC3, in livekit's packaged
AudioProcessingModule) on a session's microphone audio, fed with the reply audio the client is playing.

The server knows what it sent and where in the microphone stream the client began playing it (the stream's
position when the first frame went out; AEC3 finds the remaining delay itself, hundreds of milliseconds of it).
While a reply plays, and for a tail after it (the room's reverberation, the client's buffers), each 10 ms of
microphone audio goes through the canceller with the 10 ms of reply audio due at the same time; otherwise audio
passes untouched, so nothing that was heard before replies were spoken is heard differently. Measured in
docs/speech.md: about 1 % of one core while it runs, the echo 40 dB down from the first frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["EchoCanceller"]

RATE = 16_000
_TEN_MS = RATE // 100
ECHO_ONLY_DB = 20.0  # the canceller took this much away: what came in was echo alone
ECHO_ONLY = 10 ** (-ECHO_ONLY_DB / 20)


@dataclass
class _Segment:
    start_ms: int
    audio: np.ndarray  # int16 at 16 kHz

    @property
    def end_ms(self) -> int:
        return self.start_ms + len(self.audio) * 1000 // RATE


class EchoCanceller:
    def __init__(self, tail_ms: int = 800) -> None:
        self.tail_ms = tail_ms
        self._segments: list[_Segment] = []
        self._apm: object | None = None  # made at the first reply: sessions that never play pay nothing

    def play(self, audio: np.ndarray, at_ms: int) -> int:
        """Reply audio (int16, 16 kHz) the client plays from stream position `at_ms`; returns where it ends."""
        segment = _Segment(at_ms, audio)
        self._segments.append(segment)
        return segment.end_ms

    def cut(self, at_ms: int) -> None:
        """The client stopped playing at `at_ms` (barge-in): nothing after it comes back."""
        kept = []
        for segment in self._segments:
            if segment.start_ms < at_ms:
                keep = (at_ms - segment.start_ms) * RATE // 1000
                kept.append(_Segment(segment.start_ms, segment.audio[:keep]))
        self._segments = kept

    @property
    def playing_until_ms(self) -> int | None:
        return max((s.end_ms for s in self._segments), default=None)

    def clean(self, frames: list[bytes], first_ms: int, frame_ms: int) -> list[bytes]:
        """16 kHz PCM frames starting at stream position `first_ms`, with the echo of what plays taken out."""
        until = self.playing_until_ms
        if until is None:
            return frames
        out = []
        for i, frame in enumerate(frames):
            at_ms = first_ms + i * frame_ms
            if at_ms >= until + self.tail_ms:
                self._segments = []  # over: later frames pass untouched until the next reply
                out += frames[i:]
                break
            out.append(self._frame(frame, at_ms))
        return out

    def _frame(self, frame: bytes, at_ms: int) -> bytes:
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
            far = rtc.AudioFrame(self._reference(ms).tobytes(), RATE, 1, _TEN_MS)
            apm.process_reverse_stream(far)
            near = rtc.AudioFrame(mic[start:start + _TEN_MS].tobytes(), RATE, 1, _TEN_MS)
            apm.process_stream(near)
            cleaned.append(np.frombuffer(near.data, np.int16))
        return _gated(np.concatenate(cleaned), mic).tobytes() if cleaned else frame

    def _reference(self, at_ms: int) -> np.ndarray:
        """The 10 ms of reply audio due at `at_ms` (silence where nothing plays)."""
        out = np.zeros(_TEN_MS, np.int16)
        for segment in self._segments:
            offset = (at_ms - segment.start_ms) * RATE // 1000
            if offset + _TEN_MS <= 0 or offset >= len(segment.audio):
                continue
            lo, hi = max(offset, 0), min(offset + _TEN_MS, len(segment.audio))
            out[lo - offset:hi - offset] = segment.audio[lo:hi]
        return out


def _gated(cleaned: np.ndarray, mic: np.ndarray) -> np.ndarray:
    """The canceller's output, kept to what it can mean. Where it took most of the sound away (more than
    `ECHO_ONLY_DB`), what came in was the reply's echo and what is left is its residue: silence, so a voice
    detector never hears it (speech over the echo loses a few dB, not 20). Where its output is louder than its input
    (comfort noise over digital silence, a start-up transient), it is scaled down to the input's level: the
    canceller never makes speech the microphone did not hear."""
    level_in = float(np.sqrt(np.mean(mic.astype(np.float64) ** 2)))
    level_out = float(np.sqrt(np.mean(cleaned.astype(np.float64) ** 2)))
    if level_out < level_in * ECHO_ONLY:
        return np.zeros_like(cleaned)
    if level_out <= level_in:
        return cleaned.copy()
    return (cleaned * (level_in / level_out)).astype(np.int16)
