"""A client's player of spoken replies, sans I/O: reply audio in as it arrives (resampled to the output rate),
the next block out when the sound device asks (from its own thread), and a stop that says how much was played.
`assistant mic` and the benchmark's simulated room both play through it."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import soxr

from assistant.events import Playback, ReplyAudio, ReplyFrame

__all__ = ["ReplyPlayer"]


@dataclass
class _Playing:
    reply: int
    rate: int
    resampler: soxr.ResampleStream
    played: int = 0  # output samples played
    reported: bool = False  # the server was told where it began


class ReplyPlayer:
    def __init__(self, rate: int) -> None:
        self.rate = rate  # the output device's
        self._lock = threading.Lock()
        self._queue = np.zeros(0, np.int16)
        self._current: _Playing | None = None
        self._stopped: set[int] = set()  # replies whose late audio is dropped

    def begin(self, event: ReplyAudio) -> None:
        with self._lock:
            if event.reply in self._stopped:
                return
            self._queue = np.zeros(0, np.int16)  # a newer reply replaces what is left of an older one
            self._current = _Playing(event.reply, event.sample_rate,
                                     soxr.ResampleStream(event.sample_rate, self.rate, 1, dtype="int16"))

    def add(self, frame: ReplyFrame) -> None:
        with self._lock:
            playing = self._current
            if playing is None or frame.reply != playing.reply:
                return
            audio = playing.resampler.resample_chunk(np.frombuffer(frame.pcm, "<i2"))
            self._queue = np.concatenate([self._queue, audio.astype(np.int16)])

    @property
    def playing(self) -> bool:
        with self._lock:
            return self._current is not None and len(self._queue) > 0

    def pull(self, count: int, at_ms: int | None = None) -> tuple[np.ndarray, Playback | None]:
        """The next `count` samples to play (silence where nothing plays), and, the first time a reply's sound
        goes out, the `started` report for the server (`at_ms`: the client's audio sent so far)."""
        out = np.zeros(count, np.int16)
        started = None
        with self._lock:
            take = min(count, len(self._queue))
            out[:take] = self._queue[:take]
            self._queue = self._queue[take:]
            playing = self._current
            if playing is not None:
                playing.played += take
                if take and not playing.reported and at_ms is not None:
                    playing.reported = True
                    started = Playback(playing.reply, "started", 0, at_ms)
        return out, started

    def stop(self) -> Playback | None:
        """Barge-in: silence at once; the report for the server (None when nothing was playing)."""
        with self._lock:
            playing, self._current = self._current, None
            left = len(self._queue)
            self._queue = np.zeros(0, np.int16)
            if playing is None or not left:
                return None
            self._stopped.add(playing.reply)
            return Playback(playing.reply, "stopped", playing.played * 1000 // self.rate)
