"""Intent + slot texts -> a normalized meeting request: exact times, a directory room, people, assumptions.

Pure: no store, no model. The dispatcher decides what to do with the request; this only reads what was said,
relative to a reference time and zone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

from assistant.booking.interval import Interval, TimePolicy, Unresolved, from_now, resolve_interval
from assistant.booking.replies import language_of
from assistant.booking.rooms import RoomDirectory, RoomMatch
from assistant.domain import Intent, Slot
from assistant.language.patterns import every_language
from assistant.language.profile import Language
from assistant.language.readers import parse_count, parse_date
from assistant.language.values import DayPart

__all__ = ["MeetingRequest", "Unread", "normalize_request", "leaves_room_to_us"]

# Words that leave the room to us: "a room", "any free room", "a meeting", "somewhere", "的会议室". A request
# without them names its room, and one that names none that we know was misheard ("Book covers tomorrow at 9"
# for "Book Everest ..."): it is asked which room, never given the smallest free one.
_ROOM_LEFT_TO_US = re.compile(every_language(lambda language: language.rooms.any_room), re.I)


@dataclass(frozen=True)
class MeetingRequest:
    action: Intent
    room: RoomMatch | None = None
    room_said: str | None = None  # a room was named but matches nothing in the directory
    room_rivals: tuple[str, ...] = ()  # the request names two rooms (which one is asked, never guessed)
    day: date | None = None
    interval: Interval | None = None  # the meeting's time (for cancel/reschedule: the one to act on)
    new_day: date | None = None
    new_interval: Interval | None = None  # reschedule target
    title: str | None = None
    attendees: tuple[str, ...] = ()
    people: int | None = None
    missing: tuple[Slot, ...] = ()  # what the request needs and does not say (or could not be read)
    problems: tuple[Unread, ...] = ()  # slot texts that could not be read
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    spans: tuple[tuple[Slot, str], ...] = ()  # (slot, words) this request was built from, this turn's and carried
    any_room: bool = False  # a request (not a bare fragment) or a head count: the room may be left to us
    text: str = ""  # what was said this turn (the guard looks at the words around a doubtful span)
    asked: tuple[str, ...] = ()  # what the conversation's open question asked for: this turn answers it
    spoken: bool = False  # heard, not typed: its times are held to what people say (the guard)

    @property
    def language(self) -> Language:
        """What to answer in: the language this turn's words are written in."""
        return language_of(self.text)


@dataclass(frozen=True)
class Unread:
    """A slot's words that the value readers could not read in full."""

    slot: Slot
    said: str
    reason: str


def leaves_room_to_us(text: str) -> bool:
    """The words ask for some room rather than a named one ("book a room tomorrow at 3", "订明天的会议室")."""
    return _ROOM_LEFT_TO_US.search(text) is not None


def _first(slots: Sequence[tuple[Slot, str]], name: Slot) -> str | None:
    return next((text for slot, text in slots if slot == name), None)


def _people(text: str | None) -> int | None:
    return None if text is None else parse_count(text)


def _clean_title(text: str | None) -> str | None:
    return None if text is None else text.strip(" \"'.,").strip() or None


def _attendees(slots: Sequence[tuple[Slot, str]]) -> tuple[str, ...]:
    """The names, without the punctuation a span can take along ("Tom." at a sentence's end is Tom: the INT8
    model once tagged the period too, in a request heard again, and Tom was invited twice), each once."""
    names = (text.strip(" \"'.,;:!?。，、").strip() for name, text in slots if name == Slot.ATTENDEES)
    return tuple(dict.fromkeys(name for name in names if name))


def _read_date(slot: Slot, text: str | None, now: datetime, problems: list[Unread]
               ) -> tuple[date | None, DayPart | None]:
    if not text:
        return None, None
    resolved = parse_date(text, now.date())
    if resolved is None:
        problems.append(Unread(slot, text, f"cannot read the date '{text}'"))
        return None, None
    return resolved.day, resolved.part


def _read_interval(day: date | None, now: datetime, texts: dict[Slot, str | None], part: DayPart | None,
                   policy: TimePolicy | None, missing: list[Slot], problems: list[Unread]) -> Interval | None:
    start = texts.get(Slot.START_TIME)
    if not start:
        return None
    resolved = resolve_interval(day or now.date(), now.tzinfo, start, texts.get(Slot.END_TIME),  # type: ignore[arg-type]
                                texts.get(Slot.DURATION), part, policy, now)
    if isinstance(resolved, Unresolved):
        missing += list(resolved.missing)
        slot = resolved.missing[0] if resolved.missing else Slot.START_TIME
        problems.append(Unread(slot, texts.get(slot) or start, resolved.reason))
        return None
    if day is not None and from_now(start, now) is not None and resolved.start.date() != day:
        missing.append(Slot.START_TIME)  # "tomorrow in an hour": the two disagree
        problems.append(Unread(Slot.START_TIME, start, f"'{start}' is not on {day.isoformat()}"))
        return None
    return resolved


def normalize_request(intent: Intent, slots: Sequence[tuple[Slot, str]], now: datetime, rooms: RoomDirectory,
                      policy: TimePolicy | None = None, carried: Mapping[Slot, str] | None = None, *,
                      text: str = "", any_room: bool = False, asked: Sequence[str] = (),
                      spoken: bool = False) -> MeetingRequest:
    """`slots` are (name, text) pairs as the NLU found them; `carried` holds slot texts from earlier turns
    of the conversation (a clarification), used where this turn says nothing."""
    tz = now.tzinfo
    if tz is None or not hasattr(tz, "key"):
        raise ValueError("now must carry an IANA zone (zoneinfo.ZoneInfo)")
    merged = list(slots) + [(k, v) for k, v in (carried or {}).items() if _first(slots, k) is None]
    said = {name: _first(merged, name) for name in {n for n, _ in merged}}
    missing: list[Slot] = []
    problems: list[Unread] = []
    assumptions: list[str] = []

    # every room span this turn (a misheard word can be tagged as a room beside the one named), else the carried one
    room_reading = rooms.resolve([text for name, text in merged if name == Slot.ROOM])

    day, part = _read_date(Slot.DATE, said.get(Slot.DATE), now, problems)
    interval = _read_interval(day, now, said, part, policy, missing, problems)
    if interval is not None:
        assumptions += list(interval.assumptions)
        if day is None and from_now(said.get(Slot.START_TIME) or "", now) is not None:
            day = interval.start.date()  # "in an hour" says the day too
    new_day, new_part = _read_date(Slot.NEW_DATE, said.get(Slot.NEW_DATE), now, problems)
    new_interval = _read_interval(new_day or day, now, {Slot.START_TIME: said.get(Slot.NEW_TIME)}, new_part, policy,
                                  [], problems)

    if intent == Intent.BOOK_MEETING:
        if day is None:
            missing.append(Slot.DATE)
        if interval is None and Slot.START_TIME not in missing:
            missing.append(Slot.START_TIME)
    if intent == Intent.RESCHEDULE_MEETING and new_day is None and new_interval is None:
        missing.append(Slot.NEW_TIME)
    return MeetingRequest(
        action=intent, room=room_reading.match, room_said=room_reading.unknown,
        room_rivals=tuple(room.name for room in room_reading.rivals), day=day, interval=interval,
        new_day=new_day, new_interval=new_interval, title=_clean_title(said.get(Slot.TITLE)),
        attendees=_attendees(merged), people=_people(said.get(Slot.PEOPLE_COUNT)),
        missing=tuple(dict.fromkeys(missing)), problems=tuple(problems), assumptions=tuple(assumptions),
        spans=tuple(merged), any_room=any_room or said.get(Slot.PEOPLE_COUNT) is not None, text=text,
        asked=tuple(asked), spoken=spoken,
    )
