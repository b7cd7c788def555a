"""The asyncio event loop the server and the load benchmark run on: uvloop where it is installed.

Every audio frame of every connection passes through one event loop (websocket decoding, VAD, endpointing), so
at a few hundred real-time connections the loop itself is the limit; uvloop (libuv) runs the same asyncio code
with a cheaper loop. It is optional: without it, or with `kind="asyncio"`, the standard loop runs.
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["EVENT_LOOPS", "loop_factory", "run"]

T = TypeVar("T")
EVENT_LOOPS = ("auto", "uvloop", "asyncio")


def loop_factory(kind: str = "auto") -> tuple[str, Callable[[], asyncio.AbstractEventLoop] | None]:
    """(the loop's name, a factory for asyncio.Runner; None for the standard loop)."""
    if kind not in EVENT_LOOPS:
        raise ValueError(f"event loop must be one of {', '.join(EVENT_LOOPS)}, not {kind!r}")
    if kind == "asyncio" or (kind == "auto" and importlib.util.find_spec("uvloop") is None):
        return "asyncio", None
    import uvloop  # kind "uvloop" without it installed raises ImportError: asked for by name, say so

    return "uvloop", uvloop.new_event_loop


def run(main: Coroutine[Any, Any, T], kind: str = "auto") -> T:
    _, factory = loop_factory(kind)
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
