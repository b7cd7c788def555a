"""Smart Turn v3.2, the open acoustic end-of-turn model, as our optional turn model and the benchmark's baseline.

The model (BSD-2, 8.7 MB of ONNX) ships inside the `pipecat-ai` wheel; requirements/models.txt installs that
wheel with --no-deps, and only the ONNX file is read from it (pipecat itself is never imported). Its input is the
last 8 s of 16 kHz audio as Whisper log-mel features (80 x 800; faster-whisper's feature extractor computes them,
matching pipecat's own to 3e-6); its output, the probability that the speaker has finished.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import numpy as np

__all__ = ["SmartTurn", "smart_turn_model_file", "SMART_TURN_PACKAGE"]

SMART_TURN_PACKAGE = "pipecat-ai"
_MODEL_NAME = "smart-turn-v3.2-cpu.onnx"
_RATE = 16_000
_WINDOW_S = 8


def smart_turn_model_file() -> Path:
    """The ONNX file inside the installed pipecat-ai wheel; FileNotFoundError says how to get it."""
    try:
        files = metadata.files(SMART_TURN_PACKAGE) or []
    except metadata.PackageNotFoundError:
        files = []
    for file in files:
        if file.name == _MODEL_NAME:
            return Path(str(file.locate()))
    raise FileNotFoundError(f"Smart Turn needs {_MODEL_NAME} from the {SMART_TURN_PACKAGE} wheel: "
                            f"pip install --no-deps -r requirements/models.txt")


class SmartTurn:
    name = "smart-turn-v3.2"

    def __init__(self, model_file: Path | None = None, threads: int = 1) -> None:
        import onnxruntime as ort
        from faster_whisper.feature_extractor import FeatureExtractor

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads  # one: it runs beside the recognizer, never instead of it
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(model_file or smart_turn_model_file()), options,
                                             providers=["CPUExecutionProvider"])
        self._features = FeatureExtractor(feature_size=80, chunk_length=_WINDOW_S)

    def _input(self, pcm: bytes) -> np.ndarray:
        audio = np.frombuffer(pcm, dtype=np.int16).astype(np.float32) / 32768.0
        samples = _WINDOW_S * _RATE
        audio = audio[-samples:] if len(audio) > samples else np.pad(audio, (samples - len(audio), 0))
        audio = (audio - audio.mean()) / np.sqrt(audio.var() + 1e-7)  # the model was trained on normalized audio
        features: np.ndarray = self._features(audio, padding=0)
        return features[:, : _WINDOW_S * _RATE // 160].astype(np.float32)

    def probabilities(self, pcms: list[bytes]) -> list[float]:
        """16 kHz mono PCM of each utterance so far -> the probability that each speaker is done."""
        batch = np.stack([self._input(pcm) for pcm in pcms])
        (out,) = self._session.run(None, {"input_features": batch})
        return [float(p) for p in np.asarray(out).reshape(len(pcms), -1)[:, 0]]
