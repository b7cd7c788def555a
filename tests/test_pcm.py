"""PCM decoding and resampling on real signals, fed in awkward chunk sizes."""

import random

import numpy as np
import pytest

from assistant.audio.pcm import PcmDecoder
from assistant.errors import InputError


def tone(rate: int, seconds: float, hz: float, channels: int = 1) -> bytes:
    t = np.arange(int(rate * seconds)) / rate
    mono = (0.5 * 32767 * np.sin(2 * np.pi * hz * t)).astype("<i2")
    return (np.repeat(mono[:, None], channels, axis=1) if channels == 2 else mono).tobytes()


def decode(decoder: PcmDecoder, data: bytes, seed: int = 0) -> np.ndarray:
    rng = random.Random(seed)
    frames, pos = [], 0
    while pos < len(data):
        size = rng.randint(1, 3001)  # odd sizes split samples and channel pairs
        frames += decoder.feed(data[pos : pos + size])
        pos += size
    frames += decoder.flush()
    assert all(len(f) == decoder.frame_bytes == 640 for f in frames)
    return np.frombuffer(b"".join(frames), dtype="<i2")


@pytest.mark.parametrize(("rate", "channels"), [(48_000, 1), (44_100, 1), (16_000, 1), (48_000, 2), (8_000, 1)])
def test_resampled_to_16k_keeping_pitch_and_length(rate: int, channels: int) -> None:
    out = decode(PcmDecoder(rate, channels), tone(rate, 2.0, 440.0, channels))
    assert abs(len(out) - 32_000) <= 320  # 2 s at 16 kHz, give or take the last padded frame
    spectrum = np.abs(np.fft.rfft(out[1600:30400].astype(float)))
    peak_hz = np.argmax(spectrum) * 16_000 / len(out[1600:30400])
    assert abs(peak_hz - 440.0) < 2.0
    assert 0.4 * 32767 < np.abs(out[1600:30400]).max() < 0.6 * 32767  # level kept, no clipping


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"sample_rate": 12_345}, "sample rate 12345 is not supported"),
    ({"sample_rate": 16_000, "channels": 6}, "6 channels"),
    ({"sample_rate": 16_000, "sample_format": "opus"}, "'opus' is not supported"),
])
def test_unsupported_audio_is_refused_clearly(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        PcmDecoder(**kwargs)  # type: ignore[arg-type]
    assert info.value.code == "unsupported_audio"
