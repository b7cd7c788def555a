"""A day + start/end/duration phrases -> an exact, zone-aware meeting interval, with the assumptions made.

- am/pm said on one end of a range applies to the other ("2 to 3 pm", "between 1 and 2 pm"), unless that
  would put the start after the end ("11 to 1 pm" is 11 am to 1 pm).
- A bare clock hour follows the policy (default 8-11 morning, 12 noon, 1-7 afternoon), and says so.
- No end and no duration: the default duration (30 minutes), and says so.
- "in an hour", "in 20 minutes" start that long after now; a range said as one phrase ("15h30-18h") is split.
- Durations are real elapsed time (added in UTC), so an hour across a DST change is 60 minutes; a local time
  that does not exist (the spring-forward gap) moves forward to the first time that does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from assistant.domain import Slot
from assistant.language.patterns import every_language
from assistant.language.readers import parse_clock, parse_duration
from assistant.language.registry import LANGUAGES
from assistant.language.values import ClockTime, DayPart, Meridiem, resolve_meridiem

__all__ = ["TimePolicy", "Interval", "Unresolved", "resolve_interval", "localize"]


@dataclass(frozen=True)
class TimePolicy:
    morning_hours: range = field(default_factory=lambda: range(8, 12))
    afternoon_hours: range = field(default_factory=lambda: range(1, 8))
    default_duration: timedelta = timedelta(minutes=30)


@dataclass(frozen=True)
class Interval:
    start: datetime
    end: datetime
    assumptions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unresolved:
    missing: tuple[Slot, ...]  # slot names a person must still give
    reason: str


def localize(day: date, hour: int, minute: int, tz: ZoneInfo) -> datetime:
    """Wall-clock time on a day in a zone; a time inside a DST gap moves forward by the gap."""
    naive = datetime.combine(day, time(hour, minute))
    aware = naive.replace(tzinfo=tz, fold=0)
    round_trip = aware.astimezone(UTC).astimezone(tz)
    return round_trip if round_trip.replace(tzinfo=None) != naive else aware


def _fmt(hour: int, minute: int) -> str:
    return f"{hour:02d}:{minute:02d}"


def _start_hour(start: ClockTime, end: ClockTime | None, part: DayPart | None, policy: TimePolicy,
                notes: list[str], said: str) -> tuple[int, int]:
    if start.fixed:
        return start.hour, start.minute
    if start.meridiem is not None:
        return start.to_24h(start.meridiem)
    if end is not None and end.meridiem is not None and not end.fixed:
        same = start.to_24h(end.meridiem)
        end_24 = end.to_24h(end.meridiem)
        if same < end_24:
            return same
        return start.to_24h(Meridiem.AM if end.meridiem is Meridiem.PM else Meridiem.PM)
    if end is not None and end.fixed:  # "11 to 14:00", "10 until noon": the start comes before the end
        for meridiem in (Meridiem.AM, Meridiem.PM):
            candidate = start.to_24h(meridiem)
            if candidate < (end.hour, end.minute) and (end.hour, end.minute) <= (candidate[0] + 12, candidate[1]):
                return candidate
    if part is not None:
        return start.to_24h(part.meridiem)
    meridiem = resolve_meridiem(start.hour, policy.morning_hours, policy.afternoon_hours)
    hour, minute = start.to_24h(meridiem)
    notes.append(f"start time '{said}' taken as {_fmt(hour, minute)} (no am/pm said)")
    return hour, minute


def _end_hour(end: ClockTime, start_24: tuple[int, int], start: ClockTime) -> tuple[int, int]:
    if end.fixed:
        return end.hour, end.minute
    if end.meridiem is not None:
        return end.to_24h(end.meridiem)
    if start.meridiem is not None and not start.fixed:
        candidate = end.to_24h(start.meridiem)
        if candidate > start_24:
            return candidate
    for meridiem in (Meridiem.AM, Meridiem.PM):  # the first end after the start
        candidate = end.to_24h(meridiem)
        if candidate > start_24:
            return candidate
    return end.to_24h(Meridiem.AM)


_RANGE_SPLIT = re.compile(rf"\s*(?:-|–|{every_language(lambda language: language.words.range_joiners)})\s*")
_RANGE_OPENERS = tuple(opener for language in LANGUAGES for opener in language.words.range_openers)
_FROM_NOW = tuple(re.compile(language.words.from_now) for language in LANGUAGES if language.words.from_now)


def _split_range(text: str) -> tuple[str, str] | None:
    """'15h30-18h', '9a to 11a' tagged as one span: the two ends, when each reads as a clock time."""
    text = text.strip()
    for opener in _RANGE_OPENERS:
        text = text.removeprefix(opener)
    parts = _RANGE_SPLIT.split(text)
    if len(parts) == 2 and all(parse_clock(p) is not None for p in parts):
        return parts[0], parts[1]
    return None


def from_now(text: str, now: datetime) -> datetime | None:
    """'in an hour', 'in 20 minutes': now plus that long, to the minute; None when the text is not such a phrase."""
    said = text.strip().lower()
    match = next((found for pattern in _FROM_NOW if (found := pattern.match(said)) is not None), None)
    length = parse_duration(match.group(1)) if match else None
    if length is None:
        return None
    return (now.astimezone(UTC) + length).astimezone(now.tzinfo).replace(second=0, microsecond=0)


def resolve_interval(day: date, tz: ZoneInfo, start_text: str | None, end_text: str | None = None,
                     duration_text: str | None = None, part: DayPart | None = None,
                     policy: TimePolicy | None = None, now: datetime | None = None) -> Interval | Unresolved:
    policy = policy or TimePolicy()
    notes: list[str] = []
    relative = from_now(start_text, now) if start_text and now is not None else None
    if relative is not None:
        return _from_start(relative, None, duration_text, policy, notes)
    start = parse_clock(start_text) if start_text else None
    if start is None and start_text and not end_text and (ends := _split_range(start_text)):
        start_text, end_text = ends
        start = parse_clock(start_text)
    if start is None:
        return Unresolved((Slot.START_TIME,), "no start time" if not start_text else f"cannot read '{start_text}'")
    end = parse_clock(end_text) if end_text else None
    if end_text and end is None:
        return Unresolved((Slot.END_TIME,), f"cannot read the end time '{end_text}'")
    start_24 = _start_hour(start, end, part, policy, notes, start_text or "")
    start_at = localize(day, *start_24, tz)
    end_at: datetime | None = None
    if end is not None:
        end_24 = _end_hour(end, start_24, start)
        end_day = day + timedelta(days=1) if end_24 <= start_24 else day  # "10 pm to midnight"
        end_at = localize(end_day, *end_24, tz)
    return _from_start(start_at, end_at, duration_text, policy, notes)


def _from_start(start_at: datetime, end_at: datetime | None, duration_text: str | None, policy: TimePolicy,
                notes: list[str]) -> Interval | Unresolved:
    tz = start_at.tzinfo
    if end_at is None and duration_text:
        length = parse_duration(duration_text)
        if length is None:
            return Unresolved((Slot.DURATION,), f"cannot read the duration '{duration_text}'")
        end_at = (start_at.astimezone(UTC) + length).astimezone(tz)
    elif end_at is None:
        end_at = (start_at.astimezone(UTC) + policy.default_duration).astimezone(tz)
        notes.append(f"no end or duration said: {int(policy.default_duration.total_seconds() // 60)} minutes")
    return Interval(start_at, end_at, tuple(notes))
