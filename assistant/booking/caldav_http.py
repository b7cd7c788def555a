"""The CalDAV store's HTTP side: python-caldav's client carries the requests (auth, sessions); the requests are
written here, with a breaker and a health probe.

- The server down, slow (past `timeout_s`) or refusing the credentials raises StoreUnavailable. After a timeout,
  requests fail at once for a while (the health probe still asks, and ends that when the server answers): a
  hanging server must not hold the one thread that serves every session's understanding.
- The health probe has its own client and asks at most every few seconds: /healthz never waits behind a write.
"""

from __future__ import annotations

import logging
import threading
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import niquests
from caldav.davclient import DAVClient
from caldav.lib import error as dav_error

from assistant.booking.calendar_events import CalendarEvent, read_event, read_events
from assistant.booking.store import StoreUnavailable, check_aware
from assistant.errors import ConfigError

__all__ = ["CalDavHttp", "FoundEvent"]

log = logging.getLogger(__name__)

_QUERY = """<?xml version="1.0" encoding="utf-8"?>
<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
  <D:prop><D:getetag/><C:calendar-data/></D:prop>
  <C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter name="VEVENT">
    <C:time-range start="{start}" end="{end}"/>
  </C:comp-filter></C:comp-filter></C:filter>
</C:calendar-query>"""
_ICS = {"Content-Type": "text/calendar; charset=utf-8"}
_REMEMBERED_HREFS = 100_000
_HEALTH_EVERY_S = 5.0
_SILENT_S = 10.0  # after a request timed out, how long requests fail at once rather than wait (the probe still asks)


@dataclass(frozen=True)
class FoundEvent:
    """An event occurrence as the server holds it: where, at which ETag."""

    href: str
    etag: str | None
    event: CalendarEvent

    @property
    def id(self) -> str:
        return self.event.booking.id


def _utc(moment: datetime) -> str:
    check_aware(moment)
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def _client(url: str, username: str | None, password: str | None, timeout_s: float) -> DAVClient:
    return DAVClient(url=url, username=username, password=password, timeout=timeout_s,  # type: ignore[arg-type]
                     enable_rfc6764=False)


class CalDavHttp:
    def __init__(self, calendars: Mapping[str, str], username: str | None, password: str | None,
                 timeout_s: float) -> None:
        """`calendars`: room key -> the URL of that room's calendar collection."""
        if not calendars:
            raise ConfigError("the CalDAV store needs a calendar for at least one room")
        self.calendars = {room: url if url.endswith("/") else url + "/" for room, url in calendars.items()}
        first = next(iter(self.calendars.values()))
        self._server = urllib.parse.urlsplit(first).netloc
        self._client = _client(first, username, password, timeout_s)
        # /healthz asks from the web thread while a write may hold the main client: it has its own, and short waits
        self._probe = _client(first, username, password, min(timeout_s, 2.0))
        self._probe_lock = threading.Lock()
        self._health: tuple[float, str | None] = (-_HEALTH_EVERY_S, None)
        self._silent_until = 0.0  # after a timeout, requests fail at once until then
        self._silence = ""
        self._where: dict[str, str] = {}  # booking id -> its event's URL, as last seen

    def call(self, method: str, url: str, body: str = "", headers: Mapping[str, str] | None = None,
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

    def calendar(self, room: str) -> str:
        try:
            return self.calendars[room]
        except KeyError:
            raise ValueError(f"room {room!r} has no calendar: map it in the room directory (rooms.toml)") from None

    def room_of(self, href: str) -> str:
        return next((room for room, url in self.calendars.items() if href.startswith(url)), "")

    def query(self, room: str, start: datetime, end: datetime) -> list[FoundEvent]:
        """Every event occurrence in the room's calendar overlapping [start, end), fresh from the server."""
        url = self.calendar(room)
        response = self.call("REPORT", url, _QUERY.format(start=_utc(start), end=_utc(end)),
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
                found.append(FoundEvent(href, item.etag, event))
                self._where[event.booking.id] = href
        if len(self._where) > _REMEMBERED_HREFS:  # a hint only (fetch looks in every room without it)
            self._where.clear()
        return sorted(found, key=lambda f: f.event.booking.start)

    def fetch(self, booking_id: str) -> tuple[FoundEvent, str] | None:
        """The booking's event as stored (with its ETag) and its text, or None when there is none."""
        known = [self._where[booking_id]] if booking_id in self._where else []
        hrefs = list(dict.fromkeys(known + [url + f"{booking_id}.ics" for url in self.calendars.values()]))
        for href in hrefs:
            response = self.call("GET", href)
            if response.status == 404:
                continue
            text = response.raw
            try:
                found = FoundEvent(href, response.headers.get("ETag"), read_event(text, self.room_of(href)))
            except ValueError:  # not an event (another app's task under that name): not this booking
                continue
            if found.id == booking_id:
                self._where[booking_id] = href
                return found, text
        return None

    def seen_at(self, booking_id: str, href: str | None) -> None:
        """Where the booking's event is now (None: gone)."""
        if href is None:
            self._where.pop(booking_id, None)
        else:
            self._where[booking_id] = href

    def put(self, href: str, text: str, condition: Mapping[str, str]) -> str | None:
        """Write the event if the condition holds: its new ETag ("" when the server sends none), None when not."""
        response = self.call("PUT", href, text, {**_ICS, **condition})
        if response.status == 412:
            return None
        if response.status == 404:
            raise StoreUnavailable(f"the calendar for {href} is not there")
        return str(response.headers.get("ETag") or "")

    def delete(self, href: str, etag: str | None) -> bool:
        """Delete the event (if still at `etag`); False when it changed meanwhile."""
        response = self.call("DELETE", href, headers={"If-Match": etag} if etag else {})
        return bool(response.status != 412)

    def problem(self) -> str | None:
        """Checked at most every few seconds, with its own client: a probe never waits behind a write."""
        with self._probe_lock:
            checked, problem = self._health
            if time.monotonic() - checked < _HEALTH_EVERY_S:
                return problem
            problem = None
            try:
                for room, url in self.calendars.items():
                    response = self.call("PROPFIND", url, headers={"Depth": "0"}, client=self._probe)
                    if response.status == 404:
                        problem = f"the calendar of room {room!r} is not there ({url})"
                        break
            except StoreUnavailable as exc:
                problem = str(exc)
            self._health = (time.monotonic(), problem)
            return problem

    def missing_calendars(self) -> list[str]:
        """Rooms whose calendar the server does not have (an unreachable server raises StoreUnavailable)."""
        return [room for room, url in self.calendars.items()
                if self.call("PROPFIND", url, headers={"Depth": "0"}).status == 404]

    def create_calendars(self, rooms: Sequence[str]) -> None:
        """MKCALENDAR for these rooms (a demo server; organizations make room calendars themselves)."""
        for room in rooms:
            self.call("MKCALENDAR", self.calendar(room), ok=(201,))

    def close(self) -> None:
        self._client.close()
        with self._probe_lock:
            self._probe.close()
