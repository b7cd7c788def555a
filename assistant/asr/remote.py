"""The recognizer of a gateway process: the model server's `asr` model, called over gRPC.

Each call carries one batch the gateway's own batcher formed, with its priority (finals, then reads at a
pause, then partials): Triton's dynamic batcher merges the batches of every gateway and serves the urgent kind
first. Audio travels as one BYTES element per utterance (16 kHz 16-bit PCM), so utterances of any length share
a batch; the model server decodes them with the same code as a single process (assistant/asr/whisper.py).
"""

from __future__ import annotations

import numpy as np

from engines.triton_client import models_url
from engines.triton_pool import ModelServer

__all__ = ["ASR_MODEL", "PCM_INPUT", "TEXT_OUTPUT", "PRIORITY_LEVELS", "RemoteRecognizer", "triton_priority"]

ASR_MODEL = "asr"
PCM_INPUT, TEXT_OUTPUT = "pcm", "text"
PRIORITY_LEVELS = 3  # finals, reads, partials (assistant/server/workers.py)


def triton_priority(priority: int) -> int:
    """Workers' priorities count from 0 (finals); Triton's from 1 (its 0 means the model's default)."""
    return min(priority, PRIORITY_LEVELS - 1) + 1


class RemoteRecognizer:
    def __init__(self, models: ModelServer) -> None:
        self._models = models
        self.model_name = f"{ASR_MODEL}@{models_url(models.address)}"
        self.device, self.compute_type = "remote", "-"

    def transcribe_batch(self, pcms: list[bytes], priority: int = 0) -> list[str]:
        rows = np.empty((len(pcms), 1), dtype=np.object_)
        for i, pcm in enumerate(pcms):
            rows[i, 0] = pcm
        texts: list[str] = []
        step = self._models.shape(ASR_MODEL).max_batch
        for start in range(0, len(pcms), step):
            out = self._models.infer(ASR_MODEL, {PCM_INPUT: rows[start:start + step]}, [TEXT_OUTPUT],
                                     priority=triton_priority(priority))
            texts += [bytes(row[0]).decode("utf-8") for row in out[TEXT_OUTPUT]]
        return texts

    def warm_up(self) -> float:
        return 0.0
