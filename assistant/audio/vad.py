"""Voice-activity decisions per frame: webrtcvad (package webrtcvad-wheels), a pure engine call."""

from __future__ import annotations

import webrtcvad

__all__ = ["WebRtcVad"]


class WebRtcVad:
    def __init__(self, aggressiveness: int = 2, sample_rate: int = 16_000, frame_ms: int = 20) -> None:
        if frame_ms not in (10, 20, 30):
            raise ValueError(f"webrtcvad takes 10, 20 or 30 ms frames, not {frame_ms}")
        if not 0 <= aggressiveness <= 3:
            raise ValueError(f"aggressiveness is 0 (least) to 3 (most), not {aggressiveness}")
        self._vad = webrtcvad.Vad(aggressiveness)
        self.sample_rate = sample_rate
        self.frame_bytes = 2 * sample_rate * frame_ms // 1000

    def is_voiced(self, frame: bytes) -> bool:
        if len(frame) != self.frame_bytes:
            raise ValueError(f"a frame is {self.frame_bytes} bytes, got {len(frame)}")
        return bool(self._vad.is_speech(frame, self.sample_rate))
