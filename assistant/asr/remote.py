"""The recognizer of a gateway process: the model server's `asr` model, called over gRPC.

Each call carries one batch the gateway's own batcher formed, with its priority (finals, then reads at a
pause, then partials): Triton's dynamic batcher merges the batches of every gateway and serves the urgent kind
first. Audio travels as one BYTES element per utterance (16 kHz 16-bit PCM), so utterances of any length share
a batch; the model server decodes them with the same code as a single process (assistant/asr/whisper.py).
Each row carries its priority too, because the recognizer's rule depends on it (finals and reads return the
n-best, partials the greedy text), and each answer carries the other readings (`hypotheses`, JSON) that
understanding chooses from (assistant/nlu/nbest.py): a gateway hears what a single process hears.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import numpy as np

from assistant.asr.hypotheses import Heard, alternatives_of, score_of
from engines.triton_client import models_url
from engines.triton_pool import ModelServer

__all__ = ["ASR_MODEL", "PCM_INPUT", "PRIORITY_INPUT", "TEXT_OUTPUT", "HYPOTHESES_OUTPUT", "PRIORITY_LEVELS",
           "RemoteRecognizer", "triton_priority", "transcribe_rows", "reading_rows", "heard_row"]

ASR_MODEL = "asr"
PCM_INPUT, PRIORITY_INPUT = "pcm", "priority"  # BYTES [1], INT32 [1] (the workers' priority of the row)
TEXT_OUTPUT, HYPOTHESES_OUTPUT = "text", "hypotheses"  # BYTES [1] each: the best text; its score and the others
PRIORITY_LEVELS = 3  # finals, reads, partials (assistant/server/workers.py)


def triton_priority(priority: int) -> int:
    """Workers' priorities count from 0 (finals); Triton's from 1 (its 0 means the model's default)."""
    return min(priority, PRIORITY_LEVELS - 1) + 1


def transcribe_rows(transcribe: Callable[[list[bytes], int], list[str]], pcms: Sequence[bytes],
                    priorities: Sequence[int]) -> list[str]:
    """The model server's side: rows of one Triton batch may come from requests of different priorities; each
    priority's rows are decoded together, as the gateway's own batch would have been."""
    texts: list[str] = [""] * len(pcms)
    for priority in sorted(set(priorities)):
        rows = [i for i, p in enumerate(priorities) if p == priority]
        for i, text in zip(rows, transcribe([pcms[i] for i in rows], priority), strict=True):
            texts[i] = text
    return texts


def reading_rows(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The two BYTES outputs of the texts the recognizer returned (a `Heard` keeps its score and the others)."""
    text_rows = np.empty((len(texts), 1), dtype=np.object_)
    hypotheses_rows = np.empty((len(texts), 1), dtype=np.object_)
    for i, text in enumerate(texts):
        text_rows[i, 0] = str(text).encode("utf-8")
        hypotheses_rows[i, 0] = json.dumps({"score": score_of(text), "alternatives": alternatives_of(text)},
                                           ensure_ascii=False).encode("utf-8")
    return text_rows, hypotheses_rows


def heard_row(text: bytes, hypotheses: bytes) -> str:
    """The gateway's side: one row's two outputs as the recognizer returned them (`Heard` when it has others)."""
    readings = json.loads(bytes(hypotheses).decode("utf-8"))
    best = bytes(text).decode("utf-8")
    if not readings["alternatives"]:
        return best
    return Heard(best, float(readings["score"]), [(str(t), float(s)) for t, s in readings["alternatives"]])


class RemoteRecognizer:
    def __init__(self, models: ModelServer) -> None:
        self._models = models
        self.model_name = f"{ASR_MODEL}@{models_url(models.address)}"
        self.device, self.compute_type = "remote", "-"

    def transcribe_batch(self, pcms: list[bytes], priority: int = 0) -> list[str]:
        rows = np.empty((len(pcms), 1), dtype=np.object_)
        for i, pcm in enumerate(pcms):
            rows[i, 0] = pcm
        priorities = np.full((len(pcms), 1), priority, dtype=np.int32)
        texts: list[str] = []
        step = self._models.shape(ASR_MODEL).max_batch
        for start in range(0, len(pcms), step):
            out = self._models.infer(ASR_MODEL, {PCM_INPUT: rows[start:start + step],
                                                 PRIORITY_INPUT: priorities[start:start + step]},
                                     [TEXT_OUTPUT, HYPOTHESES_OUTPUT], priority=triton_priority(priority))
            texts += [heard_row(t[0], h[0]) for t, h in zip(out[TEXT_OUTPUT], out[HYPOTHESES_OUTPUT], strict=True)]
        return texts

    def warm_up(self) -> float:
        return 0.0
