"""Clock-time phrases -> (hour, minute), with what was said about am/pm.

"9", "9 am", "9 a.m.", "nine thirty", "10.30", "14:30", "half past four", "quarter to ten", "noon",
"midnight", "3.45pm", "9 in the morning". No library parses the spoken forms ("half past four", "quarter to
ten"), so this is hand-written; clock arithmetic and time zones are left to datetime/zoneinfo.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from assistant.booking.numbers import word_to_int

__all__ = ["Meridiem", "ClockTime", "parse_clock", "resolve_meridiem", "DayPart", "parse_day_part"]


class Meridiem(Enum):
    AM = "am"
    PM = "pm"


class DayPart(Enum):
    MORNING = "morning"
    AFTERNOON = "afternoon"
    EVENING = "evening"

    @property
    def meridiem(self) -> Meridiem:
        return Meridiem.AM if self is DayPart.MORNING else Meridiem.PM


@dataclass(frozen=True)
class ClockTime:
    hour: int  # 0-23 when `meridiem` is known or the hour is unambiguous (0, 13-23), else 1-12 as said
    minute: int
    meridiem: Meridiem | None  # what was said ("pm", "in the afternoon"); None: not said
    fixed: bool = False  # noon, midnight, 24 h clock: no am/pm question at all

    def to_24h(self, meridiem: Meridiem) -> tuple[int, int]:
        hour = self.hour % 12 + (12 if meridiem is Meridiem.PM else 0)
        return hour, self.minute


_MERIDIEM = re.compile(r"\s*\b(a\.?\s?m\.?|p\.?\s?m\.?)(?=\W|$)|(?<=\d)(am|pm)\b", re.IGNORECASE)
_PART = re.compile(r"\s*\b(?:in the |this |tomorrow |tonight)?(morning|afternoon|evening|night)\b|\s*\btonight\b",
                   re.IGNORECASE)
_FILLER = re.compile(r"\b(at|around|about|o'clock|oclock|ish|sharp)\b|[~,!?]", re.IGNORECASE)


def parse_day_part(text: str) -> DayPart | None:
    lower = text.lower()
    if "tonight" in lower or "evening" in lower or "night" in lower:
        return DayPart.EVENING
    if "afternoon" in lower:
        return DayPart.AFTERNOON
    if "morning" in lower:
        return DayPart.MORNING
    return None


def _meridiem_of(text: str) -> tuple[str, Meridiem | None]:
    match = _MERIDIEM.search(text)
    meridiem: Meridiem | None = None
    if match:
        meridiem = Meridiem.AM if match.group(0).strip().lower().startswith("a") else Meridiem.PM
        text = text[: match.start()] + " " + text[match.end() :]
    part = parse_day_part(text)
    if part is not None:
        meridiem = meridiem or part.meridiem
        text = _PART.sub(" ", text)
    return text, meridiem


def _hour_minute(core: str) -> tuple[int, int] | None:
    core = core.strip().rstrip(".")
    digits = re.fullmatch(r"(\d{1,2})(?:[:.h](\d{2}))?", core)
    if digits:
        return int(digits.group(1)), int(digits.group(2) or 0)
    if re.fullmatch(r"\d{3,4}", core):  # "1430", "930" (recognizers write 24 h times this way)
        return int(core[:-2]), int(core[-2:])
    relative = re.fullmatch(r"(half|quarter|\S+(?: minutes?)?) (past|after|to|before|till) (\S+)", core)
    if relative:
        amount = {"half": 30, "quarter": 15}.get(relative.group(1))
        if amount is None:
            amount = word_to_int(relative.group(1).split()[0])
        hour = word_to_int(relative.group(3))
        if amount is None or hour is None:
            return None
        if relative.group(2) in ("past", "after"):
            return hour, amount
        return (hour - 1) % 24 if hour != 1 else 12, 60 - amount
    words = core.split()
    hour = word_to_int(words[0]) if words else None
    if hour is None:
        return None
    if len(words) == 1:
        return hour, 0
    rest = " ".join(words[1:])
    oh_minutes = words[1] == "oh" and len(words) == 3  # "seven oh five"
    minute = word_to_int(words[2] if oh_minutes else rest)
    return (hour, minute) if minute is not None else None


def parse_clock(text: str) -> ClockTime | None:
    """One clock time; None when the text is not one (e.g. "this afternoon" alone: a day part, no clock)."""
    lower = text.strip().lower()
    if re.fullmatch(r"(12 |twelve )?(noon|midday)", lower) or lower == "12 noon":
        return ClockTime(12, 0, Meridiem.PM, fixed=True)
    if re.fullmatch(r"(12 |twelve )?midnight", lower):
        return ClockTime(0, 0, Meridiem.AM, fixed=True)
    rest, meridiem = _meridiem_of(lower)
    rest = re.sub(r"\s+", " ", _FILLER.sub(" ", rest)).strip()
    parsed = _hour_minute(rest)
    if parsed is None:
        return None
    hour, minute = parsed
    if not (0 <= hour <= 24 and 0 <= minute < 60):
        return None
    if hour == 24:
        hour = 0
    if hour == 0 or hour > 12 or re.fullmatch(r"0\d[:.h]\d\d", rest):  # "14:30", "09:00": a 24 h clock
        return ClockTime(hour, minute, None, fixed=True)  # 24 h clock: no am/pm to guess
    return ClockTime(hour, minute, meridiem)


def resolve_meridiem(hour: int, morning_hours: range, afternoon_hours: range) -> Meridiem:
    """The meridiem to assume for a bare clock hour (defaults: 8-11 morning, 12 and 1-7 afternoon)."""
    if hour in morning_hours:
        return Meridiem.AM
    if hour in afternoon_hours or hour == 12:
        return Meridiem.PM
    return Meridiem.AM
