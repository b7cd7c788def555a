"""Several model servers behind one gateway: `--models triton://A:8001,triton://B:8011`.

One model server runs per GPU (`assistant model-server --servers N`, docs/scaling.md says why), and every
gateway calls all of them. Both models are stateless, so any call can go to any server: each goes to the one
with the fewest of this gateway's calls in flight (ties: in turn, for each model), which
keeps every GPU's queue about equally long, for each model, without asking the servers anything. A server that
fails a call as unavailable (down, restarting, still loading) is left out for `rest_s` and the call goes to the
next one at once; one whose queue is full is passed over for that call. Only when every server has failed the
call does the caller see ModelServerUnavailable (the gateway retries finals) or Overloaded (it sheds).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from numpy.typing import NDArray

from assistant.errors import ModelServerUnavailable, Overloaded

__all__ = ["ModelServer", "ModelServerPool"]


class ModelServer(Protocol):
    """What the pool needs of one server (engines.triton_client.TritonModels)."""

    address: str

    def shape(self, model: str) -> Any: ...

    def ready(self, model: str) -> bool: ...

    def infer(self, model: str, inputs: dict[str, NDArray[Any]], outputs: Sequence[str],
              priority: int = 0) -> dict[str, NDArray[Any]]: ...


class ModelServerPool:
    """The TritonModels interface over several servers. Thread-safe: every batcher thread calls it."""

    def __init__(self, servers: Sequence[ModelServer], rest_s: float = 2.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not servers:
            raise ValueError("a pool needs at least one model server")
        self.servers = list(servers)
        self.address = ",".join(s.address for s in self.servers)
        self.rest_s = rest_s
        self._clock = clock
        self._lock = threading.Lock()
        self._in_flight = [0] * len(self.servers)
        self._resting_until = [0.0] * len(self.servers)
        self._turns: dict[str | None, itertools.count[int]] = {}  # per model: ties go round in turn
        self.calls = [0] * len(self.servers)  # answered calls per server, for the log and tests

    def shape(self, model: str) -> Any:
        """The smallest batch limit among the servers that answer: a request sized for it fits any of them."""
        shapes, unavailable = [], None
        for i in self._order(None):
            try:
                shapes.append(self.servers[i].shape(model))
            except ModelServerUnavailable as exc:
                self._rest(i)
                unavailable = exc
        if not shapes:
            assert unavailable is not None
            raise unavailable
        return min(shapes, key=lambda s: s.max_batch)

    def ready(self, model: str) -> bool:
        return any(server.ready(model) for server in self.servers)

    def infer(self, model: str, inputs: dict[str, NDArray[Any]], outputs: Sequence[str],
              priority: int = 0) -> dict[str, NDArray[Any]]:
        unavailable: ModelServerUnavailable | None = None
        overloaded: Overloaded | None = None
        for i in self._order(model):
            with self._lock:
                self._in_flight[i] += 1
            try:
                out = self.servers[i].infer(model, inputs, outputs, priority=priority)
            except ModelServerUnavailable as exc:
                self._rest(i)
                unavailable = exc
                continue
            except Overloaded as exc:
                overloaded = exc
                continue
            finally:
                with self._lock:
                    self._in_flight[i] -= 1
            with self._lock:
                self.calls[i] += 1
            return out
        if overloaded is not None:  # one was only busy: shedding, not retrying, is right
            raise overloaded
        assert unavailable is not None
        raise unavailable

    def _order(self, model: str | None) -> list[int]:
        """Servers to try for one call of `model`: those not resting, fewest calls in flight first (ties in turn,
        each model its own turns: a recognizer's shape() and alternating models must not skew one), then the
        resting ones, soonest back first (when all are resting, trying is better than failing unasked)."""
        now, n = self._clock(), len(self.servers)
        with self._lock:
            turn = next(self._turns.setdefault(model, itertools.count()))
            awake = sorted((i for i in range(n) if self._resting_until[i] <= now),
                           key=lambda i: (self._in_flight[i], (i - turn) % n))
            resting = sorted((i for i in range(n) if self._resting_until[i] > now),
                             key=lambda i: self._resting_until[i])
        return awake + resting

    def _rest(self, index: int) -> None:
        with self._lock:
            self._resting_until[index] = self._clock() + self.rest_s
