"""Timing a backend's calls on real tokenized requests, shared by `bench nlu` and `bench encoders`. Light imports
(no wiring): `bench encoders` runs where only torch and this repository are."""

from __future__ import annotations

import time
from typing import Any

from assistant.nlu.tokenizer import Batch, WordPieceTokenizer

__all__ = ["MIN_CALLS", "token_batches", "time_calls"]

MIN_CALLS = 20


def token_batches(tokenizer: WordPieceTokenizer, texts: list[str], batch_size: int) -> list[Batch]:
    items = tokenizer.tokenize(texts)
    return [tokenizer.batch(items[i : i + batch_size]) for i in range(0, len(items) - batch_size + 1, batch_size)]


def time_calls(run: Any, batches: list[Batch], seconds: float) -> list[float]:
    """Seconds per call, for `seconds` and at least MIN_CALLS calls, after five warm-up calls (the first calls
    allocate and plan)."""
    for batch in batches[:5]:
        run(batch.input_ids, batch.attention_mask)
    samples: list[float] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(samples) < MIN_CALLS:
        batch = batches[len(samples) % len(batches)]
        start = time.perf_counter()
        run(batch.input_ids, batch.attention_mask)
        samples.append(time.perf_counter() - start)
    return samples
