"""How a model's dynamic batcher batches: one type for the voice server's batchers (assistant/server/batcher.py)
and Triton's (assistant/model_server), built from [serving]'s keys of the same names."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BatchPolicy"]


@dataclass(frozen=True)
class BatchPolicy:
    max_batch: int = 32
    max_delay_us: int = 0  # how long an idle worker waits for a first request's company
    max_queue: int = 1024  # requests waiting (all priorities); past it a submit raises Overloaded
