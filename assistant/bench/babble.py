"""Babble noise: other requests of the same voice talking underneath, at a chosen signal-to-noise ratio.

A person asking for a room in an open office is heard over colleagues; `with_babble` mixes a request with three
other requests of the corpus (looped to its length, offset so no two start together), scaled so the request's
speech (its active level, silences left out) is `snr_db` louder than the babble (its mean power), and clipped to
16 bits. Deterministic: the same inputs give the same audio, so a benchmark's noisy run can be repeated.
"""

from __future__ import annotations

import numpy as np

__all__ = ["with_babble", "TALKERS"]

TALKERS = 3
_SPEECH_LEVEL = 300  # |sample| above this counts as speech when measuring the request's loudness


def _speech_power(samples: np.ndarray) -> float:
    """The mean power of the request while it speaks (its silences left out)."""
    loud = samples[np.abs(samples) > _SPEECH_LEVEL]
    return float(np.mean((loud if loud.size else samples) ** 2)) or 1.0


def with_babble(request: bytes, others: list[bytes], snr_db: float) -> bytes:
    """16-bit mono PCM of `request` with `others` (16-bit mono PCM, the same rate) talking underneath."""
    speech = np.frombuffer(request, dtype="<i2").astype(np.float64)
    babble = np.zeros_like(speech)
    for i, other in enumerate(others):
        talker = np.frombuffer(other, dtype="<i2").astype(np.float64)
        if talker.size == 0:
            continue
        start = (i * speech.size // max(len(others), 1)) % talker.size  # each talker a different part of itself
        looped = np.resize(np.roll(talker, -start), speech.size)
        babble += looped
    noise_power = float(np.mean(babble**2))  # babble is never silent for long: its plain mean power
    if noise_power:
        babble *= np.sqrt(_speech_power(speech) / noise_power / 10 ** (snr_db / 10))
    return np.clip(speech + babble, -32768, 32767).astype("<i2").tobytes()
