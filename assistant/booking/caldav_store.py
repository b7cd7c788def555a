"""CalDAV booking store (RFC 4791): bookings live in each room's calendar, beside what people book in their
calendar apps. Laid out as Radicale lays out its storage, in parts:

- caldav_http.py: the requests, the breaker (a server that timed out is not asked again for a while) and the
  health probe;
- caldav_claim.py: claiming time without transactions (check, write, check again, take back);
- here, the store's face: the commands, the read cache and the idempotency memory.

A booking is one event (calendar_events.py) at `{room calendar}/{booking id}.ics`. The booking id is derived from
the idempotency key, and the event is created with `If-None-Match: *`: a retried command finds its own event (the
server refuses a second one) and answers with it, replayed. A move rewrites the event with `If-Match` on the ETag
read: a change someone made meanwhile makes the server refuse, the event is read again and the move applied to
what is there now (their change kept). Only the assistant's own events (marked with X-VOICE-ASSISTANT-ROOM) are
cancelled or moved; other apps' events block time and are never changed. Reads (`bookings`: the day view, "what's
on", conflict offers) are cached for `cache_s` per room and range; every write of this process drops its room's
entries, and other gateways' writes show within `cache_s`. The store's lock is let go while a writer that stepped
back waits: no sleep under a lock.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from assistant.booking.caldav_claim import TakeBacks, claim
from assistant.booking.caldav_http import CalDavHttp, FoundEvent
from assistant.booking.calendar_events import changed_event, event_text, read_event
from assistant.booking.store import (
    Booked,
    Booking,
    Conflict,
    NotFound,
    Outcome,
    StoreUnavailable,
    check_aware,
    once_per_key,
)

__all__ = ["CalDavStore", "booking_id"]

_KEY_NAMESPACE = uuid.UUID("6f1d3c52-7d0e-4c55-9a43-3b1f0e7a2c10")  # booking ids from idempotency keys
_CACHE_ENTRIES = 512
_REMEMBERED_KEYS = 10_000


def booking_id(idempotency_key: str) -> str:
    """The id of the booking a key's command makes: the same key always names the same event."""
    return uuid.uuid5(_KEY_NAMESPACE, idempotency_key).hex


class CalDavStore:
    def __init__(self, calendars: Mapping[str, str], username: str | None = None, password: str | None = None, *,
                 timeout_s: float = 5.0, cache_s: float = 2.0, attempts: int = 6) -> None:
        """`calendars`: room key -> the URL of that room's calendar collection."""
        self.http = CalDavHttp(calendars, username, password, timeout_s)
        self._lock = threading.Lock()  # one command at a time in this process (not held while stepping back)
        self.cache_s = cache_s
        self.attempts = attempts
        self._cache: OrderedDict[tuple[str, datetime, datetime], tuple[float, list[FoundEvent]]] = OrderedDict()
        self._done: OrderedDict[str, Booked] = OrderedDict()  # idempotency key -> outcome (cancels: only here)
        self._take_backs = TakeBacks()

    # ---- the read cache and the idempotency memory -------------------------------------------------------------
    def _forget(self, room: str) -> None:
        for key in [k for k in self._cache if k[0] == room]:
            del self._cache[key]

    def _cached(self, room: str, start: datetime, end: datetime) -> list[FoundEvent]:
        key = (room, start, end)
        hit = self._cache.get(key)
        now = time.monotonic()
        if hit is not None and now - hit[0] < self.cache_s:
            return hit[1]
        found = self.http.query(room, start, end)
        self._cache[key] = (now, found)
        self._cache.move_to_end(key)
        while len(self._cache) > _CACHE_ENTRIES:
            self._cache.popitem(last=False)
        return found

    def _remember(self, key: str, outcome: Booked) -> Booked:
        self._done[key] = outcome
        while len(self._done) > _REMEMBERED_KEYS:
            self._done.popitem(last=False)
        self._forget(outcome.booking.room)
        return outcome

    def _replayed(self, key: str) -> Booked | None:
        """A write's first step (under the lock): take back what a failed command left, then the outcome this key
        already had here, if any."""
        self._take_backs.settle()
        done = self._done.get(key)
        return None if done is None else Booked(done.booking, replayed=True)

    def _sleep_unlocked(self, seconds: float) -> None:
        """A writer that stepped back waits without the lock: others' commands and reads go on meanwhile."""
        self._lock.release()
        try:
            time.sleep(seconds)
        finally:
            self._lock.acquire()

    # ---- reads -------------------------------------------------------------------------------------------------
    def bookings(self, start: datetime, end: datetime, room: str | None = None) -> Sequence[Booking]:
        check_aware(start, end)
        rooms = [room] if room is not None else list(self.http.calendars)
        with self._lock:
            found = [f.event.booking for r in rooms if r in self.http.calendars for f in self._cached(r, start, end)]
        return sorted(found, key=lambda b: (b.start, b.room))

    def get(self, booking_id: str) -> Booking | None:
        with self._lock:
            fetched = self.http.fetch(booking_id)
        return None if fetched is None else fetched[0].event.booking

    # ---- writes ------------------------------------------------------------------------------------------------
    def _claim(self, room: str, start: datetime, end: datetime, own: str, key: str,
               write: Callable[[], str | None], undo: Callable[[str], None], ignore: str = "") -> str | Outcome:
        return claim(self.http, self._take_backs, self.attempts, self._sleep_unlocked, room=room, start=start,
                     end=end, own=own, key=key, write=write, undo=undo, ignore=ignore)

    def _create(self, booking: Booking, key: str, ignore: str = "") -> tuple[Outcome, str]:
        """Book a new event under the key's id: the outcome and the event's URL."""
        own = booking.id or booking_id(key)
        made = replace(booking, id=own)
        href = self.http.calendar(booking.room) + f"{own}.ics"
        text = event_text(made, key)

        def undo(etag: str) -> None:
            self.http.delete(href, etag or None)
            self._forget(booking.room)

        claimed = self._claim(booking.room, booking.start, booking.end, own, key,
                              lambda: self.http.put(href, text, {"If-None-Match": "*"}), undo, ignore)
        if isinstance(claimed, NotFound):  # the key's event exists outside the range checked: a replay
            fetched = self.http.fetch(own)
            if fetched is None or key not in fetched[0].event.keys:
                raise StoreUnavailable(f"the calendar server refused to create {href} and has no such event")
            return Booked(fetched[0].event.booking, replayed=True), href
        if not isinstance(claimed, str):
            return claimed, href
        self.http.seen_at(own, href)
        return Booked(made), href

    def book(self, booking: Booking, idempotency_key: str) -> Booked | Conflict:
        def book() -> Booked | Conflict:
            outcome, _ = self._create(booking, idempotency_key)
            assert not isinstance(outcome, NotFound)
            return self._remember(idempotency_key, outcome) if isinstance(outcome, Booked) else outcome

        check_aware(booking.start, booking.end)
        with self._lock:
            return once_per_key(lambda: self._replayed(idempotency_key), book)

    def _ours(self, booking_id: str) -> tuple[FoundEvent, str] | None:
        """The assistant's own event with this id; another app's event is never changed (it reads as missing)."""
        fetched = self.http.fetch(booking_id)
        return fetched if fetched is not None and fetched[0].event.ours else None

    def _on_own_event(self, booking_id: str, act: Callable[[FoundEvent, str], Outcome | None]) -> Outcome:
        """`act` on the assistant's own event as just read; again when it changed meanwhile (`act` gives None)."""
        for _ in range(self.attempts):
            fetched = self._ours(booking_id)
            if fetched is None:
                return NotFound(booking_id)
            outcome = act(*fetched)
            if outcome is not None:
                return outcome
        raise StoreUnavailable(f"the event of booking {booking_id} keeps changing; try again")

    def cancel(self, booking_id: str, idempotency_key: str) -> Booked | NotFound:
        def delete(found: FoundEvent, _: str) -> Outcome | None:
            if not self.http.delete(found.href, found.etag):
                return None
            self.http.seen_at(booking_id, None)
            return self._remember(idempotency_key, Booked(found.event.booking))

        def cancel() -> Booked | NotFound:
            outcome = self._on_own_event(booking_id, delete)
            assert not isinstance(outcome, Conflict)
            return outcome

        with self._lock:
            return once_per_key(lambda: self._replayed(idempotency_key), cancel)

    def reschedule(self, booking_id: str, start: datetime, end: datetime, idempotency_key: str, *,
                   title: str | None = None, attendees: Sequence[str] | None = None) -> Outcome:
        def move(found: FoundEvent, text: str) -> Outcome | None:
            if idempotency_key in found.event.keys:  # this move went through before its reply was lost
                return Booked(found.event.booking, replayed=True)
            moved = changed_event(text, idempotency_key, start, end, title, attendees)
            outcome = self._move(found, text, moved, idempotency_key, start, end)
            return None if isinstance(outcome, NotFound) else outcome  # NotFound: changed since it was read

        check_aware(start, end)
        with self._lock:
            return once_per_key(lambda: self._replayed(idempotency_key),
                                lambda: self._on_own_event(booking_id, move))

    def _move(self, found: FoundEvent, old: str, moved: str, key: str, start: datetime, end: datetime) -> Outcome:
        room = found.event.booking.room

        def undo(etag: str) -> None:  # put the old times back, unless someone changed it since
            if not etag:  # the write's reply was lost: only a move that went through is taken back
                now = self.http.fetch(found.id)
                if now is None or key not in now[0].event.keys:
                    return
                etag = now[0].etag or ""
            self.http.put(found.href, old, {"If-Match": etag} if etag else {})
            self._forget(room)

        claimed = self._claim(room, start, end, found.id, key,
                              lambda: self.http.put(found.href, moved, {"If-Match": found.etag} if found.etag
                                                    else {}), undo)
        if not isinstance(claimed, str):
            return claimed
        return self._remember(key, Booked(read_event(moved, room).booking))

    def replace(self, booking_id: str, booking: Booking, idempotency_key: str) -> Outcome:
        def replace_it() -> Outcome:
            fetched = self._ours(booking_id)
            if fetched is None:
                return NotFound(booking_id)
            old = fetched[0]
            outcome, href = self._create(booking, idempotency_key, ignore=booking_id)
            if not isinstance(outcome, Booked):
                return outcome
            # The new one stands (made now, or by this key before a restart): now the old goes (both or neither).
            # It is the assistant's own first guess of seconds ago, withdrawn: it goes even if touched meanwhile.
            def withdraw_new() -> None:
                self.http.delete(href, None)

            try:
                self.http.delete(old.href, old.etag) or self.http.delete(old.href, None)
            except StoreUnavailable:
                self._take_backs.now_or_later(withdraw_new)
                raise
            self.http.seen_at(booking_id, None)
            self._forget(old.event.booking.room)
            return self._remember(idempotency_key, outcome)

        check_aware(booking.start, booking.end)
        with self._lock:
            return once_per_key(lambda: self._replayed(idempotency_key), replace_it)

    # ---- health and administration ------------------------------------------------------------------------------
    def problem(self) -> str | None:
        return self.http.problem()

    def missing_calendars(self) -> list[str]:
        """Rooms whose calendar the server does not have (an unreachable server raises StoreUnavailable)."""
        with self._lock:
            return self.http.missing_calendars()

    def create_calendars(self, rooms: Sequence[str]) -> None:
        """MKCALENDAR for these rooms (a demo server; organizations make room calendars themselves)."""
        with self._lock:
            self.http.create_calendars(rooms)

    def close(self) -> None:
        with self._lock:
            self.http.close()
