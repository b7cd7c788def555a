"""Logits -> intent and word tags, shared by the parser and by evaluation."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.typing import NDArray

from assistant.nlu.labels import LabelSet
from assistant.nlu.tokenizer import TokenizedText, WordPieceTokenizer
from engines.base import Logits

__all__ = ["Decoded", "RunFn", "allowed_transitions", "constrained_tags", "decode_batch", "decode_in_batches",
           "softmax"]

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


def allowed_transitions(slot_labels: Sequence[str]) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """BIO's grammar as masks: (may start a sentence (labels,), may follow (previous, next)). I-X only continues
    B-X or I-X."""
    inside = [label[2:] if label.startswith("I-") else None for label in slot_labels]
    name = [label[2:] if label[:2] in ("B-", "I-") else None for label in slot_labels]
    start = np.array([i is None for i in inside])
    follow = np.array([[inside[b] is None or name[a] == inside[b] for b in range(len(slot_labels))]
                       for a in range(len(slot_labels))])
    return start, follow


def constrained_tags(word_probs: NDArray[np.float32], start: NDArray[np.bool_], follow: NDArray[np.bool_]
                     ) -> NDArray[np.int64]:
    """The most probable tag sequence that is valid BIO (Viterbi over log-probabilities with forbidden
    transitions): a stray I- is never emitted, so a span is never cut in two by the decoder ("a" + "quarter past
    3pm"). Where the per-word best is already valid, this is that."""
    greedy: NDArray[np.int64] = word_probs.argmax(axis=-1).astype(np.int64)
    if len(greedy) == 0 or (start[greedy[0]] and all(follow[a, b] for a, b in zip(greedy[:-1], greedy[1:],
                                                                                        strict=True))):
        return greedy  # already valid: no search
    forbidden = np.where(follow, 0.0, -np.inf)
    log_p = np.log(np.maximum(word_probs, 1e-12))
    score = np.where(start, log_p[0], -np.inf)
    back = np.zeros(word_probs.shape, dtype=np.int64)
    for w in range(1, len(word_probs)):
        candidates = score[:, None] + forbidden  # (previous, next)
        back[w] = candidates.argmax(axis=0)
        score = candidates.max(axis=0) + log_p[w]
    tags = np.zeros(len(word_probs), dtype=np.int64)
    tags[-1] = int(score.argmax())
    for w in range(len(word_probs) - 1, 0, -1):
        tags[w - 1] = back[w, tags[w]]
    return tags


def decode_batch(
    intent_logits: NDArray[np.float32],
    slot_logits: NDArray[np.float32],
    items: Sequence[TokenizedText],
    labels: LabelSet,
    constrained: bool = True,
) -> list[Decoded]:
    """`constrained=False`: each word's best tag on its own (only to measure what the constraint is worth)."""
    intent_probs = softmax(intent_logits.astype(np.float32))
    slot_probs = softmax(slot_logits.astype(np.float32))
    start, follow = _transitions(tuple(labels.slot_labels))
    out: list[Decoded] = []
    for row, item in enumerate(items):
        best = int(intent_probs[row].argmax())
        first = item.word_first_token
        word_probs = slot_probs[row, first]  # (words, labels): each word is tagged on its first sub-token
        tag_ids = constrained_tags(word_probs, start, follow) if constrained else word_probs.argmax(axis=-1)
        out.append(Decoded(
            intent=labels.intents[best],
            intent_probability=float(intent_probs[row, best]),
            word_tags=[labels.slot_labels[t] for t in tag_ids],
            word_probabilities=[float(word_probs[w, t]) for w, t in enumerate(tag_ids)],
        ))
    return out


@cache
def _transitions(slot_labels: tuple[str, ...]) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    return allowed_transitions(slot_labels)


def decode_in_batches(run: RunFn, items: Sequence[TokenizedText], tokenizer: WordPieceTokenizer, labels: LabelSet,
                      batch_size: int = 64, constrained: bool = True) -> list[Decoded]:
    """Run and decode items in length-sorted batches (least padding), returned in the original order."""
    order = sorted(range(len(items)), key=lambda i: items[i].num_tokens)
    results: dict[int, Decoded] = {}
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        chunk_items = [items[i] for i in chunk]
        batch = tokenizer.batch(chunk_items)
        intent_logits, slot_logits = run(batch.input_ids, batch.attention_mask)
        decoded_chunk = decode_batch(intent_logits, slot_logits, chunk_items, labels, constrained)
        for i, decoded in zip(chunk, decoded_chunk, strict=True):
            results[i] = decoded
    return [results[i] for i in range(len(items))]
