"""A dynamic batcher in front of one worker thread, like Triton's: requests from every session queue up, and
the worker takes as many as are waiting (up to max_batch) in one model call.

When the worker is idle and one request arrives, it waits at most max_delay_us for company before running it;
while the worker is busy, requests gather on their own, so under load batches grow without any waiting. Each
request has a priority (lower runs first): a batch holds requests of one priority only, so a low-priority kind
of work (partial transcripts) never delays or rides along with urgent work (final transcripts).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["BatchPolicy", "DynamicBatcher", "ItemFailed"]

In = TypeVar("In")
Out = TypeVar("Out")


@dataclass(frozen=True)
class ItemFailed:
    """What a batch function returns for one item that failed while the others succeeded."""

    error: Exception


@dataclass(frozen=True)
class BatchPolicy:
    max_batch: int = 32
    max_delay_us: int = 0  # how long an idle worker waits for a first request's company


@dataclass(order=True)
class _Request(Generic[In, Out]):
    priority: int
    seq: int
    item: In = field(compare=False)
    future: Future[Out] = field(compare=False)


class DynamicBatcher(Generic[In, Out]):
    """run(items) -> outputs in the same order, on this batcher's own thread; on_batch(priority, size, seconds)
    is told about every batch (for metrics)."""

    def __init__(self, name: str, run: Callable[[list[In]], Sequence[Out]], policy: BatchPolicy,
                 on_batch: Callable[[int, int, float], None] | None = None) -> None:
        if policy.max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self.name, self._run, self.policy, self._on_batch = name, run, policy, on_batch
        self._queue: list[_Request[In, Out]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name=f"batcher-{name}", daemon=True)
        self._thread.start()

    def submit(self, item: In, priority: int = 0) -> Future[Out]:
        future: Future[Out] = Future()
        with self._cond:
            if self._closed:
                raise RuntimeError(f"the {self.name} batcher is closed")
            heapq.heappush(self._queue, _Request(priority, next(self._seq), item, future))
            self._cond.notify()
        return future

    async def __call__(self, item: In, priority: int = 0) -> Out:
        return await asyncio.wrap_future(self.submit(item, priority))

    def _take(self) -> list[_Request[In, Out]] | None:
        with self._cond:
            while not self._queue and not self._closed:
                self._cond.wait()
            if self._closed:
                return None
            deadline = time.monotonic() + self.policy.max_delay_us / 1e6
            while len(self._queue) < self.policy.max_batch and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            top = self._queue[0].priority  # the heap's head: the most urgent kind waiting
            batch: list[_Request[In, Out]] = []
            while self._queue and len(batch) < self.policy.max_batch and self._queue[0].priority == top:
                batch.append(heapq.heappop(self._queue))
            return batch

    def _loop(self) -> None:
        while True:
            batch = self._take()
            if batch is None:
                return
            live = [r for r in batch if r.future.set_running_or_notify_cancel()]
            if not live:
                continue
            started = time.perf_counter()
            outputs: Sequence[Out | ItemFailed] | BaseException
            try:
                outputs = list(self._run([r.item for r in live]))
                if len(outputs) != len(live):
                    raise RuntimeError(f"the {self.name} batch gave {len(outputs)} outputs for {len(live)} inputs")
            except BaseException as exc:  # every waiter hears about the failure; the worker goes on
                outputs = exc
            if self._on_batch is not None:  # counted before any waiter wakes: a result seen is a batch counted
                self._on_batch(batch[0].priority, len(live), time.perf_counter() - started)
            if isinstance(outputs, BaseException):
                for request in live:
                    request.future.set_exception(outputs)
                continue
            for request, output in zip(live, outputs, strict=True):
                if isinstance(output, ItemFailed):
                    request.future.set_exception(output.error)
                else:
                    request.future.set_result(output)

    def close(self) -> None:
        """Stop taking work; requests still queued fail with a clear error."""
        with self._cond:
            self._closed = True
            left, self._queue = self._queue, []
            self._cond.notify_all()
        for request in left:
            if request.future.set_running_or_notify_cancel():
                request.future.set_exception(RuntimeError(f"the {self.name} batcher closed"))
        self._thread.join(timeout=30)
