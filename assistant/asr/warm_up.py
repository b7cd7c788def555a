"""A recognizer's first decode, paid at start and timed (not by someone's first command)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

__all__ = ["timed_warm_up"]


def timed_warm_up(decode: Callable[[], object]) -> float:
    """Runs `decode` once; says and returns how many seconds it took."""
    started = time.perf_counter()
    decode()
    took = time.perf_counter() - started
    print(f"[asr] warm-up decode took {took:.2f} s", file=sys.stderr, flush=True)
    return took
