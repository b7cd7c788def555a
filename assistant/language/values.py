"""What every language's value readers give, so that no reader imports another language's: a clock time with
what was said about am/pm, a resolved date with its day part, and the rule for a bare hour's am/pm.

Durations are `datetime.timedelta` and head counts `int`; they need no type of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from enum import Enum

__all__ = ["Meridiem", "DayPart", "ClockTime", "ResolvedDate", "resolve_meridiem"]


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


@dataclass(frozen=True)
class ResolvedDate:
    day: date
    part: DayPart | None = None  # "tomorrow morning" -> MORNING


def resolve_meridiem(hour: int, morning_hours: range, afternoon_hours: range) -> Meridiem:
    """The meridiem to assume for a bare clock hour (defaults: 8-11 morning, 12 and 1-7 afternoon)."""
    if hour in morning_hours:
        return Meridiem.AM
    if hour in afternoon_hours or hour == 12:
        return Meridiem.PM
    return Meridiem.AM
