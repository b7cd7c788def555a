"""Text -> intent + slots: clean the text, tokenize, run a backend, decode BIO tags into slot spans.

Bad input never raises out of here: empty or overlong text becomes a ParseFailure with a code, and anything the
model does not recognise with confidence becomes `out_of_scope`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assistant.domain import OUT_OF_SCOPE, Intent, Slot
from assistant.nlu.bio import tags_to_spans
from assistant.nlu.decode import Decoded, decode_in_batches
from assistant.nlu.labels import LabelSet
from assistant.nlu.tokenizer import TokenizedText, WordPieceTokenizer
from engines.base import NLUBackend

__all__ = ["SlotValue", "Guess", "Understanding", "ParseFailure", "IntentSlotParser", "clean_text"]

_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class SlotValue:
    name: Slot
    text: str
    start: int  # character offsets into Understanding.text
    end: int
    confidence: float  # the least confident of its words

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "text": self.text, "start": self.start, "end": self.end,
                "confidence": round(self.confidence, 4)}


@dataclass(frozen=True)
class Guess:
    """What the model said when its confidence fell below the threshold (a dialogue may still use it)."""

    intent: Intent
    confidence: float
    slots: tuple[SlotValue, ...]


@dataclass(frozen=True)
class Understanding:
    text: str
    intent: Intent
    confidence: float
    slots: tuple[SlotValue, ...]
    guess: Guess | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "intent": self.intent, "confidence": round(self.confidence, 4),
                               "slots": [s.to_dict() for s in self.slots]}
        if self.guess is not None:
            out["low_confidence"] = {"intent": self.guess.intent, "confidence": round(self.guess.confidence, 4),
                                     "slots": [s.to_dict() for s in self.guess.slots]}
        return out


@dataclass(frozen=True)
class ParseFailure:
    text: str
    code: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "error": {"code": self.code, "message": self.message}}


def clean_text(raw: str) -> str:
    """Unicode-normalize, turn control characters into spaces, collapse whitespace."""
    text = unicodedata.normalize("NFC", raw)
    text = "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in text)
    return _WHITESPACE.sub(" ", text).strip()


class IntentSlotParser:
    def __init__(self, backend: NLUBackend, tokenizer: WordPieceTokenizer, labels: LabelSet, *,
                 min_confidence: float = 0.5, max_tokens: int = 128, max_chars: int = 1000,
                 batch_size: int = 64) -> None:
        self.backend = backend
        self.tokenizer = tokenizer
        self.labels = labels
        self.min_confidence = min_confidence
        self.max_tokens = max_tokens
        self.max_chars = max_chars
        self.batch_size = batch_size

    def parse(self, text: str) -> Understanding | ParseFailure:
        return self.parse_many([text])[0]

    def parse_many(self, texts: Sequence[str]) -> list[Understanding | ParseFailure]:
        """Parse many texts in batches; one bad text gets its own failure and never spoils the others."""
        cleaned = [clean_text(t) for t in texts]
        results: list[Understanding | ParseFailure | None] = [self._refuse(t) for t in cleaned]
        candidates = [i for i, r in enumerate(results) if r is None]
        items = self.tokenizer.tokenize([cleaned[i] for i in candidates])
        runnable: list[tuple[int, TokenizedText]] = []
        for i, item in zip(candidates, items, strict=True):
            if item.num_tokens > self.max_tokens:
                results[i] = ParseFailure(cleaned[i], "text_too_long",
                                          f"the text has {item.num_tokens} tokens; at most {self.max_tokens} fit")
            else:
                runnable.append((i, item))
        if runnable:
            decoded = decode_in_batches(self.backend.run, [item for _, item in runnable], self.tokenizer,
                                        self.labels, self.batch_size)
            for (i, item), d in zip(runnable, decoded, strict=True):
                results[i] = self._understanding(cleaned[i], item, d)
        return [r for r in results if r is not None]

    def _refuse(self, text: str) -> ParseFailure | None:
        if not text:
            return ParseFailure(text, "empty_text", "there is nothing to understand: the text is empty")
        if len(text) > self.max_chars:
            return ParseFailure(text[:80] + "...", "text_too_long",
                                f"the text has {len(text)} characters; a request has at most {self.max_chars}")
        return None

    def _understanding(self, text: str, item: TokenizedText, decoded: Decoded) -> Understanding:
        if decoded.intent == OUT_OF_SCOPE:
            return Understanding(text, OUT_OF_SCOPE, decoded.intent_probability, ())
        slots = []
        for first, last, name in tags_to_spans(decoded.word_tags):
            start, end = item.word_spans[first][0], item.word_spans[last - 1][1]
            confidence = min(decoded.word_probabilities[first:last])
            slots.append(SlotValue(Slot(name), text[start:end], start, end, confidence))
        if decoded.intent_probability < self.min_confidence:
            guess = Guess(Intent(decoded.intent), decoded.intent_probability, tuple(slots))
            return Understanding(text, OUT_OF_SCOPE, 1.0 - decoded.intent_probability, (), guess)
        return Understanding(text, Intent(decoded.intent), decoded.intent_probability, tuple(slots))
