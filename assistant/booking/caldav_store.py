"""CalDAV booking store (RFC 4791): bookings live in each room's calendar, beside what people book in their
calendar apps; python-caldav's client carries the HTTP (auth, sessions), the requests are written here.

- A booking is one event (calendar_events.py) at `{room calendar}/{booking id}.ics`. The booking id is derived
  from the idempotency key, and the event is created with `If-None-Match: *`: a retried command finds its own
  event (the server refuses a second one) and answers with it, replayed.
- Conflicts are checked against everything in the room's calendar, other apps' events included, with a time-range
  query (calendar-query REPORT) made fresh, never from the read cache, before every write.
- Races (CalDAV has no transactions; two gateways may pass the check at once): each writer writes, then queries
  the range again. Seeing anyone else there, it takes its own write back (If-Match on the ETag it got) and tries
  again after a pause, at most `attempts` times; a writer that sees only itself has won. Two writers can
  never both win: the later of the two re-checks comes after both writes, so it sees the other's event. Both may
  step back in one attempt; their pauses part them (the smaller event id goes first, random pauses that double
  with each attempt part any others), and the next check finds the winner's event (a conflict).
  docs/booking.md#races walks through it.
- A move (reschedule) rewrites the event with `If-Match` on the ETag read: a change someone made meanwhile makes the
  server refuse, the event is read again and the move applied to what is there now (their change kept).
- Only the assistant's own events (marked with X-VOICE-ASSISTANT-ROOM) are cancelled or moved; other apps' events
  block time and are never changed.
- The server down, slow (past `timeout_s`) or refusing the credentials raises StoreUnavailable. Anything written
  before the failure is taken back, then or at the next command once the server answers: nothing stays half done.
  After a timeout, requests fail at once for a while (the health probe still asks, and ends that when the server
  answers): a hanging server must not hold the one thread that serves every session's understanding.
- Reads (`bookings`: the day view, "what's on", conflict offers) are cached for `cache_s` per room and range; every
  write of this process drops its room's entries. Other gateways' writes show within `cache_s`.
"""

from __future__ import annotations

import functools
import logging
import random
import threading
import time
import urllib.parse
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import niquests
from caldav.davclient import DAVClient
from caldav.lib import error as dav_error

from assistant.booking.calendar_events import CalendarEvent, changed_event, event_text, read_event, read_events
from assistant.booking.store import Booked, Booking, Conflict, NotFound, Outcome, StoreUnavailable, check_aware
from assistant.errors import ConfigError

__all__ = ["CalDavStore"]

log = logging.getLogger(__name__)

_KEY_NAMESPACE = uuid.UUID("6f1d3c52-7d0e-4c55-9a43-3b1f0e7a2c10")  # booking ids from idempotency keys
_QUERY = """<?xml version="1.0" encoding="utf-8"?>
<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
  <D:prop><D:getetag/><C:calendar-data/></D:prop>
  <C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter name="VEVENT">
    <C:time-range start="{start}" end="{end}"/>
  </C:comp-filter></C:comp-filter></C:filter>
</C:calendar-query>"""
_ICS = {"Content-Type": "text/calendar; charset=utf-8"}
_CACHE_ENTRIES = 512
_REMEMBERED_KEYS = 10_000
_HEALTH_EVERY_S = 5.0
_SILENT_S = 10.0  # after a request timed out, how long requests fail at once rather than wait (the probe still asks)
_YIELD_S = 0.1  # longer than a write and its check take on a loaded server: the first in line is done by then


@dataclass(frozen=True)
class _Found:
    href: str
    etag: str | None
    event: CalendarEvent

    @property
    def id(self) -> str:
        return self.event.booking.id


def _utc(moment: datetime) -> str:
    check_aware(moment)
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def booking_id(idempotency_key: str) -> str:
    """The id of the booking a key's command makes: the same key always names the same event."""
    return uuid.uuid5(_KEY_NAMESPACE, idempotency_key).hex


class CalDavStore:
    def __init__(self, calendars: Mapping[str, str], username: str | None = None, password: str | None = None, *,
                 timeout_s: float = 5.0, cache_s: float = 2.0, attempts: int = 6) -> None:
        """`calendars`: room key -> the URL of that room's calendar collection."""
        if not calendars:
            raise ConfigError("the CalDAV store needs a calendar for at least one room")
        self._calendars = {room: url if url.endswith("/") else url + "/" for room, url in calendars.items()}
        first = next(iter(self._calendars.values()))
        self._server = urllib.parse.urlsplit(first).netloc
        self._client = self._new_client(first, username, password, timeout_s)
        # /healthz asks from the web thread while a write may hold the main client: it has its own, and short waits
        self._probe = self._new_client(first, username, password, min(timeout_s, 2.0))
        self._lock = threading.RLock()
        self._probe_lock = threading.Lock()
        self.cache_s = cache_s
        self.attempts = attempts
        self._cache: OrderedDict[tuple[str, datetime, datetime], tuple[float, list[_Found]]] = OrderedDict()
        self._where: dict[str, str] = {}  # booking id -> its event's URL, as last seen
        self._done: OrderedDict[str, Booked] = OrderedDict()  # idempotency key -> outcome (cancels: only here)
        self._undo: list[Callable[[], None]] = []  # writes to take back once the server answers again
        self._health: tuple[float, str | None] = (-_HEALTH_EVERY_S, None)
        self._silent_until = 0.0  # after a timeout, requests fail at once until then
        self._silence = ""

    @staticmethod
    def _new_client(url: str, username: str | None, password: str | None, timeout_s: float) -> DAVClient:
        return DAVClient(url=url, username=username, password=password, timeout=timeout_s,  # type: ignore[arg-type]
                         enable_rfc6764=False)

    # ---- HTTP ----------------------------------------------------------------------------------------------
    def _call(self, method: str, url: str, body: str = "", headers: Mapping[str, str] | None = None,
              ok: Sequence[int] = (200, 201, 204, 207), client: DAVClient | None = None) -> Any:
        """One request; a status outside `ok` (and 404, 412, which callers read) is the server failing us."""
        probe = client is not None
        if not probe and time.monotonic() < self._silent_until:
            raise StoreUnavailable(self._silence)
        try:
            response = (client or self._client).request(url, method, body, dict(headers or {}))
        except dav_error.AuthorizationError as exc:
            raise StoreUnavailable(f"the calendar server {self._server} refused the credentials") from exc
        except (OSError, dav_error.DAVError, SyntaxError) as exc:  # refused, timed out, TLS, a broken reply (XML)
            reason = type(exc).__name__
            problem = f"the calendar server {self._server} is not answering ({reason})"
            if isinstance(exc, TimeoutError | niquests.exceptions.Timeout):
                # A server that hangs would hold the one thread that serves every session's understanding for
                # timeout_s on every request: for a while, requests fail at once instead (the probe goes on).
                self._silent_until = time.monotonic() + _SILENT_S
                self._silence = f"{problem}; not asked again for {_SILENT_S:.0f} s"
            raise StoreUnavailable(problem) from exc
        if probe:  # the server answers again: nothing waits for the silence to end
            self._silent_until = 0.0
        if response.status not in ok and response.status not in (404, 412):
            raise StoreUnavailable(f"the calendar server {self._server} answered {method} with HTTP "
                                   f"{response.status} {response.reason}".rstrip())
        return response

    def _calendar(self, room: str) -> str:
        try:
            return self._calendars[room]
        except KeyError:
            raise ValueError(f"room {room!r} has no calendar: map it in the room directory (rooms.toml)") from None

    def _room_of(self, href: str) -> str:
        for room, url in self._calendars.items():
            if href.startswith(url):
                return room
        return ""

    def _query(self, room: str, start: datetime, end: datetime) -> list[_Found]:
        """Every event occurrence in the room's calendar overlapping [start, end), fresh from the server."""
        url = self._calendar(room)
        response = self._call("REPORT", url, _QUERY.format(start=_utc(start), end=_utc(end)),
                              {"Depth": "1", "Content-Type": "application/xml; charset=utf-8"})
        if response.status == 404:
            raise StoreUnavailable(f"the calendar of room {room!r} is not there ({url})")
        found = []
        for item in response.parse_calendar_query():
            if not item.calendar_data:
                continue
            href = urllib.parse.urljoin(url, item.href)
            try:
                events = read_events(item.calendar_data, room, start, end)
            except (ValueError, KeyError) as exc:  # another app's event no parser reads (no calendar app shows it)
                log.warning("room %s: skipping an event that cannot be read (%s): %s", room, href, exc)
                continue
            for event in events:
                found.append(_Found(href, item.etag, event))
                self._where[event.booking.id] = href
        if len(self._where) > _REMEMBERED_KEYS * 10:  # a hint only (_fetch looks in every room without it)
            self._where.clear()
        return sorted(found, key=lambda f: f.event.booking.start)

    def _fetch(self, booking_id: str) -> tuple[_Found, str] | None:
        """The booking's event as stored (with its ETag) and its text, or None when there is none."""
        known = [self._where[booking_id]] if booking_id in self._where else []
        hrefs = list(dict.fromkeys(known + [url + f"{booking_id}.ics" for url in self._calendars.values()]))
        for href in hrefs:
            response = self._call("GET", href)
            if response.status == 404:
                continue
            text = response.raw
            try:
                found = _Found(href, response.headers.get("ETag"), read_event(text, self._room_of(href)))
            except ValueError:  # not an event (another app's task under that name): not this booking
                continue
            if found.id == booking_id:
                self._where[booking_id] = href
                return found, text
        return None

    def _put(self, href: str, text: str, condition: Mapping[str, str]) -> str | None:
        """Write the event if the condition holds: its new ETag ("" when the server sends none), None when not."""
        response = self._call("PUT", href, text, {**_ICS, **condition})
        if response.status == 412:
            return None
        if response.status == 404:
            raise StoreUnavailable(f"the calendar for {href} is not there")
        return str(response.headers.get("ETag") or "")

    def _drop(self, href: str) -> None:
        self._delete(href, None)

    def _delete(self, href: str, etag: str | None) -> bool:
        """Delete the event (if still at `etag`); False when it changed meanwhile."""
        response = self._call("DELETE", href, headers={"If-Match": etag} if etag else {})
        return bool(response.status != 412)

    # ---- bookkeeping ------------------------------------------------------------------------------------------
    def _forget(self, room: str) -> None:
        for key in [k for k in self._cache if k[0] == room]:
            del self._cache[key]

    def _remember(self, key: str, outcome: Booked) -> Booked:
        self._done[key] = outcome
        while len(self._done) > _REMEMBERED_KEYS:
            self._done.popitem(last=False)
        self._forget(outcome.booking.room)
        return outcome

    def _begin(self, key: str) -> Booked | None:
        """A write's first step (under the lock): take back what a failed command left, then the outcome this key
        already had here, if any."""
        self._tidy()
        done = self._done.get(key)
        return None if done is None else Booked(done.booking, replayed=True)

    def _take_back_later(self, undo: Callable[[], None]) -> None:
        try:
            undo()
        except StoreUnavailable:
            log.warning("the calendar server went away mid-command; its write is taken back when it answers again")
            self._undo.append(undo)

    def _tidy(self) -> None:
        """Take back what a failed command had written, before anything new is done."""
        while self._undo:
            self._undo[0]()
            self._undo.pop(0)

    # ---- reads -------------------------------------------------------------------------------------------------
    def _cached(self, room: str, start: datetime, end: datetime) -> list[_Found]:
        key = (room, start, end)
        hit = self._cache.get(key)
        now = time.monotonic()
        if hit is not None and now - hit[0] < self.cache_s:
            return hit[1]
        found = self._query(room, start, end)
        self._cache[key] = (now, found)
        self._cache.move_to_end(key)
        while len(self._cache) > _CACHE_ENTRIES:
            self._cache.popitem(last=False)
        return found

    def bookings(self, start: datetime, end: datetime, room: str | None = None) -> Sequence[Booking]:
        check_aware(start, end)
        rooms = [room] if room is not None else list(self._calendars)
        with self._lock:
            found = [f.event.booking for r in rooms if r in self._calendars for f in self._cached(r, start, end)]
        return sorted(found, key=lambda b: (b.start, b.room))

    def get(self, booking_id: str) -> Booking | None:
        with self._lock:
            fetched = self._fetch(booking_id)
        return None if fetched is None else fetched[0].event.booking

    # ---- writes ------------------------------------------------------------------------------------------------
    def _claim(self, room: str, start: datetime, end: datetime, own: str, key: str,
               write: Callable[[], str | None], undo: Callable[[str], None], ignore: str = "") -> str | Outcome:
        """Check, write, check again (module docstring): the ETag written when the slot is ours; a Conflict; a
        Booked replay when the key's event is already there; NotFound when the write's condition failed."""
        others: list[_Found] = []
        for attempt in range(self.attempts):
            found = [f for f in self._query(room, start, end) if f.id != ignore]
            replayed = [f for f in found if f.id == own and key in f.event.keys]
            if replayed:
                return Booked(replayed[0].event.booking, replayed=True)
            others = [f for f in found if f.id != own]
            if others:
                return Conflict(room, start, end, tuple(f.event.booking for f in others))
            try:
                etag = write()
            except StoreUnavailable:  # it may have been written before the reply was lost
                self._undo.append(functools.partial(undo, ""))
                raise
            if etag is None:
                return NotFound(own)
            try:
                others = [f for f in self._query(room, start, end) if f.id not in (own, ignore)]
            except StoreUnavailable:
                self._undo.append(functools.partial(undo, etag))
                raise
            if not others:
                return etag
            log.info("%s: someone else wrote %s-%s at the same time; stepping back (attempt %d)", room,
                     start.isoformat(), end.isoformat(), attempt + 1)
            self._take_back_later(functools.partial(undo, etag))
            time.sleep(self._pause(attempt, yields=any(f.id < own for f in others)))
        return Conflict(room, start, end, tuple(f.event.booking for f in others))

    @staticmethod
    def _pause(attempt: int, yields: bool) -> float:
        """How long a writer that stepped back waits before it checks again. Writers that stepped back together
        are parted: the one with the smaller event id goes first (the other waits a write's time longer, then
        finds it), and random pauses that double with each attempt part any that still meet."""
        return random.uniform(0.0, 0.05 * 2**attempt) + (_YIELD_S if yields else 0.0)

    def _create(self, booking: Booking, key: str, ignore: str = "") -> tuple[Outcome, str]:
        """Book a new event under the key's id: the outcome and the event's URL."""
        own = booking.id or booking_id(key)
        made = replace(booking, id=own)
        href = self._calendar(booking.room) + f"{own}.ics"
        text = event_text(made, key)

        def undo(etag: str) -> None:
            self._delete(href, etag or None)
            self._forget(booking.room)

        claimed = self._claim(booking.room, booking.start, booking.end, own, key,
                              lambda: self._put(href, text, {"If-None-Match": "*"}), undo, ignore)
        if isinstance(claimed, NotFound):  # the key's event exists outside the range checked: a replay
            fetched = self._fetch(own)
            if fetched is None or key not in fetched[0].event.keys:
                raise StoreUnavailable(f"the calendar server refused to create {href} and has no such event")
            return Booked(fetched[0].event.booking, replayed=True), href
        if not isinstance(claimed, str):
            return claimed, href
        self._where[own] = href
        return Booked(made), href

    def book(self, booking: Booking, idempotency_key: str) -> Booked | Conflict:
        check_aware(booking.start, booking.end)
        with self._lock:
            replay = self._begin(idempotency_key)
            if replay is not None:
                return replay
            outcome, _ = self._create(booking, idempotency_key)
            assert not isinstance(outcome, NotFound)
            return self._remember(idempotency_key, outcome) if isinstance(outcome, Booked) else outcome

    def _ours(self, booking_id: str) -> tuple[_Found, str] | None:
        """The assistant's own event with this id; another app's event is never changed (it reads as missing)."""
        fetched = self._fetch(booking_id)
        return fetched if fetched is not None and fetched[0].event.ours else None

    def _on_own_event(self, booking_id: str, act: Callable[[_Found, str], Outcome | None]) -> Outcome:
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
        def delete(found: _Found, _: str) -> Outcome | None:
            if not self._delete(found.href, found.etag):
                return None
            self._where.pop(booking_id, None)
            return self._remember(idempotency_key, Booked(found.event.booking))

        with self._lock:
            replay = self._begin(idempotency_key)
            if replay is not None:
                return replay
            outcome = self._on_own_event(booking_id, delete)
            assert not isinstance(outcome, Conflict)
            return outcome

    def reschedule(self, booking_id: str, start: datetime, end: datetime, idempotency_key: str, *,
                   title: str | None = None, attendees: Sequence[str] | None = None) -> Outcome:
        def move(found: _Found, text: str) -> Outcome | None:
            if idempotency_key in found.event.keys:  # this move went through before its reply was lost
                return Booked(found.event.booking, replayed=True)
            moved = changed_event(text, idempotency_key, start, end, title, attendees)
            outcome = self._move(found, text, moved, idempotency_key, start, end)
            return None if isinstance(outcome, NotFound) else outcome  # NotFound: changed since it was read

        check_aware(start, end)
        with self._lock:
            replay = self._begin(idempotency_key)
            return replay if replay is not None else self._on_own_event(booking_id, move)

    def _move(self, found: _Found, old: str, moved: str, key: str, start: datetime, end: datetime) -> Outcome:
        room = found.event.booking.room

        def undo(etag: str) -> None:  # put the old times back, unless someone changed it since
            if not etag:  # the write's reply was lost: only a move that went through is taken back
                now = self._fetch(found.id)
                if now is None or key not in now[0].event.keys:
                    return
                etag = now[0].etag or ""
            self._put(found.href, old, {"If-Match": etag} if etag else {})
            self._forget(room)

        claimed = self._claim(room, start, end, found.id, key,
                              lambda: self._put(found.href, moved, {"If-Match": found.etag} if found.etag else {}),
                              undo)
        if not isinstance(claimed, str):
            return claimed
        return self._remember(key, Booked(read_event(moved, room).booking))

    def replace(self, booking_id: str, booking: Booking, idempotency_key: str) -> Outcome:
        check_aware(booking.start, booking.end)
        with self._lock:
            replay = self._begin(idempotency_key)
            if replay is not None:
                return replay
            fetched = self._ours(booking_id)
            if fetched is None:
                return NotFound(booking_id)
            old = fetched[0]
            outcome, href = self._create(booking, idempotency_key, ignore=booking_id)
            if not isinstance(outcome, Booked):
                return outcome
            # The new one stands (made now, or by this key before a restart): now the old goes (both or neither).
            # It is the assistant's own first guess of seconds ago, withdrawn: it goes even if touched meanwhile.
            try:
                self._delete(old.href, old.etag) or self._delete(old.href, None)
            except StoreUnavailable:
                self._take_back_later(lambda: self._drop(href))
                raise
            self._where.pop(booking_id, None)
            self._forget(old.event.booking.room)
            return self._remember(idempotency_key, outcome)

    # ---- health ------------------------------------------------------------------------------------------------
    def problem(self) -> str | None:
        """Checked at most every few seconds, with its own client: a probe never waits behind a write."""
        with self._probe_lock:
            checked, problem = self._health
            if time.monotonic() - checked < _HEALTH_EVERY_S:
                return problem
            problem = None
            try:
                for room, url in self._calendars.items():
                    response = self._call("PROPFIND", url, headers={"Depth": "0"}, client=self._probe)
                    if response.status == 404:
                        problem = f"the calendar of room {room!r} is not there ({url})"
                        break
            except StoreUnavailable as exc:
                problem = str(exc)
            self._health = (time.monotonic(), problem)
            return problem

    def missing_calendars(self) -> list[str]:
        """Rooms whose calendar the server does not have (an unreachable server raises StoreUnavailable)."""
        with self._lock:
            return [room for room, url in self._calendars.items()
                    if self._call("PROPFIND", url, headers={"Depth": "0"}).status == 404]

    def create_calendars(self, rooms: Sequence[str]) -> None:
        """MKCALENDAR for these rooms (a demo server; organizations make room calendars themselves)."""
        with self._lock:
            for room in rooms:
                self._call("MKCALENDAR", self._calendar(room), ok=(201,))

    def close(self) -> None:
        with self._lock:
            self._client.close()
        with self._probe_lock:
            self._probe.close()
