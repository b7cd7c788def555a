"""Claiming a room's time in CalDAV, which has no transactions: check, write, check again, take back.

- Conflicts are checked against everything in the room's calendar, other apps' events included, with a time-range
  query made fresh, never from the read cache, before every write.
- Races (two gateways may pass the check at once): each writer writes, then queries the range again. Seeing anyone
  else there, it takes its own write back (If-Match on the ETag it got) and tries again after a pause, at most
  `attempts` times; a writer that sees only itself has won. Two writers can never both win: the later of the two
  re-checks comes after both writes, so it sees the other's event. Both may step back in one attempt; their pauses
  part them (the smaller event id goes first, random pauses that double with each attempt part any others), and
  the next check finds the winner's event (a conflict). docs/booking.md#races walks through it.
- Nothing stays half done: a write whose reply was lost, or whose re-check failed, is taken back then or, when
  the server is away, before the next command (`TakeBacks`).
"""

from __future__ import annotations

import functools
import logging
import random
from collections.abc import Callable
from datetime import datetime

from assistant.booking.caldav_http import CalDavHttp
from assistant.booking.store import Booked, Conflict, NotFound, Outcome, StoreUnavailable

__all__ = ["TakeBacks", "claim", "step_back_pause"]

log = logging.getLogger(__name__)

_YIELD_S = 0.1  # longer than a write and its check take on a loaded server: the first in line is done by then


class TakeBacks:
    """Writes to take back once the server answers again."""

    def __init__(self) -> None:
        self._pending: list[Callable[[], None]] = []

    def later(self, undo: Callable[[], None]) -> None:
        self._pending.append(undo)

    def now_or_later(self, undo: Callable[[], None]) -> None:
        try:
            undo()
        except StoreUnavailable:
            log.warning("the calendar server went away mid-command; its write is taken back when it answers again")
            self._pending.append(undo)

    def settle(self) -> None:
        """Take back what a failed command had written, before anything new is done (raises while the server is
        still away)."""
        while self._pending:
            self._pending[0]()
            self._pending.pop(0)


def step_back_pause(attempt: int, yields: bool) -> float:
    """How long a writer that stepped back waits before it checks again. Writers that stepped back together are
    parted: the one with the smaller event id goes first (the other waits a write's time longer, then finds it),
    and random pauses that double with each attempt part any that still meet."""
    return random.uniform(0.0, 0.05 * 2**attempt) + (_YIELD_S if yields else 0.0)


def claim(http: CalDavHttp, take_backs: TakeBacks, attempts: int, sleep: Callable[[float], None], *,
          room: str, start: datetime, end: datetime, own: str, key: str, write: Callable[[], str | None],
          undo: Callable[[str], None], ignore: str = "") -> str | Outcome:
    """Check, write, check again: the ETag written when the slot is ours; a Conflict; a Booked replay when the
    key's event is already there; NotFound when the write's condition failed. `undo(etag)` takes the write back
    ("": its reply was lost). `sleep` waits between attempts (the caller's lock let go meanwhile)."""
    others = []
    for attempt in range(attempts):
        found = [f for f in http.query(room, start, end) if f.id != ignore]
        replayed = [f for f in found if f.id == own and key in f.event.keys]
        if replayed:
            return Booked(replayed[0].event.booking, replayed=True)
        others = [f for f in found if f.id != own]
        if others:
            return Conflict(room, start, end, tuple(f.event.booking for f in others))
        try:
            etag = write()
        except StoreUnavailable:  # it may have been written before the reply was lost
            take_backs.later(functools.partial(undo, ""))
            raise
        if etag is None:
            return NotFound(own)
        try:
            others = [f for f in http.query(room, start, end) if f.id not in (own, ignore)]
        except StoreUnavailable:
            take_backs.later(functools.partial(undo, etag))
            raise
        if not others:
            return etag
        log.info("%s: someone else wrote %s-%s at the same time; stepping back (attempt %d)", room,
                 start.isoformat(), end.isoformat(), attempt + 1)
        take_backs.now_or_later(functools.partial(undo, etag))
        sleep(step_back_pause(attempt, yields=any(f.id < own for f in others)))
    return Conflict(room, start, end, tuple(f.event.booking for f in others))
