"""What a result says aloud: short sentences written for the ear, in the request's language.

A command is said as what it did ("Booked Everest tomorrow, nine to ten a.m."); a question, an answer or a refusal
is its own sentence with the screen's "09:00-10:00" and "3:15 pm" said as times are said ("nine to ten a.m.",
"three fifteen p.m."). The words live in each language's profile (`spoken.*` replies, `ear_clock`, `ear_span`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime

from assistant.booking.replies import day_words, say
from assistant.booking.results import Answer, Clarify, Command, Rejected, Result
from assistant.language.profile import Language

__all__ = ["reply_text", "for_the_ear"]

# "09:00-10:00", "9:30 am", "14:30": the screen's clock times; Chinese "下午3:15" keeps its period word before it
_SPAN = re.compile(r"\b(\d{1,2}):(\d{2})\s*[-–]\s*(\d{1,2}):(\d{2})\b")
_CLOCK = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?(?![a-z])|\b(\d{1,2}):(\d{2})\b", re.IGNORECASE)


def _at(today: date, hour: int, minute: int) -> datetime:
    return datetime(today.year, today.month, today.day, hour % 24, minute % 60)


def for_the_ear(text: str, language: Language, today: date) -> str:
    """The screen's times said as times are said; the rest as written."""
    ear_span, ear_clock = language.ear_span, language.ear_clock
    if ear_span is None or ear_clock is None:
        return text

    def span(match: re.Match[str]) -> str:
        h1, m1, h2, m2 = (int(g) for g in match.groups())
        return ear_span(_at(today, h1, m1), _at(today, h2, m2))

    def clock(match: re.Match[str]) -> str:
        if match.group(3):  # "3:15 pm"
            hour = int(match.group(1)) % 12 + (12 if match.group(3).lower() == "p" else 0)
            return ear_clock(_at(today, hour, int(match.group(2) or 0)))
        return ear_clock(_at(today, int(match.group(4)), int(match.group(5))))

    return _CLOCK.sub(clock, _SPAN.sub(span, text)).replace("..", ".")  # "ten a.m.." ends its sentence once


def _day(language: Language, moment: datetime, today: date) -> str:
    if language.ear_date is not None and (moment.date() - today).days not in (0, 1):
        return language.ear_date(moment)
    return day_words(language, moment, today)


def reply_text(result: Result, language: Language, today: date, room_name: Callable[[str], str]) -> str:
    """The reply to say for a result. `room_name`: a room's key -> its name as the language says it."""
    if isinstance(result, Command):
        if not result.executable or not result.committed:
            return for_the_ear(say(language, "spoken.not_done", reason=result.reason or "not done"), language, today)
        start, end = result.start, result.end
        if result.new_start is not None and result.new_end is not None:
            start, end = result.new_start, result.new_end
        span = language.ear_span(start, end) if language.ear_span is not None else language.span_words(start, end)
        said = say(language, f"spoken.{result.action}", room=room_name(result.room),
                   day=_day(language, start, today), span=span)
        return said.replace("..", ".")  # "... ten a.m." ends its sentence once
    if isinstance(result, Clarify):
        return for_the_ear(result.question, language, today)
    if isinstance(result, Answer):
        return for_the_ear(result.text, language, today)
    assert isinstance(result, Rejected)
    reason = result.reason
    return for_the_ear(reason[:1].upper() + reason[1:], language, today)
