"""Build-once folders in the cache: a file lock so concurrent processes build a thing once, and a staging
folder renamed into place so a crash never leaves a half-built folder that looks finished."""

from __future__ import annotations

import fcntl
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["locked", "build_folder"]


def _say_waiting(path: Path) -> None:
    print(f"[cache] waiting for another process that holds {path} (it is building what this one needs; its own "
          "log shows how far along it is)", file=sys.stderr, flush=True)


@contextmanager
def locked(path: Path, waiting: Callable[[Path], None] = _say_waiting) -> Iterator[None]:
    """Holds `path`'s lock. When another process holds it (a build of the same thing), `waiting(path)` is told
    before this one waits: a wait of minutes never looks like a hang."""
    with path.open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waiting(path)
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_folder(folder: Path, build: Callable[[Path], None]) -> None:
    """Run `build(staging)` in a fresh folder next to `folder`, then rename it to `folder` (replacing an old one).
    The caller holds the lock and has checked that `folder` needs building."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned_staging(folder)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        build(staging)
        staging.chmod(0o755)  # mkdtemp makes it private; the cache is as readable as any other folder
        if folder.exists():
            shutil.rmtree(folder)
        staging.rename(folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _remove_abandoned_staging(folder: Path) -> None:
    """A build killed outright (SIGKILL, power loss) leaves its staging folder behind, often hundreds of MB.
    Only a build of `folder` makes `.{name}-*` folders and the caller holds that build's lock, so any found now
    belongs to a build that is gone."""
    for leftover in folder.parent.glob(f".{folder.name}-*"):
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
