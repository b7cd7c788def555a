"""The dynamic batcher: requests that wait together run together, priorities never mix, failures stay with
their request, and closing fails what is left with a clear error. The model call is a recording stand-in."""

from __future__ import annotations

import threading
import time

import pytest

from assistant.batching import BatchPolicy
from assistant.server.batcher import DynamicBatcher, ItemFailed, Overloaded


class Recorder:
    """Stands in for a model call: records each batch; the first call can be held until released."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.hold = threading.Event()
        self.entered = threading.Event()

    def __call__(self, items: list[str]) -> list[str]:
        self.entered.set()
        self.hold.wait(5)
        self.batches.append(list(items))
        return [item.upper() for item in items]


def _queued_behind_a_busy_worker(max_batch: int, queued: list[tuple[str, int]]) -> tuple[list[str], Recorder]:
    """"first" occupies the worker; `queued` (item, priority) arrive meanwhile; then the worker is released.
    Returns every result in submission order and the recorder of batches."""
    model = Recorder()
    batcher = DynamicBatcher("t", model, BatchPolicy(max_batch=max_batch))
    futures = [batcher.submit("first")]
    assert model.entered.wait(5)  # the worker is busy with "first" alone
    futures += [batcher.submit(item, priority) for item, priority in queued]
    model.hold.set()
    results = [f.result(timeout=5) for f in futures]
    batcher.close()
    return results, model


def test_requests_that_queue_while_the_worker_is_busy_run_as_one_batch() -> None:
    results, model = _queued_behind_a_busy_worker(8, [(x, 0) for x in "bcde"])
    assert results == ["FIRST", "B", "C", "D", "E"]
    assert model.batches == [["first"], ["b", "c", "d", "e"]]


def test_a_batch_never_exceeds_max_batch() -> None:
    _, model = _queued_behind_a_busy_worker(3, [(x, 0) for x in "bcdefg"])
    assert [len(b) for b in model.batches] == [1, 3, 3]


def test_higher_priority_runs_first_and_priorities_never_share_a_batch() -> None:
    _, model = _queued_behind_a_busy_worker(8, [("p1", 1), ("p2", 1), ("f1", 0), ("f2", 0)])
    assert model.batches == [["first"], ["f1", "f2"], ["p1", "p2"]]


def test_an_idle_worker_waits_up_to_the_delay_for_company() -> None:
    model = Recorder()
    model.hold.set()
    batcher = DynamicBatcher("t", model, BatchPolicy(max_batch=4, max_delay_us=300_000))
    a = batcher.submit("a")
    time.sleep(0.05)  # well inside the 300 ms delay: "b" joins "a"
    b = batcher.submit("b")
    assert [a.result(timeout=5), b.result(timeout=5)] == ["A", "B"]
    assert model.batches == [["a", "b"]]
    batcher.close()


def test_a_failed_item_fails_alone_and_a_failed_call_fails_its_whole_batch() -> None:
    def run(items: list[str]) -> list[object]:
        if "boom" in items:
            raise RuntimeError("model fell over")
        return [ItemFailed(ValueError(f"bad {i}")) if i == "bad" else i for i in items]

    batcher: DynamicBatcher[str, object] = DynamicBatcher("t", run, BatchPolicy(max_batch=1))
    assert batcher.submit("ok").result(5) == "ok"
    with pytest.raises(ValueError, match="bad bad"):
        batcher.submit("bad").result(5)
    with pytest.raises(RuntimeError, match="fell over"):
        batcher.submit("boom").result(5)
    assert batcher.submit("still serving").result(5) == "still serving"
    batcher.close()


def test_closing_fails_queued_requests_clearly_and_refuses_new_ones() -> None:
    model = Recorder()
    batcher = DynamicBatcher("t", model, BatchPolicy(max_batch=1))
    running = batcher.submit("a")
    assert model.entered.wait(5)
    queued = batcher.submit("b")
    closer = threading.Thread(target=batcher.close)
    closer.start()
    with pytest.raises(RuntimeError, match="batcher closed"):
        queued.result(5)
    model.hold.set()
    closer.join(5)
    assert running.result(5) == "A"
    with pytest.raises(RuntimeError, match="is closed"):
        batcher.submit("c")


def test_on_batch_reports_priority_size_and_time() -> None:
    seen: list[tuple[int, int, float]] = []
    batcher = DynamicBatcher("t", lambda items: items, BatchPolicy(max_batch=4),
                             lambda priority, size, took: seen.append((priority, size, took)))
    batcher.submit("a", priority=1).result(5)
    batcher.close()
    assert seen and seen[0][:2] == (1, 1) and seen[0][2] >= 0.0


def test_owners_take_turns_so_one_owners_backlog_delays_another_by_one_call() -> None:
    """A flood of one owner's requests queued first; another owner's request runs next, not last (the flood's
    owner was just served), and then the two take turns."""
    model = Recorder()
    batcher = DynamicBatcher("t", model, BatchPolicy(max_batch=1))
    futures = [batcher.submit("first", owner="flood")]
    assert model.entered.wait(5)
    futures += [batcher.submit(f"f{i}", owner="flood") for i in range(5)]
    futures += [batcher.submit("r0", owner="real"), batcher.submit("r1", owner="real")]
    model.hold.set()
    for future in futures:
        future.result(timeout=5)
    batcher.close()
    assert [b[0] for b in model.batches] == ["first", "r0", "f0", "r1", "f1", "f2", "f3", "f4"]


def test_one_owners_urgent_backlog_does_not_starve_another_owners_less_urgent_request() -> None:
    """Owners take turns across priorities: a client's read at a pause (priority 1) runs after one call, however
    many finals (priority 0) another client has queued; within an owner the most urgent goes first."""
    model = Recorder()
    batcher = DynamicBatcher("t", model, BatchPolicy(max_batch=4))
    futures = [batcher.submit("first", owner="flood")]
    assert model.entered.wait(5)
    futures += [batcher.submit(f"f{i}", priority=0, owner="flood") for i in range(6)]
    futures += [batcher.submit("read", priority=1, owner="real"), batcher.submit("final", priority=0, owner="real")]
    model.hold.set()
    for future in futures:
        future.result(timeout=5)
    batcher.close()
    # the real owner's turn comes first (the flood was just served): its final, with the flood's finals beside
    # it in one batch (a batch holds one priority); then its read, alone
    assert model.batches == [["first"], ["final", "f0", "f1", "f2"], ["read"], ["f3", "f4", "f5"]]


def test_a_batch_fills_with_owners_in_turn() -> None:
    _, model = _queued_behind_a_busy_worker(3, [("x1", 0), ("x2", 0)])  # owner None: one owner, in order
    assert model.batches == [["first"], ["x1", "x2"]]
    model = Recorder()
    batcher = DynamicBatcher("t", model, BatchPolicy(max_batch=2))
    first = batcher.submit("first", owner="a")
    assert model.entered.wait(5)
    queued = [batcher.submit(item, owner=owner) for item, owner in [("a1", "a"), ("a2", "a"), ("b1", "b")]]
    model.hold.set()
    for future in [first, *queued]:
        future.result(timeout=5)
    batcher.close()
    assert model.batches == [["first"], ["b1", "a1"], ["a2"]]  # b first: a was just served


def test_a_full_queue_refuses_at_once_and_takes_work_again_once_it_drains() -> None:
    model = Recorder()
    batcher = DynamicBatcher("t", model, BatchPolicy(max_batch=1, max_queue=2))
    running = batcher.submit("running")
    assert model.entered.wait(5)
    queued = [batcher.submit("a"), batcher.submit("b")]
    assert batcher.waiting == 2
    with pytest.raises(Overloaded, match="queue is full"):
        batcher.submit("c")
    model.hold.set()
    assert [f.result(5) for f in [running, *queued]] == ["RUNNING", "A", "B"]
    assert batcher.submit("d").result(5) == "D"
    batcher.close()


def test_a_cancelled_request_is_skipped_by_the_worker() -> None:
    model = Recorder()
    batcher = DynamicBatcher("t", model, BatchPolicy(max_batch=1))
    running = batcher.submit("running")
    assert model.entered.wait(5)
    gone, kept = batcher.submit("gone", owner="left"), batcher.submit("kept", owner="stayed")
    assert gone.cancel()  # its client went away before its turn
    model.hold.set()
    assert [running.result(5), kept.result(5)] == ["RUNNING", "KEPT"]
    batcher.close()
    assert model.batches == [["running"], ["kept"]]


def test_a_batcher_with_two_threads_runs_two_batches_at_once() -> None:
    # A remote model's batcher keeps several calls in flight: both batches meet inside run() at once.
    meeting = threading.Barrier(2, timeout=5)

    def run(items: list[int]) -> list[int]:
        meeting.wait()  # raises BrokenBarrierError if the second batch never starts while the first runs
        return items

    batcher: DynamicBatcher[int, int] = DynamicBatcher("remote", run, BatchPolicy(max_batch=1), threads=2)
    try:
        first, second = batcher.submit(1), batcher.submit(2)
        assert (first.result(10), second.result(10)) == (1, 2)
    finally:
        batcher.close()
