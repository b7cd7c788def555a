"""Stand-ins for the collaborators of the server's units (sessions, workers, the stream): a recognizer and an NLU
backend with scripted answers and costs, and a VAD with scripted decisions. What a test claims to test is always
the real thing; these only replace the models around it. The real models run in the end-to-end tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from assistant.config import Settings
from assistant.domain import INTENTS, SLOT_NAMES, bio_labels
from assistant.nlu.labels import LabelSet
from assistant.nlu.parser import IntentSlotParser
from assistant.nlu.tokenizer import WordPieceTokenizer
from assistant.text_pipeline import TextPipeline
from assistant.wiring import build_text_pipeline
from engines.base import BackendInfo, Logits
from models.encoder import encoder_dir

__all__ = ["FakeRecognizer", "FakeIdentifier", "FakeNLUBackend", "ScriptedVad", "fake_pipeline", "break_dialogue",
           "LABELS"]

LABELS = LabelSet(INTENTS, tuple(bio_labels(SLOT_NAMES)))


class FakeRecognizer:
    """Answers every decode with `reply(pcm)` after holding its thread for `seconds` per utterance (a CPU decodes
    a batch one utterance after another); notes the length of each utterance it was given."""

    model_name, device, compute_type = "fake", "cpu", "none"

    def __init__(self, reply: Callable[[bytes], str] | str = "", seconds: float = 0.0) -> None:
        self._reply = reply if callable(reply) else (lambda _pcm: reply)
        self.seconds = seconds
        self.lengths: list[int] = []
        self.priorities: list[int] = []  # of each batch
        self._lock = threading.Lock()

    def transcribe_batch(self, pcms: list[bytes], priority: int = 0) -> list[str]:
        self.priorities.append(priority)
        texts = []
        for pcm in pcms:
            time.sleep(self.seconds)
            with self._lock:
                self.lengths.append(len(pcm))
            texts.append(self._reply(pcm))
        return texts


class FakeIdentifier(FakeRecognizer):
    """A multilingual recognizer of `language` for "auto" sessions: says every audio speaks `spoken` (a test
    changes it between sessions) and hears it itself when that is its own language."""

    def __init__(self, language: str, reply: str, spoken: str) -> None:
        super().__init__(reply)
        self.language, self.spoken = language, spoken
        self.identified: list[str] = []  # the language given for each audio

    def identify_batch(self, pcms: list[bytes], choices: Sequence[str], priority: int = 0
                       ) -> list[tuple[str, str | None]]:
        assert self.spoken in choices
        self.identified += [self.spoken] * len(pcms)
        texts: list[str | None] = ([*self.transcribe_batch(pcms, priority)] if self.spoken == self.language
                                   else [None] * len(pcms))
        return [(self.spoken, text) for text in texts]


class FakeNLUBackend:
    """The engines.base protocol with scripted logits: every request is `intent` with probability about 0.99 (or
    `weak`: about 0.4, below the parser's threshold) and every word tagged `slot` ("O": no slot); counts its calls
    and their batch sizes."""

    def __init__(self, intent: str = "book_meeting", *, weak: bool = False, slot: str = "O") -> None:
        self.intent = LABELS.intents.index(intent)
        self.score = 1.0 if weak else 6.0
        self.slot = LABELS.slot_labels.index(slot)
        self.calls: list[int] = []

    def run(self, input_ids: NDArray[np.int64], attention_mask: NDArray[np.int64]) -> Logits:
        batch, seq = input_ids.shape
        self.calls.append(batch)
        intents = np.zeros((batch, len(LABELS.intents)), np.float32)
        intents[:, self.intent] = self.score
        slots = np.zeros((batch, seq, len(LABELS.slot_labels)), np.float32)
        slots[:, :, self.slot] = 6.0
        return intents, slots

    def info(self) -> BackendInfo:
        return BackendInfo("fake", "cpu", "fp32", "scripted logits")

    def close(self) -> None:
        pass


def fake_pipeline(settings: Settings, store: Path, backend: FakeNLUBackend | None = None) -> TextPipeline:
    """The real text pipeline (tokenizer, parser, dialogue, SQLite store) around a scripted backend."""
    parser = IntentSlotParser(backend or FakeNLUBackend(), WordPieceTokenizer(encoder_dir() / "tokenizer.json"),
                              LABELS)
    return build_text_pipeline(settings, store, parser=parser)


def break_dialogue(pipeline: TextPipeline, fails: Callable[[str], bool]) -> None:
    """The dialogue step raises "store went away" for the turns `fails(conversation)` picks; others go on."""
    real_turn = pipeline.dialogue.turn

    def turn(conversation: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        if fails(conversation):
            raise RuntimeError("store went away")
        return real_turn(conversation, *args, **kwargs)

    pipeline.dialogue.turn = turn  # type: ignore[method-assign]


class ScriptedVad:
    """Voice decisions from a script, one per frame: 'x' voiced, '.' not."""

    def __init__(self, script: Iterable[str]) -> None:
        self._decisions = iter("".join(script))

    def is_voiced(self, frame: bytes) -> bool:
        return next(self._decisions) == "x"
