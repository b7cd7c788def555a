"""Bookings as iCalendar events (RFC 5545), for the CalDAV store: one VEVENT per booking, and any calendar's events
read back as the bookings they block.

A booking's event: UID = the booking id; DTSTART/DTEND in the booking's zone (TZID with its VTIMEZONE, or UTC when
the time carries only an offset); SUMMARY = the title; an ATTENDEE per attendee (mailto: when it is an address,
else a name in CN); and X- properties for what iCalendar has no field for: the room, the owner ("token:NAME" is no
calendar address, so not ORGANIZER), the conversation, and the idempotency keys of the commands that made or
changed it (a retried command finds its key there and changes nothing).

Events from other apps block time too: recurring ones by each occurrence (RRULE, RDATE, EXDATE, moved instances),
all-day ones for their days in the reader's zone. An event marked free (TRANSP:TRANSPARENT) or cancelled blocks
nothing; a private one blocks without its title.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

import icalendar
import recurring_ical_events

from assistant.booking.store import OTHER_APP, Booking, check_aware

__all__ = ["CalendarEvent", "event_text", "read_event", "read_events", "changed_event", "X_ROOM", "X_COMMAND"]

PRODID = "-//voice-assistant//CalDAV store//EN"
X_ROOM = "X-VOICE-ASSISTANT-ROOM"  # set on every event the assistant made: only those it changes or deletes
X_OWNER = "X-VOICE-ASSISTANT-OWNER"
X_CONVERSATION = "X-VOICE-ASSISTANT-CONVERSATION"
X_COMMAND = "X-VOICE-ASSISTANT-COMMAND"  # one per command (book, move) that wrote the event: its idempotency key
_ATTENDEE_URN = "urn:x-voice-assistant:attendee:"


@dataclass(frozen=True)
class CalendarEvent:
    """One occurrence of an event in a room's calendar, as the booking it blocks."""

    booking: Booking
    ours: bool  # made by the assistant (it may change it); else another app's, read only
    keys: tuple[str, ...] = ()  # the idempotency keys recorded on it


def _when(moment: datetime) -> datetime:
    """A zone iCalendar can name (TZID) stays; a bare offset becomes UTC (there is no TZID for "+01:00")."""
    check_aware(moment)
    return moment if isinstance(moment.tzinfo, ZoneInfo) else moment.astimezone(UTC)


def _attendee(name: str) -> icalendar.vCalAddress:
    if "@" in name and " " not in name.strip():
        address = icalendar.vCalAddress(f"mailto:{name.strip()}")
    else:
        address = icalendar.vCalAddress(_ATTENDEE_URN + urllib.parse.quote(name))
    address.params["CN"] = name
    return address


def _set_times(event: icalendar.Component, start: datetime, end: datetime) -> None:
    for name, value in (("DTSTART", start), ("DTEND", end)):
        if name in event:
            del event[name]
        event.add(name, _when(value))


def _set_details(event: icalendar.Component, title: str | None, attendees: Sequence[str]) -> None:
    for name in ("SUMMARY", "ATTENDEE"):
        if name in event:
            del event[name]
    if title:
        event.add("SUMMARY", title)
    for name in attendees:
        event.add("ATTENDEE", _attendee(name))


def _calendar(event: icalendar.Component) -> icalendar.Calendar:
    calendar = icalendar.Calendar()
    calendar.add("PRODID", PRODID)
    calendar.add("VERSION", "2.0")
    calendar.add_component(event)
    calendar.add_missing_timezones()
    return calendar


def event_text(booking: Booking, key: str) -> str:
    """The iCalendar object of a new booking (its id already chosen)."""
    event = icalendar.Event()
    now = datetime.now(UTC).replace(microsecond=0)
    event.add("UID", booking.id)
    event.add("DTSTAMP", now)
    event.add("CREATED", now)
    _set_times(event, booking.start, booking.end)
    _set_details(event, booking.title, booking.attendees)
    event.add("STATUS", "CONFIRMED")
    event.add(X_ROOM, booking.room)
    if booking.owner:
        event.add(X_OWNER, booking.owner)
    if booking.conversation:
        event.add(X_CONVERSATION, booking.conversation)
    event.add(X_COMMAND, key)
    return str(_calendar(event).to_ical().decode())


def changed_event(text: str, key: str, start: datetime, end: datetime, title: str | None,
                  attendees: Sequence[str] | None) -> str:
    """The stored object with a move applied: what someone else added (a description, an alarm) is kept."""
    calendar = icalendar.Calendar.from_ical(text)
    event = calendar.walk("VEVENT")[0]  # the assistant's own event (read_event found it)
    current = _booking(event, "", UTC)
    _set_times(event, start, end)
    _set_details(event, current.title if title is None else title,
                 current.attendees if attendees is None else tuple(attendees))
    for name in ("DTSTAMP", "LAST-MODIFIED"):
        if name in event:
            del event[name]
        event.add(name, datetime.now(UTC).replace(microsecond=0))
    event["SEQUENCE"] = int(event.get("SEQUENCE", 0)) + 1
    event.add(X_COMMAND, key)
    calendar.add_missing_timezones()
    return str(calendar.to_ical().decode())


def _values(value: Any) -> list[Any]:
    """A property given once is a value, given more often a list of them."""
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _moment(value: date | datetime, zone: tzinfo | None) -> datetime:
    """All-day dates start at midnight, floating times are read, in the reader's zone."""
    if not isinstance(value, datetime):
        value = datetime.combine(value, time(0))
    return value if value.tzinfo is not None else value.replace(tzinfo=zone or UTC)


def _attendee_name(address: Any) -> str:
    name = getattr(address, "params", {}).get("CN")
    if name:
        return str(name)
    text = str(address)
    return text.removeprefix("mailto:").removeprefix("MAILTO:")


def _booking(event: icalendar.Component, room: str, zone: tzinfo | None) -> Booking:
    start = _moment(event.decoded("DTSTART"), zone)
    if "DTEND" in event:
        end = _moment(event.decoded("DTEND"), zone)
    elif "DURATION" in event:
        end = start + event.decoded("DURATION")
    else:  # RFC 5545: a date lasts a day, a date-time is an instant
        end = start + (timedelta(days=1) if not isinstance(event.decoded("DTSTART"), datetime) else timedelta(0))
    ours = X_ROOM in event
    private = str(event.get("CLASS", "PUBLIC")).upper() in ("PRIVATE", "CONFIDENTIAL")
    title = None if private or "SUMMARY" not in event else str(event.get("SUMMARY"))
    attendees = () if private else tuple(_attendee_name(a) for a in _values(event.get("ATTENDEE")))
    owner = str(event.get(X_OWNER)) if X_OWNER in event else (None if ours else OTHER_APP)
    conversation = str(event.get(X_CONVERSATION)) if X_CONVERSATION in event else None
    return Booking(str(event.get("UID", "")), room, start, end, title, attendees, conversation, owner)


def _blocks(event: icalendar.Component) -> bool:
    return (str(event.get("TRANSP", "OPAQUE")).upper() != "TRANSPARENT"
            and str(event.get("STATUS", "CONFIRMED")).upper() != "CANCELLED")


def _found(event: icalendar.Component, booking: Booking) -> CalendarEvent:
    return CalendarEvent(booking, X_ROOM in event, tuple(str(v) for v in _values(event.get(X_COMMAND))))


def read_event(text: str, room: str) -> CalendarEvent:
    """A calendar object's (first) event as stored: for a booking looked up by its id. ValueError when the object
    holds no event (a task, a journal entry)."""
    events = icalendar.Calendar.from_ical(text).walk("VEVENT")
    if not events:
        raise ValueError("no VEVENT in this calendar object")
    return _found(events[0], _booking(events[0], room, UTC))


def read_events(text: str, room: str, start: datetime, end: datetime) -> list[CalendarEvent]:
    """The occurrences of a calendar object's events that overlap [start, end) and block the room."""
    calendar = icalendar.Calendar.from_ical(text)
    found = []
    for event in recurring_ical_events.of(calendar).between(start, end):
        if not _blocks(event):
            continue
        booking = _booking(event, room, start.tzinfo)
        if booking.end <= start or booking.start >= end or booking.end <= booking.start:
            continue
        found.append(_found(event, booking))
    return found
