"""Voice-activity decisions per frame: webrtcvad (package webrtcvad-wheels), a pure engine call, with an energy
gate for the end of speech.

webrtcvad keeps calling frames speech for about 100 ms after the last sound (its own overhang: measured on the
pause corpus, the last "voiced" frame came 108 ms p50 after the last sample above -40 dBFS, over digital silence).
The endpointer already waits its own hangover, so that overhang is pure delay. A frame far quieter than the
speech just before it (`quiet_below_peak_db` under a slowly falling peak) is silence whatever webrtcvad says.
"""

from __future__ import annotations

import numpy as np
import webrtcvad

__all__ = ["WebRtcVad"]


class WebRtcVad:
    def __init__(self, aggressiveness: int = 2, sample_rate: int = 16_000, frame_ms: int = 20,
                 quiet_below_peak_db: float = 0.0) -> None:
        """`quiet_below_peak_db`: the energy gate (0 = off)."""
        if frame_ms not in (10, 20, 30):
            raise ValueError(f"webrtcvad takes 10, 20 or 30 ms frames, not {frame_ms}")
        if not 0 <= aggressiveness <= 3:
            raise ValueError(f"aggressiveness is 0 (least) to 3 (most), not {aggressiveness}")
        self._vad = webrtcvad.Vad(aggressiveness)
        self.sample_rate = sample_rate
        self.frame_bytes = 2 * sample_rate * frame_ms // 1000
        self._gate_db = quiet_below_peak_db
        self._peak_db = -120.0
        self._fall_db = 5.0 * frame_ms / 1000  # the peak falls 5 dB a second: a shout long ago gates nothing

    def is_voiced(self, frame: bytes) -> bool:
        if len(frame) != self.frame_bytes:
            raise ValueError(f"a frame is {self.frame_bytes} bytes, got {len(frame)}")
        voiced = bool(self._vad.is_speech(frame, self.sample_rate))
        if not self._gate_db:
            return voiced
        samples = np.frombuffer(frame, dtype="<i2").astype(np.float32)
        level = 10 * np.log10(float(np.mean(samples * samples)) / 32768.0**2 + 1e-12)
        self._peak_db = max(level if voiced else -120.0, self._peak_db - self._fall_db)
        return voiced and level >= self._peak_db - self._gate_db
