"""A dynamic batcher in front of one worker thread, like Triton's: requests from every session queue up, and
the worker takes as many as are waiting (up to max_batch) in one model call.

When the worker is idle and one request arrives, it waits at most max_delay_us for company before running it;
while the worker is busy, requests gather on their own, so under load batches grow without any waiting. Each
request has a priority (lower runs first) and a batch holds requests of one priority only, so a low-priority kind
of work (partial transcripts) never rides along with urgent work (final transcripts).

Fair share: each request names its owner (a client: all its sessions are one owner). Owners are served
round-robin, one request each in turn, and the owner whose turn it is runs its own most urgent request; the batch
fills up with requests of that priority from the owners after it. So a client that queues a hundred utterances
delays another client's one by about one call, not a hundred, and its urgent work cannot starve another client's
less urgent work either (a read at a pause behind someone else's hundred finals). Within an owner, the most urgent
first. The queue is bounded (max_queue, Triton's max_queue_size): past it a request is refused at once with
`Overloaded` instead of waiting behind work that cannot finish in time.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Generic, TypeVar

from assistant.batching import BatchPolicy
from assistant.errors import Overloaded

__all__ = ["DynamicBatcher", "ItemFailed", "Overloaded"]

In = TypeVar("In")
Out = TypeVar("Out")


@dataclass(frozen=True)
class ItemFailed:
    """What a batch function returns for one item that failed while the others succeeded."""

    error: Exception


@dataclass(frozen=True)
class _Request(Generic[In, Out]):
    priority: int
    item: In
    future: Future[Out]


class _FairQueue(Generic[In, Out]):
    """Every waiting request: a queue per owner and priority, and the owners in turn (round-robin)."""

    def __init__(self) -> None:
        self.owners: deque[Hashable] = deque()  # owners with requests waiting, next first
        self.requests: dict[Hashable, dict[int, deque[_Request[In, Out]]]] = {}
        self._served: Hashable = None  # the owner of the request taken last

    def __len__(self) -> int:
        return len(self.owners)

    def push(self, owner: Hashable, request: _Request[In, Out]) -> None:
        if owner not in self.requests:
            self.requests[owner] = {}
            if len(self.owners) == 1 and self.owners[0] == self._served:
                self.owners.appendleft(owner)  # the only owner in line was just served: the newcomer's turn
            else:
                self.owners.append(owner)
        self.requests[owner].setdefault(request.priority, deque()).append(request)

    def next_priority(self) -> int:
        """The most urgent priority of the owner whose turn it is (there is one: call only when not empty)."""
        return min(self.requests[self.owners[0]])

    def pop(self, priority: int) -> _Request[In, Out] | None:
        """The oldest request of `priority` of the first owner in line that has one (None: no owner has); that
        owner goes to the back of the line if it has more, and the others keep their places."""
        for owner in self.owners:
            waiting = self.requests[owner].get(priority)
            if waiting:
                break
        else:
            return None
        request = waiting.popleft()
        self._served = owner
        if not waiting:
            del self.requests[owner][priority]
        self.owners.remove(owner)
        if self.requests[owner]:
            self.owners.append(owner)
        else:
            del self.requests[owner]
        return request

    def drain(self) -> list[_Request[In, Out]]:
        left = [r for by_priority in self.requests.values() for waiting in by_priority.values() for r in waiting]
        self.owners.clear()
        self.requests.clear()
        return left


class DynamicBatcher(Generic[In, Out]):
    """run(items) -> outputs in the same order, on this batcher's own thread; on_batch(priority, size, seconds)
    is told about every batch (for metrics)."""

    def __init__(self, name: str, run: Callable[[list[In]], Sequence[Out]], policy: BatchPolicy,
                 on_batch: Callable[[int, int, float], None] | None = None, threads: int = 1) -> None:
        """`threads`: batches run at once, each on its own thread (more than one only for a remote model,
        whose server merges them; a local model runs one batch at a time)."""
        if policy.max_batch < 1 or threads < 1:
            raise ValueError("max_batch and threads must be at least 1")
        self.name, self._run, self.policy, self._on_batch = name, run, policy, on_batch
        self._queue: _FairQueue[In, Out] = _FairQueue()
        self._waiting = 0
        self._cond = threading.Condition()
        self._closed = False
        self._threads = [threading.Thread(target=self._loop, name=f"batcher-{name}-{i}", daemon=True)
                         for i in range(threads)]
        for thread in self._threads:
            thread.start()

    @property
    def waiting(self) -> int:
        """Requests queued, not yet taken by the worker."""
        return self._waiting

    def submit(self, item: In, priority: int = 0, owner: Hashable = None) -> Future[Out]:
        """Queue one request; raises Overloaded when max_queue requests already wait. A request whose future is
        cancelled before its batch starts is skipped (its client went away)."""
        future: Future[Out] = Future()
        with self._cond:
            if self._closed:
                raise RuntimeError(f"the {self.name} batcher is closed")
            if self._waiting >= self.policy.max_queue:
                raise Overloaded(f"the {self.name} queue is full ({self.policy.max_queue} waiting)")
            self._queue.push(owner, _Request(priority, item, future))
            self._waiting += 1
            self._cond.notify()
        return future

    async def __call__(self, item: In, priority: int = 0, owner: Hashable = None) -> Out:
        """Cancelling the awaiting task cancels the request too, if its batch has not started."""
        return await asyncio.wrap_future(self.submit(item, priority, owner))

    def _take(self) -> list[_Request[In, Out]] | None:
        with self._cond:
            while True:
                while not self._waiting and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return None
                deadline = time.monotonic() + self.policy.max_delay_us / 1e6
                while self._waiting < self.policy.max_batch and not self._closed:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                if self._closed:
                    return None
                if self._waiting:  # another thread of this batcher may have taken them while this one waited
                    break
            priority = self._queue.next_priority()  # the next owner's most urgent kind
            batch: list[_Request[In, Out]] = []
            while len(batch) < self.policy.max_batch:
                request = self._queue.pop(priority)
                if request is None:
                    break
                batch.append(request)
            self._waiting -= len(batch)
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
            left = self._queue.drain()
            self._waiting = 0
            self._cond.notify_all()
        for request in left:
            if request.future.set_running_or_notify_cancel():
                request.future.set_exception(RuntimeError(f"the {self.name} batcher closed"))
        for thread in self._threads:
            thread.join(timeout=30)
