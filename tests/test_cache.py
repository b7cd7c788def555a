import os
import threading
from pathlib import Path

import pytest

from assistant.cache import build_folder, locked


def _write_marker(text: str):
    def build(staging: Path) -> None:
        (staging / "marker.txt").write_text(text)
    return build


def test_folder_appears_only_when_the_build_finishes(tmp_path: Path) -> None:
    folder = tmp_path / "thing-abc"

    def failing(staging: Path) -> None:
        (staging / "half.txt").write_text("half")
        raise RuntimeError("build broke")

    with pytest.raises(RuntimeError, match="build broke"):
        build_folder(folder, failing)
    assert not folder.exists()
    assert not list(tmp_path.glob(".thing-abc-*"))
    build_folder(folder, _write_marker("done"))
    assert (folder / "marker.txt").read_text() == "done"


def test_a_killed_builds_staging_folder_is_cleared_by_the_next_build(tmp_path: Path) -> None:
    folder = tmp_path / "thing-abc"
    abandoned = tmp_path / ".thing-abc-k1ll3d"  # what mkdtemp left when a build was killed with SIGKILL
    abandoned.mkdir()
    (abandoned / "weights.bin").write_bytes(os.urandom(64))
    other_key = tmp_path / ".thing-xyz-busy"  # another key's build, perhaps running now under its own lock
    other_key.mkdir()
    build_folder(folder, _write_marker("done"))
    assert (folder / "marker.txt").read_text() == "done"
    assert not abandoned.exists()
    assert other_key.exists()


def test_lock_lets_one_builder_in_at_a_time(tmp_path: Path) -> None:
    lock = tmp_path / "thing.lock"
    inside: list[int] = []
    overlap: list[bool] = []
    gate = threading.Barrier(2)

    def builder(n: int) -> None:
        gate.wait()
        with locked(lock):
            overlap.append(bool(inside))
            inside.append(n)
            threading.Event().wait(0.05)
            inside.remove(n)

    threads = [threading.Thread(target=builder, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlap == [False, False]


def test_a_process_that_must_wait_for_a_lock_says_so_first(tmp_path: Path) -> None:
    lock = tmp_path / "thing.lock"
    told: list[Path] = []
    holder_in, release = threading.Event(), threading.Event()

    def holder() -> None:
        with locked(lock, told.append):
            holder_in.set()
            release.wait(5)

    thread = threading.Thread(target=holder)
    thread.start()
    holder_in.wait(5)
    got_in: list[bool] = []

    def waiter_body() -> None:
        with locked(lock, told.append):
            got_in.append(True)

    waiter = threading.Thread(target=waiter_body)
    waiter.start()
    while not told:  # told before it waits, while the lock is still held
        threading.Event().wait(0.01)
    assert told == [lock] and not got_in
    release.set()
    thread.join()
    waiter.join(5)
    assert got_in == [True]
