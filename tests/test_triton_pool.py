"""The gateway's pool of model servers (engines/triton_pool.py): each call to the server with the fewest calls
in flight, failing over when one is unavailable or full. The servers here are fakes (the pool's collaborators);
tests/test_scale_out.py runs two real model servers."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from assistant.errors import ConfigError, ModelServerUnavailable, Overloaded
from engines.triton_client import parse_models_urls
from engines.triton_pool import ModelServerPool


@dataclass(frozen=True)
class _Shape:
    max_batch: int


class FakeServer:
    """Answers with its own name; can be down, full, or held mid-call."""

    def __init__(self, name: str, max_batch: int = 8) -> None:
        self.address = name
        self.max_batch = max_batch
        self.down = False
        self.full = False
        self.asked = 0
        self.hold: threading.Event | None = None  # set: a call waits for it
        self.inside = threading.Event()

    def _check(self) -> None:
        if self.down:
            raise ModelServerUnavailable(f"{self.address} is down")
        if self.full:
            raise Overloaded(f"{self.address} is full")

    def shape(self, model: str) -> _Shape:
        self._check()
        return _Shape(self.max_batch)

    def ready(self, model: str) -> bool:
        return not self.down

    def infer(self, model: str, inputs: dict[str, NDArray[Any]], outputs: Sequence[str],
              priority: int = 0) -> dict[str, NDArray[Any]]:
        self.asked += 1
        self._check()
        if self.hold is not None:
            self.inside.set()
            self.hold.wait(10)
        return {"who": np.array([self.address])}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _who(pool: ModelServerPool) -> str:
    return str(pool.infer("asr", {"pcm": np.zeros(1)}, ["who"])["who"][0])


def test_calls_take_turns_when_none_is_busy() -> None:
    pool = ModelServerPool([FakeServer("a"), FakeServer("b"), FakeServer("c")])
    assert sorted(_who(pool) for _ in range(6)) == ["a", "a", "b", "b", "c", "c"]
    assert pool.calls == [2, 2, 2]
    assert pool.address == "a,b,c"


def test_each_model_is_spread_however_calls_of_models_and_shapes_interleave() -> None:
    # a recognizer asks the shape before each call, and recognition and understanding alternate: neither may
    # leave one model's calls all on one server
    pool = ModelServerPool([FakeServer("a"), FakeServer("b")])
    asr, nlu = [], []
    for _ in range(4):
        pool.shape("asr")
        asr.append(_who(pool))
        nlu.append(str(pool.infer("nlu", {"ids": np.zeros(1)}, ["who"])["who"][0]))
    assert sorted(asr) == ["a", "a", "b", "b"] and sorted(nlu) == ["a", "a", "b", "b"]


def test_a_call_goes_to_the_server_with_fewest_calls_in_flight() -> None:
    a, b = FakeServer("a"), FakeServer("b")
    pool = ModelServerPool([a, b])
    a.hold = threading.Event()
    slow = threading.Thread(target=_who, args=(pool,))
    slow.start()  # the first call goes to a (none sent yet: the first server) and stays there
    assert a.inside.wait(10)
    assert [_who(pool) for _ in range(3)] == ["b", "b", "b"]  # a still has one in flight
    a.hold.set()
    slow.join(10)
    assert pool.calls == [1, 3]


def test_an_unavailable_server_is_passed_over_then_tried_again_after_its_rest() -> None:
    a, b = FakeServer("a"), FakeServer("b")
    clock = Clock()
    pool = ModelServerPool([a, b], rest_s=2.0, clock=clock)
    a.down = True
    assert {_who(pool) for _ in range(4)} == {"b"}  # every call answered, none lost to the dead server
    assert a.asked == 1  # asked once, then left to rest
    a.down = False
    clock.now += 2.5
    assert sorted(_who(pool) for _ in range(4)) == ["a", "a", "b", "b"]


def test_when_every_server_is_down_the_caller_is_told_to_retry() -> None:
    a, b = FakeServer("a"), FakeServer("b")
    a.down = b.down = True
    pool = ModelServerPool([a, b])
    with pytest.raises(ModelServerUnavailable):
        _who(pool)
    assert (a.asked, b.asked) == (1, 1)
    with pytest.raises(ModelServerUnavailable):  # all resting: still asked rather than failed unasked
        _who(pool)
    assert (a.asked, b.asked) == (2, 2)


def test_a_full_queue_sends_the_call_elsewhere_and_all_full_is_overloaded() -> None:
    a, b = FakeServer("a"), FakeServer("b")
    pool = ModelServerPool([a, b])
    a.full = True
    assert {_who(pool) for _ in range(3)} == {"b"}
    b.full = True
    with pytest.raises(Overloaded):
        _who(pool)
    b.full, b.down = False, True  # one full, one down: the call is shed, not retried for a minute
    with pytest.raises(Overloaded):
        _who(pool)


def test_requests_are_sized_for_the_smallest_batch_limit_among_servers_that_answer() -> None:
    a, b, c = FakeServer("a", 16), FakeServer("b", 4), FakeServer("c", 2)
    c.down = True
    assert ModelServerPool([a, b, c]).shape("nlu").max_batch == 4
    c.down = a.down = b.down = True
    with pytest.raises(ModelServerUnavailable):
        ModelServerPool([a, b, c]).shape("nlu")


def test_models_urls_name_one_or_several_servers() -> None:
    assert parse_models_urls("triton://127.0.0.1:8001") == ["127.0.0.1:8001"]
    assert parse_models_urls("triton://a:8001, triton://b:8011,") == ["a:8001", "b:8011"]
    with pytest.raises(ConfigError, match="more than once"):
        parse_models_urls("triton://a:8001,triton://a")
    with pytest.raises(ConfigError, match="at least one"):
        parse_models_urls(" , ")
    with pytest.raises(ConfigError, match="triton://HOST:PORT"):
        parse_models_urls("triton://a:8001,http://b:8011")
