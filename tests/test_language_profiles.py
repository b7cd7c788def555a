"""Every language's profile is complete and agrees with the others: the same reply keys with the same fields,
value readers that read their own language, and the text's script choosing the language (issue 32)."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from string import Formatter

import pytest

from assistant.booking.replies import say
from assistant.language import readers
from assistant.language.registry import AUTO, CODES, DEFAULT, LANGUAGES, SESSION_LANGUAGES, get, language_of
from assistant.language.values import ClockTime, Meridiem, ResolvedDate

TODAY = date(2026, 12, 2)  # a Wednesday


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in Formatter().parse(text) if name}


@pytest.mark.parametrize("code", CODES)
def test_each_language_says_every_reply_and_needs_no_field_english_does_not_give(code: str) -> None:
    # (a language may leave a field out: Chinese has no "is"/"are" to agree with the rooms named)
    english, other = DEFAULT.replies, get(code).replies
    assert list(other) == list(english)
    assert {k: _fields(v) - _fields(english[k]) for k, v in other.items()} == {k: set() for k in english}


def test_the_script_chooses_the_language_and_english_takes_any_other_text() -> None:
    assert language_of("book Everest tomorrow at nine").code == "en"
    assert language_of("帮我订明天上午九点的会议室").code == "zh"
    assert language_of("帮我订 Everest 明天下午三点").code == "zh"  # mixed: the Chinese model reads it
    assert language_of("réserve Everest à 9 h").code == DEFAULT.code  # no profile of its own: the default
    assert (*CODES, AUTO.code) == SESSION_LANGUAGES and DEFAULT is LANGUAGES[0]


def test_each_reader_goes_to_the_language_of_its_text() -> None:
    assert readers.parse_date("tomorrow", TODAY) == readers.parse_date("明天", TODAY) == ResolvedDate(date(2026, 12, 3))
    assert readers.parse_clock("9:30 pm") == readers.parse_clock("晚上九点半") == ClockTime(9, 30, Meridiem.PM)
    assert readers.parse_duration("an hour and a half") == readers.parse_duration("一个半小时") == timedelta(hours=1.5)
    assert readers.parse_count("six") == readers.parse_count("六个人") == 6
    assert get("en").read_date("明天", TODAY) is None  # each language's own reader reads its own words only


def test_replies_are_said_in_the_language_asked() -> None:
    assert say(get("en"), "ask.start_time") == "At what time?"
    assert say(get("zh"), "ask.start_time") == "您想订几点？"
    moment = datetime(2026, 12, 4, 15, 15)
    assert (get("en").clock_words(moment), get("zh").clock_words(moment)) == ("3:15 pm", "下午3:15")
    assert (get("en").date_words(moment), get("zh").date_words(moment)) == ("Fri 4 Dec", "12月4日")
