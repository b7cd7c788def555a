"""Client audio -> 16 kHz mono PCM frames for the VAD and the recognizer.

Streaming: frames of any size come in (a sample or a channel pair may be split across them); resampling
(48 and 44.1 kHz are what browsers capture) uses soxr's streaming resampler, which keeps its filter state
between chunks, so chunk boundaries leave no clicks.
"""

from __future__ import annotations

import numpy as np
import soxr

from assistant.errors import InputError

__all__ = ["PcmDecoder", "SUPPORTED_RATES", "TARGET_RATE"]

TARGET_RATE = 16_000
SUPPORTED_RATES = (8_000, 11_025, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000)


class PcmDecoder:
    def __init__(self, sample_rate: int, channels: int = 1, sample_format: str = "pcm_s16le",
                 frame_ms: int = 20) -> None:
        if sample_format != "pcm_s16le":
            raise InputError("unsupported_audio", f"format {sample_format!r} is not supported; send pcm_s16le")
        if channels not in (1, 2):
            raise InputError("unsupported_audio", f"{channels} channels are not supported; send mono or stereo")
        if sample_rate not in SUPPORTED_RATES:
            rates = ", ".join(str(r) for r in SUPPORTED_RATES)
            raise InputError("unsupported_audio", f"sample rate {sample_rate} is not supported; use one of {rates}")
        self.sample_rate = sample_rate
        self.channels = channels
        self._block = 2 * channels  # bytes per sample frame
        self._pending = b""  # bytes of an incomplete sample frame
        self._out = np.zeros(0, dtype=np.int16)
        self._frame_samples = TARGET_RATE * frame_ms // 1000
        self._resampler = None if sample_rate == TARGET_RATE else soxr.ResampleStream(
            sample_rate, TARGET_RATE, 1, dtype="int16", quality="HQ")

    @property
    def frame_bytes(self) -> int:
        return 2 * self._frame_samples

    def feed(self, data: bytes) -> list[bytes]:
        """Any number of bytes in; whole 16 kHz mono frames out."""
        data = self._pending + data
        usable = len(data) - len(data) % self._block
        self._pending = data[usable:]
        samples = np.frombuffer(data[:usable], dtype="<i2")
        if self.channels == 2:
            samples = samples.reshape(-1, 2).mean(axis=1).astype(np.int16)
        return self._frames(samples, last=False)

    def flush(self) -> list[bytes]:
        """The stream ended: what is left, the last frame padded with silence."""
        return self._frames(np.zeros(0, dtype=np.int16), last=True)

    def _frames(self, samples: np.ndarray, last: bool) -> list[bytes]:
        if self._resampler is not None:
            samples = self._resampler.resample_chunk(samples, last=last)
        self._out = np.concatenate([self._out, samples.astype(np.int16)])
        if last and len(self._out) % self._frame_samples:
            pad = self._frame_samples - len(self._out) % self._frame_samples
            self._out = np.concatenate([self._out, np.zeros(pad, dtype=np.int16)])
        count = len(self._out) // self._frame_samples
        frames = [self._out[i * self._frame_samples : (i + 1) * self._frame_samples].tobytes() for i in range(count)]
        self._out = self._out[count * self._frame_samples :]
        return frames
