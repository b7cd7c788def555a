"""Chinese dates, clock times, durations and head counts (assistant/language/zh/readers.py): the table they were
chosen by (assistant/bench/zh_expressions.py), and the English readers handing Chinese spans over."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from assistant.bench.zh_expressions import REFERENCE, ZH_ROWS, ZhRow, ours
from assistant.language.readers import parse_clock, parse_date, parse_duration
from assistant.language.values import Meridiem
from assistant.language.zh.readers import parse_zh_clock, parse_zh_date, zh_number


@pytest.mark.parametrize("row", ZH_ROWS, ids=lambda row: f"{row.kind}:{row.words}")
def test_every_row_of_the_chinese_table_is_read_as_meant(row: ZhRow) -> None:
    assert ours(row) == row.expected


def test_numerals_are_read_by_cn2an_and_junk_is_not_a_number() -> None:
    assert [zh_number(t) for t in ("两", "十", "二十三", "〇", "45")] == [2, 10, 23, 0, 45]
    assert zh_number("点") is None and zh_number("半") is None


def test_a_day_part_fixes_am_pm_and_contradictions_are_not_read() -> None:
    assert parse_zh_clock("晚上九点半") is not None and parse_zh_clock("晚上九点半").meridiem is Meridiem.PM  # type: ignore[union-attr]
    assert parse_zh_date("上午下午", REFERENCE.date()) is None
    assert parse_zh_clock("上午下午三点") is None


def test_the_english_readers_hand_chinese_spans_over() -> None:
    today = date(2026, 12, 2)
    assert parse_date("明天上午", today) == parse_zh_date("明天上午", today)
    assert parse_clock("三点一刻") == parse_zh_clock("三点一刻")
    assert parse_duration("两个钟头") == timedelta(hours=2)
    assert parse_date("tomorrow", today) is not None and parse_duration("an hour") == timedelta(hours=1)
