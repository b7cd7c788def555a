"""The room a request is heard in: reverberation and noise, drawn per request, deterministic for its seed.

Reverberation is a synthetic room response (exponentially decaying noise with the direct sound first, as image-
source and measured responses look at this resolution), with a decay time RT60 of 0.2-0.7 s: a small meeting room
to an open office. Noise is white, pink or brown at 30, 20 or 10 dB below the speech's active level, the range a
laptop microphone meets; a third of the requests stay clean, as a headset hears them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

__all__ = ["Acoustics", "draw_acoustics", "apply"]

_SPEECH_LEVEL = 300  # |sample| above this counts as speech when measuring the request's loudness
_RATE = 16_000


@dataclass(frozen=True)
class Acoustics:
    rt60_s: float | None  # None: dry
    noise: str | None  # "white", "pink", "brown"; None: none
    snr_db: float | None
    seed: int

    @property
    def name(self) -> str:
        room = f"rt60={self.rt60_s:.1f}" if self.rt60_s else "dry"
        return room + (f",{self.noise}@{self.snr_db:g}dB" if self.noise else "")


def draw_acoustics(rng: random.Random) -> Acoustics:
    if rng.random() < 1 / 3:
        return Acoustics(None, None, None, 0)
    rt60 = rng.choice((None, 0.2, 0.4, 0.7))
    noise = rng.choice((None, "white", "pink", "brown"))
    return Acoustics(rt60, noise, rng.choice((30.0, 20.0, 10.0)) if noise else None, rng.randrange(1 << 16))


def apply(samples: np.ndarray, acoustics: Acoustics) -> np.ndarray:
    """16 kHz int16 speech as heard in that room, clipped to 16 bits."""
    rng = np.random.default_rng(acoustics.seed)
    speech = samples.astype(np.float64)
    level = _active_power(speech)
    if acoustics.rt60_s:
        speech = _reverberant(speech, acoustics.rt60_s, rng)
        speech *= np.sqrt(level / _active_power(speech))
    if acoustics.noise and acoustics.snr_db is not None:
        noise = _coloured(acoustics.noise, speech.size, rng)
        speech += noise * np.sqrt(level / float(np.mean(noise**2)) / 10 ** (acoustics.snr_db / 10))
    return np.clip(speech, -32768, 32767).astype(np.int16)


def _active_power(samples: np.ndarray) -> float:
    loud = samples[np.abs(samples) > _SPEECH_LEVEL]
    return float(np.mean((loud if loud.size else samples) ** 2)) or 1.0


def _reverberant(speech: np.ndarray, rt60_s: float, rng: np.random.Generator) -> np.ndarray:
    length = int(rt60_s * _RATE)
    t = np.arange(length) / _RATE
    response = rng.standard_normal(length) * np.exp(-6.9 * t / rt60_s)  # -60 dB at rt60
    response[0] = np.abs(response).max() * 2  # the direct sound
    wet: np.ndarray = np.convolve(speech, response)[: speech.size + length // 4] / np.abs(response).sum() * 4
    return wet


def _coloured(kind: str, size: int, rng: np.random.Generator) -> np.ndarray:
    white = rng.standard_normal(size)
    if kind == "white":
        return white
    spectrum = np.fft.rfft(white)
    freqs = np.fft.rfftfreq(size)
    freqs[0] = freqs[1] if size > 1 else 1.0
    spectrum /= np.sqrt(freqs) if kind == "pink" else freqs
    return np.fft.irfft(spectrum, size)
