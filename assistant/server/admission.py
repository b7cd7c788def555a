"""What one session admits ([limits]): its audio at most `audio_speed` times real time (plus a burst), all its
client's sessions together at most `client_audio_speed`; at most `max_queued_utterances` of its utterances, and
`max_queued_utterances_per_client` of its client's, waiting for the recognizer. Past an audio bound the
connection is closed (`too_fast`); past a queue bound the utterance is refused (`overloaded`)."""

from __future__ import annotations

import time

from assistant.config import LimitsSettings
from assistant.errors import LimitExceeded
from assistant.server.limits import AudioAdmission, ClientShare

__all__ = ["SessionAdmission"]


class SessionAdmission:
    def __init__(self, limits: LimitsSettings, share: ClientShare) -> None:
        self.limits, self.share = limits, share
        self._audio = AudioAdmission(limits.audio_speed, limits.audio_burst_s)
        self._began = time.monotonic()
        self._queued: set[int] = set()  # utterances ended and not yet heard (counted in the client's share too)

    def audio(self, received_s: float, frame_s: float, arrived: float) -> None:
        """`received_s` of audio by now, this frame's `frame_s` included. Raises LimitExceeded ("too_fast")."""
        if self._audio.refused(received_s, arrived - self._began):
            raise LimitExceeded("too_fast", f"audio arrives faster than {self.limits.audio_speed:g} times real time "
                                f"(after the first {self.limits.audio_burst_s:g} s); send it in real time")
        if self.share.audio.refused(frame_s):
            raise LimitExceeded("too_fast", f"your sessions together send audio faster than "
                                f"{self.limits.client_audio_speed:g} times real time; send it in real time")

    def queue(self, utterance: int) -> tuple[str, int] | None:
        """Counts the utterance as waiting for the recognizer, or says why not (the bound it would pass, and how
        many of this session's or its client's wait)."""
        if len(self._queued) >= self.limits.max_queued_utterances:
            return "session_queue_full", len(self._queued)
        if self.share.waiting >= self.limits.max_queued_utterances_per_client:
            return "client_queue_full", self.share.waiting
        self._queued.add(utterance)
        self.share.waiting += 1
        return None

    def unqueue(self, utterance: int) -> None:
        """No longer waiting for the recognizer (once per utterance, whether it was heard or cancelled)."""
        if utterance in self._queued:
            self._queued.discard(utterance)
            self.share.waiting -= 1

    def unqueue_all(self) -> None:
        for utterance in list(self._queued):
            self.unqueue(utterance)
