"""Intent + slot texts -> a normalized meeting request: exact times, a directory room, people, assumptions.

Pure: no store, no model. The dispatcher decides what to do with the request; this only reads what was said,
relative to a reference time and zone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

from assistant.booking.clock import DayPart
from assistant.booking.dates import parse_date
from assistant.booking.interval import Interval, TimePolicy, Unresolved, from_now, resolve_interval
from assistant.booking.numbers import word_to_int
from assistant.booking.replies import language_of
from assistant.booking.rooms import RoomDirectory, RoomMatch
from assistant.booking.zh_time import has_chinese, parse_zh_count

__all__ = ["MeetingRequest", "Unread", "normalize_request", "leaves_room_to_us"]

# Words that leave the room to us: "a room", "any free room", "a meeting", "somewhere", "的会议室". A request
# without them names its room, and one that names none that we know was misheard ("Book covers tomorrow at 9"
# for "Book Everest ..."): it is asked which room, never given the smallest free one.
_ROOM_LEFT_TO_US = re.compile(
    r"\b(?:a|an|any|some|one|another)\s+(?:[a-z'-]+\s+){0,2}?(?:room|space|meeting|call|session|sync|review|slot|"
    r"huddle|standup|stand-up|catch-up|interview|demo|workshop|retro|one-on-one)s?\b|\b(?:somewhere|anywhere)\b|"
    r"会议室|会议|房间|地方", re.I)


@dataclass(frozen=True)
class MeetingRequest:
    action: str  # the intent
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
    missing: tuple[str, ...] = ()  # what the request needs and does not say (or could not be read)
    problems: tuple[Unread, ...] = ()  # slot texts that could not be read
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    spans: tuple[tuple[str, str], ...] = ()  # (slot, words) this request was built from, this turn's and carried
    any_room: bool = False  # a request (not a bare fragment) or a head count: the room may be left to us
    text: str = ""  # what was said this turn (the guard looks at the words around a doubtful span)
    asked: tuple[str, ...] = ()  # what the conversation's open question asked for: this turn answers it

    @property
    def language(self) -> str:
        """What to answer in: "zh" when this turn's words hold Chinese, else "en"."""
        return language_of(self.text)


@dataclass(frozen=True)
class Unread:
    """A slot's words that the value readers could not read in full."""

    slot: str
    said: str
    reason: str


def leaves_room_to_us(text: str) -> bool:
    """The words ask for some room rather than a named one ("book a room tomorrow at 3", "订明天的会议室")."""
    return _ROOM_LEFT_TO_US.search(text) is not None


def _first(slots: Sequence[tuple[str, str]], name: str) -> str | None:
    return next((text for slot, text in slots if slot == name), None)


def _people(text: str | None) -> int | None:
    if text is None:
        return None
    if has_chinese(text):
        return parse_zh_count(text)
    match = re.search(r"\d+", text)
    return int(match.group(0)) if match else word_to_int(text)


def _clean_title(text: str | None) -> str | None:
    return None if text is None else text.strip(" \"'.,").strip() or None


def _attendees(slots: Sequence[tuple[str, str]]) -> tuple[str, ...]:
    """The names, without the punctuation a span can take along ("Tom." at a sentence's end is Tom: the INT8
    model once tagged the period too, in a request heard again, and Tom was invited twice), each once."""
    names = (text.strip(" \"'.,;:!?。，、").strip() for name, text in slots if name == "attendees")
    return tuple(dict.fromkeys(name for name in names if name))


def _read_date(slot: str, text: str | None, now: datetime, problems: list[Unread]
               ) -> tuple[date | None, DayPart | None]:
    if not text:
        return None, None
    resolved = parse_date(text, now.date())
    if resolved is None:
        problems.append(Unread(slot, text, f"cannot read the date '{text}'"))
        return None, None
    return resolved.day, resolved.part


def _read_interval(day: date | None, now: datetime, texts: dict[str, str | None], part: DayPart | None,
                   policy: TimePolicy | None, missing: list[str], problems: list[Unread]) -> Interval | None:
    start = texts.get("start_time")
    if not start:
        return None
    resolved = resolve_interval(day or now.date(), now.tzinfo, start, texts.get("end_time"),  # type: ignore[arg-type]
                                texts.get("duration"), part, policy, now)
    if isinstance(resolved, Unresolved):
        missing += list(resolved.missing)
        slot = resolved.missing[0] if resolved.missing else "start_time"
        problems.append(Unread(slot, texts.get(slot) or start, resolved.reason))
        return None
    if day is not None and from_now(start, now) is not None and resolved.start.date() != day:
        missing.append("start_time")  # "tomorrow in an hour": the two disagree
        problems.append(Unread("start_time", start, f"'{start}' is not on {day.isoformat()}"))
        return None
    return resolved


def normalize_request(intent: str, slots: Sequence[tuple[str, str]], now: datetime, rooms: RoomDirectory,
                      policy: TimePolicy | None = None, carried: Mapping[str, str] | None = None, *,
                      text: str = "", any_room: bool = False, asked: Sequence[str] = ()) -> MeetingRequest:
    """`slots` are (name, text) pairs as the NLU found them; `carried` holds slot texts from earlier turns
    of the conversation (a clarification), used where this turn says nothing."""
    tz = now.tzinfo
    if tz is None or not hasattr(tz, "key"):
        raise ValueError("now must carry an IANA zone (zoneinfo.ZoneInfo)")
    merged = list(slots) + [(k, v) for k, v in (carried or {}).items() if _first(slots, k) is None]
    said = {name: _first(merged, name) for name in {n for n, _ in merged}}
    missing: list[str] = []
    problems: list[Unread] = []
    assumptions: list[str] = []

    # every room span this turn (a misheard word can be tagged as a room beside the one named), else the carried one
    room_reading = rooms.resolve([text for name, text in merged if name == "room"])

    day, part = _read_date("date", said.get("date"), now, problems)
    interval = _read_interval(day, now, said, part, policy, missing, problems)
    if interval is not None:
        assumptions += list(interval.assumptions)
        if day is None and from_now(said.get("start_time") or "", now) is not None:
            day = interval.start.date()  # "in an hour" says the day too
    new_day, new_part = _read_date("new_date", said.get("new_date"), now, problems)
    new_interval = _read_interval(new_day or day, now, {"start_time": said.get("new_time")}, new_part, policy, [],
                                  problems)

    if intent == "book_meeting":
        if day is None:
            missing.append("date")
        if interval is None and "start_time" not in missing:
            missing.append("start_time")
    if intent == "reschedule_meeting" and new_day is None and new_interval is None:
        missing.append("new_time")
    return MeetingRequest(
        action=intent, room=room_reading.match, room_said=room_reading.unknown,
        room_rivals=tuple(room.name for room in room_reading.rivals), day=day, interval=interval,
        new_day=new_day, new_interval=new_interval, title=_clean_title(said.get("title")),
        attendees=_attendees(merged), people=_people(said.get("people_count")),
        missing=tuple(dict.fromkeys(missing)), problems=tuple(problems), assumptions=tuple(assumptions),
        spans=tuple(merged), any_room=any_room or said.get("people_count") is not None, text=text, asked=tuple(asked),
    )
