"""Date phrases -> calendar dates, relative to today.

Relative forms (today, tomorrow, the day after tomorrow, weekdays with this/next) are hand-written: dateparser
keeps the current time of day for "tomorrow" and fails on "the day after tomorrow", and "next Friday" must
follow the product's rule. Month-and-day forms ("December 15th", "Dec 15", "15 December", "Monday, December
7") go to dateutil's parser; day-only forms ("the 10th", "Friday the fourth") pick the next such day.

Rules: a bare weekday or "this <weekday>" is its next occurrence after today; "next <weekday>" (and
"<weekday> next week") is that weekday in the following Monday-to-Sunday week; a date without a year that has
passed this year is next year's; a day without a month that has passed this month is next month's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from dateutil import parser as dateutil_parser

from assistant.booking.clock import DayPart, parse_day_part
from assistant.booking.numbers import ordinal_to_int

__all__ = ["ResolvedDate", "parse_date", "WEEKDAYS"]

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_RE = re.compile(r"\b(mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|nesday|rsday|urday|sday)?\b")
_PARTS = re.compile(r"\b(morning|afternoon|evening|night|tonight)\b")
_ORDINAL_WORDS = (r"(?:twenty|thirty)?[-\s]?(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)|tenth|"
                  r"eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|"
                  r"twentieth|thirtieth|\d{1,2}(?:st|nd|rd|th)?")
_DAY_ONLY = re.compile(rf"^(?:the )?({_ORDINAL_WORDS})$")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


@dataclass(frozen=True)
class ResolvedDate:
    day: date
    part: DayPart | None = None  # "tomorrow morning" -> MORNING


def _weekday_index(token: str) -> int:
    return [w[:3] for w in WEEKDAYS].index(token[:3])


def _next_weekday(today: date, weekday: int) -> date:
    ahead = (weekday - today.weekday()) % 7 or 7  # strictly after today
    return today + timedelta(days=ahead)


def _weekday_next_week(today: date, weekday: int) -> date:
    monday_next_week = today - timedelta(days=today.weekday()) + timedelta(days=7)
    return monday_next_week + timedelta(days=weekday)


def _clean(text: str) -> str:
    text = text.lower().replace(",", " ").replace(".", " ")
    text = re.sub(r"\b(on|of|for|the coming)\b", lambda m: "coming" if m.group(0) == "the coming" else " ", text)
    return re.sub(r"\s+", " ", text).strip()


def _relative(text: str, today: date) -> date | None:
    if text in ("today", "tonight", "this", ""):
        return today
    if text == "tomorrow":
        return today + timedelta(days=1)
    if text in ("the day after tomorrow", "day after tomorrow", "the day after"):
        return today + timedelta(days=2)
    return None


def _with_weekday(text: str, today: date) -> date | None:
    match = _WEEKDAY_RE.search(text)
    if match is None:
        return None
    weekday = _weekday_index(match.group(1))
    rest = (text[: match.start()] + " " + text[match.end() :]).strip()
    rest = re.sub(r"\s+", " ", rest)
    if rest in ("", "this", "coming", "this coming"):
        return _next_weekday(today, weekday)
    if rest in ("next", "next week", "a week", "next coming"):
        return _weekday_next_week(today, weekday)
    day_only = _DAY_ONLY.match(rest)
    if day_only:  # "friday the fourth": the next 4th that is a Friday, within a year
        day_number = ordinal_to_int(day_only.group(1))
        if day_number is None:
            return None
        candidate = _day_of_month(today, day_number)
        for _ in range(14):
            if candidate is not None and candidate.weekday() == weekday:
                return candidate
            candidate = _day_of_month(candidate or today, day_number, after=True) if candidate else None
        return _day_of_month(today, day_number)
    return _month_day(rest, today)  # "monday december 7": the date decides, the weekday is a hint


def _day_of_month(today: date, day: int, after: bool = False) -> date | None:
    """The next date with this day number (this month if not passed, else the following months)."""
    if not 1 <= day <= 31:
        return None
    year, month = today.year, today.month
    for _ in range(13):
        try:
            candidate = date(year, month, day)
        except ValueError:  # the 31st of a 30-day month
            candidate = None
        if candidate is not None and (candidate > today if after else candidate >= today):
            return candidate
        month = month % 12 + 1
        year += month == 1
    return None


def _month_day(text: str, today: date) -> date | None:
    if not any(m in text for m in _MONTHS):
        return None
    numeric = re.sub(rf"\b({_ORDINAL_WORDS})\b", lambda m: str(ordinal_to_int(m.group(0)) or m.group(0)), text)
    try:
        default = datetime.combine(today.replace(day=1), time())  # unsaid fields: this month, this year
        parsed: date = dateutil_parser.parse(numeric, default=default, fuzzy=True).date()
    except (ValueError, OverflowError):
        return None
    if re.search(r"\b\d{4}\b", numeric):
        return parsed
    if parsed < today:  # no year said and the date has passed: next year's
        try:
            return parsed.replace(year=parsed.year + 1)
        except ValueError:  # 29 February
            return None
    return parsed


def parse_date(text: str, today: date) -> ResolvedDate | None:
    """A date phrase as the NLU tagged it; None when it names no day."""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text.strip()):  # ISO, as a proposal or a client writes it
        try:
            return ResolvedDate(date.fromisoformat(text.strip()))
        except ValueError:
            return None
    cleaned = _clean(text)
    part = parse_day_part(cleaned)
    core = re.sub(r"\s+", " ", _PARTS.sub(" ", cleaned)).strip()
    if core.endswith(" this") or core == "this":  # "this afternoon" -> "this"
        core = core.removesuffix("this").strip() or "today"
    resolved = _relative(core, today)
    if resolved is None:
        resolved = _with_weekday(core, today)
    if resolved is None:
        day_only = _DAY_ONLY.match(core)
        if day_only:
            number = ordinal_to_int(day_only.group(1))
            resolved = _day_of_month(today, number) if number else None
        else:
            resolved = _month_day(core, today)
    return ResolvedDate(resolved, part) if resolved is not None else None
