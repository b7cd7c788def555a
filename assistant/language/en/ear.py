"""Times as an English speaker says them, for spoken replies: "nine", "nine thirty", "two fifteen p.m."."""

from __future__ import annotations

from datetime import datetime

__all__ = ["ear_clock", "ear_span", "ear_date"]

_ONES = ("", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("", "", "twenty", "thirty", "forty", "fifty")


def _number(n: int) -> str:
    if n < 20:
        return _ONES[n]
    tens, ones = divmod(n, 10)
    return _TENS[tens] + (f"-{_ONES[ones]}" if ones else "")


def _hour_minutes(moment: datetime) -> str:
    if (moment.hour, moment.minute) == (12, 0):
        return "noon"
    if (moment.hour, moment.minute) == (0, 0):
        return "midnight"
    hour = _number(moment.hour % 12 or 12)
    if not moment.minute:
        return hour
    return f"{hour} {'oh ' if moment.minute < 10 else ''}{_number(moment.minute)}"


def _meridiem(moment: datetime) -> str:
    if moment.minute == 0 and moment.hour in (0, 12):
        return ""  # noon and midnight say it already
    return " a.m." if moment.hour < 12 else " p.m."


def ear_clock(moment: datetime) -> str:
    return _hour_minutes(moment) + _meridiem(moment)


def ear_span(start: datetime, end: datetime) -> str:
    """"nine to ten a.m.", "eleven a.m. to one p.m.": the half of the day said once where both share it."""
    same_half = (start.hour < 12) == (end.hour < 12) and end.date() == start.date()
    first = _hour_minutes(start) if same_half else ear_clock(start)
    return f"{first} to {ear_clock(end)}"


def ear_date(moment: datetime) -> str:
    return moment.strftime("on %A, %B ") + str(moment.day)
