"""faster-whisper as a pure engine call: 16 kHz PCM in, text out.

Models come from PyPI packages, never a hub (assistant/asr/models.py). The lazy segment generator is consumed
here, inside the worker thread that calls transcribe().
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from assistant.asr.models import whisper_model_dir

__all__ = ["WhisperRecognizer"]


class WhisperRecognizer:
    def __init__(self, cache_dir: Path, model: str = "tiny.en", device: str = "cpu", compute_type: str = "int8",
                 beam_size: int = 1) -> None:
        from faster_whisper import WhisperModel

        self.model_name, self.device, self.compute_type = model, device, compute_type
        self._model = WhisperModel(str(whisper_model_dir(model, cache_dir)), device=device, compute_type=compute_type)
        self._beam_size = beam_size

    def transcribe(self, pcm16k: bytes) -> str:
        # language="en": base is multilingual and would otherwise guess the language of every utterance
        audio = np.frombuffer(pcm16k, dtype="<i2").astype(np.float32) / 32768.0
        segments, _ = self._model.transcribe(audio, beam_size=self._beam_size, language="en",
                                             condition_on_previous_text=False, without_timestamps=True,
                                             vad_filter=False)
        return " ".join(s.text.strip() for s in segments).strip()
