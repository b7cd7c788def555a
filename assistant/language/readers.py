"""The value readers, for text in any language: each goes to the reader of the language the text is written in
("tomorrow at nine" to English's, "明天上午九点" to Chinese's). Every reader reads its text in full or gives None.
"""

from __future__ import annotations

from datetime import date, timedelta

from assistant.language.registry import language_of
from assistant.language.values import ClockTime, ResolvedDate

__all__ = ["parse_date", "parse_clock", "parse_duration", "parse_count"]


def parse_date(text: str, today: date) -> ResolvedDate | None:
    """A date phrase as the NLU tagged it; None when it names no day."""
    return language_of(text).read_date(text, today)


def parse_clock(text: str) -> ClockTime | None:
    """One clock time, read in full; None when the text is not one."""
    return language_of(text).read_clock(text)


def parse_duration(text: str) -> timedelta | None:
    return language_of(text).read_duration(text)


def parse_count(text: str) -> int | None:
    """A head count ("six people", "6人"); None when it is not one."""
    return language_of(text).read_count(text)
