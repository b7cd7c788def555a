"""Table-driven normalization: date, clock, duration and interval phrases against exact expected values.

Reference days: Wed 2026-12-02 (the product's example), month and year ends, a leap day, a Sunday, and the
DST change days of Europe/Berlin (2026-03-29, 2026-10-25) and America/New_York (2026-03-08, 2026-11-01).
"""

from datetime import date, timedelta
from zoneinfo import ZoneInfo

import pytest

from assistant.booking.interval import Interval, Unresolved, resolve_interval
from assistant.language.readers import parse_clock, parse_date, parse_duration
from assistant.language.values import DayPart, Meridiem

WED = date(2026, 12, 2)
D = date

DATES = [
    (WED, "today", D(2026, 12, 2)), (WED, "tomorrow", D(2026, 12, 3)), (WED, "the day after tomorrow", D(2026, 12, 4)),
    (WED, "day after tomorrow", D(2026, 12, 4)), (WED, "Monday", D(2026, 12, 7)), (WED, "tuesday", D(2026, 12, 8)),
    (WED, "Wednesday", D(2026, 12, 9)), (WED, "thursday", D(2026, 12, 3)), (WED, "Friday", D(2026, 12, 4)),
    (WED, "saturday", D(2026, 12, 5)), (WED, "sunday", D(2026, 12, 6)), (WED, "this Friday", D(2026, 12, 4)),
    (WED, "this wednesday", D(2026, 12, 9)), (WED, "this monday", D(2026, 12, 7)),
    (WED, "next Wednesday", D(2026, 12, 9)), (WED, "next Monday", D(2026, 12, 7)),
    (WED, "next friday", D(2026, 12, 11)),
    (WED, "next Sunday", D(2026, 12, 13)), (WED, "next thursday", D(2026, 12, 10)),
    (WED, "Friday next week", D(2026, 12, 11)), (WED, "coming Friday", D(2026, 12, 4)),
    (WED, "on the 10th", D(2026, 12, 10)), (WED, "the tenth", D(2026, 12, 10)), (WED, "the 2nd", D(2026, 12, 2)),
    (WED, "the 1st", D(2027, 1, 1)), (WED, "the twenty-first", D(2026, 12, 21)),
    (WED, "December 15th", D(2026, 12, 15)), (WED, "Dec 15", D(2026, 12, 15)), (WED, "15 December", D(2026, 12, 15)),
    (WED, "the 15th of December", D(2026, 12, 15)), (WED, "Friday the fourth", D(2026, 12, 4)),
    (WED, "Monday, December 7", D(2026, 12, 7)), (WED, "monday december 7th", D(2026, 12, 7)),
    (WED, "December 21", D(2026, 12, 21)), (WED, "December 1", D(2027, 12, 1)), (WED, "January 3rd", D(2027, 1, 3)),
    (WED, "Jan 15", D(2027, 1, 15)), (WED, "March the fifth", D(2027, 3, 5)), (WED, "the 31st", D(2026, 12, 31)),
    (WED, "tomorrow morning", D(2026, 12, 3)), (WED, "this afternoon", D(2026, 12, 2)),
    (WED, "tonight", D(2026, 12, 2)),
    (WED, "Friday afternoon", D(2026, 12, 4)),
    # the "at" of a time taken along, or heard as "yet" before a pause ("on Monday at ... nine")
    (WED, "Monday at", D(2026, 12, 7)), (WED, "Monday yet.", D(2026, 12, 7)), (WED, "the 10th at", D(2026, 12, 10)),
    # month end
    (D(2026, 1, 31), "tomorrow", D(2026, 2, 1)), (D(2026, 1, 31), "the day after tomorrow", D(2026, 2, 2)),
    (D(2026, 1, 31), "the 31st", D(2026, 1, 31)), (D(2026, 2, 1), "the 31st", D(2026, 3, 31)),
    (D(2026, 1, 31), "Monday", D(2026, 2, 2)), (D(2026, 1, 31), "next Monday", D(2026, 2, 2)),
    (D(2026, 4, 30), "the 30th", D(2026, 4, 30)), (D(2026, 4, 30), "the 1st", D(2026, 5, 1)),
    # year end
    (D(2026, 12, 31), "tomorrow", D(2027, 1, 1)), (D(2026, 12, 31), "the day after tomorrow", D(2027, 1, 2)),
    (D(2026, 12, 31), "Friday", D(2027, 1, 1)), (D(2026, 12, 31), "next Friday", D(2027, 1, 8)),
    (D(2026, 12, 31), "the 2nd", D(2027, 1, 2)), (D(2026, 12, 31), "January 5th", D(2027, 1, 5)),
    (D(2026, 12, 31), "December 31", D(2026, 12, 31)),
    # leap day, Sunday
    (D(2028, 2, 28), "tomorrow", D(2028, 2, 29)), (D(2026, 12, 6), "next Monday", D(2026, 12, 7)),
    (D(2026, 12, 6), "Sunday", D(2026, 12, 13)), (D(2026, 12, 6), "next Sunday", D(2026, 12, 13)),
]


@pytest.mark.parametrize(("today", "text", "expected"), DATES)
def test_dates(today: date, text: str, expected: date) -> None:
    resolved = parse_date(text, today)
    assert resolved is not None and resolved.day == expected


def test_day_parts_ride_on_dates() -> None:
    assert parse_date("tomorrow morning", WED).part is DayPart.MORNING  # type: ignore[union-attr]
    assert parse_date("this afternoon", WED).part is DayPart.AFTERNOON  # type: ignore[union-attr]
    assert parse_date("tonight", WED).part is DayPart.EVENING  # type: ignore[union-attr]
    assert parse_date("blah", WED) is None and parse_date("", WED) is not None


AM, PM = Meridiem.AM, Meridiem.PM
CLOCKS = [
    ("9", 9, 0, None), ("9 am", 9, 0, AM), ("9 a.m.", 9, 0, AM), ("9 AM", 9, 0, AM), ("9am", 9, 0, AM),
    ("nine thirty", 9, 30, None), ("10.30", 10, 30, None), ("10:30", 10, 30, None), ("14:30", 14, 30, None),
    ("half past four", 4, 30, None), ("quarter to ten", 9, 45, None), ("quarter past two", 2, 15, None),
    ("noon", 12, 0, PM), ("midnight", 0, 0, AM), ("12 noon", 12, 0, PM), ("3.45pm", 3, 45, PM),
    ("3:45 p.m.", 3, 45, PM), ("9 in the morning", 9, 0, AM), ("three in the afternoon", 3, 0, PM),
    ("eleven forty-five a.m.", 11, 45, AM), ("seven oh five", 7, 5, None), ("nine o'clock", 9, 0, None),
    ("at around 3", 3, 0, None), ("quarter to one", 12, 45, None), ("1400", 14, 0, None),
    ("twelve thirty", 12, 30, None),
]


@pytest.mark.parametrize(("text", "hour", "minute", "meridiem"), CLOCKS)
def test_clock_times(text: str, hour: int, minute: int, meridiem: Meridiem | None) -> None:
    clock = parse_clock(text)
    assert clock is not None
    assert (clock.hour, clock.minute, clock.meridiem) == (hour, minute, meridiem)


@pytest.mark.parametrize("text", ["this afternoon", "soon", "", "25:00", "9:75"])
def test_not_clock_times(text: str) -> None:
    assert parse_clock(text) is None


DURATIONS = [
    ("45 minutes", 45), ("for 45 minutes", 45), ("an hour and a half", 90), ("half an hour", 30),
    ("for two hours", 120), ("1.5 hours", 90), ("90 min", 90), ("2h", 120), ("a couple of hours", 120),
    ("one and a half hours", 90), ("an hour and fifteen minutes", 75), ("30 minute", 30), ("one-hour", 60),
    ("two and a half hours", 150), ("an hour", 60), ("a half hour", 30), ("25 mins", 25), ("forty-five minute", 45),
]


@pytest.mark.parametrize(("text", "minutes"), DURATIONS)
def test_durations(text: str, minutes: int) -> None:
    assert parse_duration(text) == timedelta(minutes=minutes)


BERLIN, NEW_YORK = ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York")
INTERVALS = [
    (D(2026, 12, 7), BERLIN, ("9 am", None, "two hours"), "2026-12-07T09:00:00+01:00", "2026-12-07T11:00:00+01:00"),
    (D(2026, 12, 7), BERLIN, ("2", "3 pm", None), "2026-12-07T14:00:00+01:00", "2026-12-07T15:00:00+01:00"),
    (D(2026, 12, 7), BERLIN, ("1", "2 pm", None), "2026-12-07T13:00:00+01:00", "2026-12-07T14:00:00+01:00"),
    (D(2026, 12, 7), BERLIN, ("11", "1 pm", None), "2026-12-07T11:00:00+01:00", "2026-12-07T13:00:00+01:00"),
    (D(2026, 12, 7), BERLIN, ("2 pm", "3", None), "2026-12-07T14:00:00+01:00", "2026-12-07T15:00:00+01:00"),
    (D(2026, 12, 7), BERLIN, ("10", "noon", None), "2026-12-07T10:00:00+01:00", "2026-12-07T12:00:00+01:00"),
    (D(2026, 12, 7), BERLIN, ("10", "11", None), "2026-12-07T10:00:00+01:00", "2026-12-07T11:00:00+01:00"),
    (D(2026, 12, 7), BERLIN, ("3.45pm", "5pm", None), "2026-12-07T15:45:00+01:00", "2026-12-07T17:00:00+01:00"),
    (D(2026, 12, 7), BERLIN, ("10 pm", "midnight", None), "2026-12-07T22:00:00+01:00", "2026-12-08T00:00:00+01:00"),
    (D(2026, 12, 7), BERLIN, ("half past four", None, "30 minutes"), "2026-12-07T16:30:00+01:00",
     "2026-12-07T17:00:00+01:00"),
    (D(2026, 12, 7), BERLIN, ("9", None, None), "2026-12-07T09:00:00+01:00", "2026-12-07T09:30:00+01:00"),
    # DST: Berlin springs forward 2026-03-29 02:00 -> 03:00 and falls back 2026-10-25 03:00 -> 02:00
    (D(2026, 3, 28), BERLIN, ("9 am", None, None), "2026-03-28T09:00:00+01:00", "2026-03-28T09:30:00+01:00"),
    (D(2026, 3, 29), BERLIN, ("9 am", None, None), "2026-03-29T09:00:00+02:00", "2026-03-29T09:30:00+02:00"),
    (D(2026, 3, 29), BERLIN, ("1:30 am", None, "an hour"), "2026-03-29T01:30:00+01:00", "2026-03-29T03:30:00+02:00"),
    (D(2026, 3, 29), BERLIN, ("2:30 am", None, "an hour"), "2026-03-29T03:30:00+02:00", "2026-03-29T04:30:00+02:00"),
    (D(2026, 10, 24), BERLIN, ("9 am", None, None), "2026-10-24T09:00:00+02:00", "2026-10-24T09:30:00+02:00"),
    (D(2026, 10, 25), BERLIN, ("9 am", None, None), "2026-10-25T09:00:00+01:00", "2026-10-25T09:30:00+01:00"),
    (D(2026, 10, 25), BERLIN, ("1:30 am", None, "two hours"), "2026-10-25T01:30:00+02:00",
     "2026-10-25T02:30:00+01:00"),
    # DST: New York springs forward 2026-03-08 and falls back 2026-11-01
    (D(2026, 3, 7), NEW_YORK, ("9 am", None, None), "2026-03-07T09:00:00-05:00", "2026-03-07T09:30:00-05:00"),
    (D(2026, 3, 8), NEW_YORK, ("9 am", None, None), "2026-03-08T09:00:00-04:00", "2026-03-08T09:30:00-04:00"),
    (D(2026, 10, 31), NEW_YORK, ("10", "11", None), "2026-10-31T10:00:00-04:00", "2026-10-31T11:00:00-04:00"),
    (D(2026, 11, 1), NEW_YORK, ("10", "11", None), "2026-11-01T10:00:00-05:00", "2026-11-01T11:00:00-05:00"),
]


@pytest.mark.parametrize(("day", "tz", "texts", "start", "end"), INTERVALS)
def test_intervals(day: date, tz: ZoneInfo, texts: tuple[str, str | None, str | None], start: str, end: str) -> None:
    interval = resolve_interval(day, tz, *texts)
    assert isinstance(interval, Interval), interval
    assert (interval.start.isoformat(), interval.end.isoformat()) == (start, end)


def test_assumptions_are_said() -> None:
    interval = resolve_interval(WED, BERLIN, "9")
    assert isinstance(interval, Interval)
    assert interval.assumptions == ("start time '9' taken as 09:00 (no am/pm said)",
                                    "no end or duration said: 30 minutes")
    said = resolve_interval(WED, BERLIN, "9 am", None, "an hour")
    assert isinstance(said, Interval) and said.assumptions == ()


def test_day_part_decides_am_pm() -> None:
    interval = resolve_interval(WED, BERLIN, "8", part=DayPart.EVENING)
    assert isinstance(interval, Interval) and interval.start.hour == 20 and len(interval.assumptions) == 1


def test_missing_or_unreadable() -> None:
    assert resolve_interval(WED, BERLIN, None) == Unresolved(("start_time",), "no start time")
    assert isinstance(resolve_interval(WED, BERLIN, "9", None, "for a while"), Unresolved)


@pytest.mark.parametrize(("said", "start", "end"), [
    ("between 1 and 2 pm", "13:00", "14:00"), ("15h30-18h", "15:30", "18:00"), ("9a to 11a", "09:00", "11:00"),
    ("from 10 until noon", "10:00", "12:00"),
])
def test_a_range_tagged_as_one_span_is_split(said: str, start: str, end: str) -> None:
    interval = resolve_interval(D(2026, 12, 3), BERLIN, said)
    assert isinstance(interval, Interval), interval
    assert (interval.start.strftime("%H:%M"), interval.end.strftime("%H:%M")) == (start, end)


def test_from_now_is_to_the_minute_and_across_dst() -> None:
    from datetime import datetime

    from assistant.booking.interval import from_now

    before_fall_back = datetime(2026, 10, 25, 1, 40, 37, tzinfo=BERLIN)  # +02:00; at 03:00 clocks go to 02:00
    assert from_now("in an hour", before_fall_back).isoformat() == "2026-10-25T02:40:00+02:00"  # type: ignore[union-attr]
    assert from_now("in two hours", before_fall_back).isoformat() == "2026-10-25T02:40:00+01:00"  # type: ignore[union-attr]
    assert from_now("an hour", before_fall_back) is None and from_now("in a while", before_fall_back) is None
