"""A session's tasks: every one is cancelled with the session, and every end is looked at (a failure is logged
with its traceback; a client that vanished mid-reply is no error worth one)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from websockets.exceptions import ConnectionClosed

__all__ = ["SessionTasks"]

log = logging.getLogger(__name__)


class SessionTasks:
    def __init__(self, session: str) -> None:
        self.session = session
        self.running: set[asyncio.Task[None]] = set()

    def spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(coro)
        self.running.add(task)
        task.add_done_callback(self._finished)
        return task

    async def wait(self) -> None:
        """Until every task has ended, those the running ones spawn on their way too (a result's spoken reply)."""
        while self.running:
            await asyncio.gather(*self.running)

    def cancel(self) -> None:
        for task in list(self.running):
            task.cancel()

    def _finished(self, task: asyncio.Task[None]) -> None:
        self.running.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if isinstance(exc, ConnectionClosed):
            log.debug("session %s: the client left before its reply", self.session)
        elif exc is not None:
            log.error("session %s: a task failed", self.session, exc_info=exc)
