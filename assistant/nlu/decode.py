"""Logits -> intent and word tags, shared by the parser and by evaluation."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from assistant.nlu.labels import LabelSet
from assistant.nlu.tokenizer import TokenizedText, WordPieceTokenizer
from engines.base import Logits

__all__ = ["Decoded", "RunFn", "decode_batch", "decode_in_batches", "softmax"]

RunFn = Callable[[NDArray[np.int64], NDArray[np.int64]], Logits]  # a backend's run()


@dataclass(frozen=True)
class Decoded:
    intent: str
    intent_probability: float
    word_tags: list[str]
    word_probabilities: list[float]


def softmax(logits: NDArray[np.float32], axis: int = -1) -> NDArray[np.float32]:
    shifted = logits - logits.max(axis=axis, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=axis, keepdims=True)  # type: ignore[no-any-return]


def decode_batch(
    intent_logits: NDArray[np.float32],
    slot_logits: NDArray[np.float32],
    items: Sequence[TokenizedText],
    labels: LabelSet,
) -> list[Decoded]:
    intent_probs = softmax(intent_logits.astype(np.float32))
    slot_probs = softmax(slot_logits.astype(np.float32))
    out: list[Decoded] = []
    for row, item in enumerate(items):
        best = int(intent_probs[row].argmax())
        first = item.word_first_token
        word_probs = slot_probs[row, first]  # (words, labels): each word is tagged on its first sub-token
        tag_ids = word_probs.argmax(axis=-1)
        out.append(Decoded(
            intent=labels.intents[best],
            intent_probability=float(intent_probs[row, best]),
            word_tags=[labels.slot_labels[t] for t in tag_ids],
            word_probabilities=[float(word_probs[w, t]) for w, t in enumerate(tag_ids)],
        ))
    return out


def decode_in_batches(run: RunFn, items: Sequence[TokenizedText], tokenizer: WordPieceTokenizer, labels: LabelSet,
                      batch_size: int = 64) -> list[Decoded]:
    """Run and decode items in length-sorted batches (least padding), returned in the original order."""
    order = sorted(range(len(items)), key=lambda i: items[i].num_tokens)
    results: dict[int, Decoded] = {}
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        chunk_items = [items[i] for i in chunk]
        batch = tokenizer.batch(chunk_items)
        intent_logits, slot_logits = run(batch.input_ids, batch.attention_mask)
        for i, decoded in zip(chunk, decode_batch(intent_logits, slot_logits, chunk_items, labels), strict=True):
            results[i] = decoded
    return [results[i] for i in range(len(items))]
