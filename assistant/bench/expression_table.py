"""The time-expression table: how people say when, each with its reference time and the interval it means.

Written here, by hand, for this product (not taken from any parser's corpus), in the kinds a public corpus of
English time expressions showed we missed: quarter/half past/to, "N minutes to X", "3p", "16h", "half three",
"07:00 PM", "in N days", "a week from D", "the last friday of october", "wednesday of this week", "9/20",
"Fri, Sep 20" and ranges in these forms; plus the DST days and month and year ends.

Every row carries the words as said, the slot texts a perfect tagger would give, and the expected interval, or
None where the product must ask (ambiguous or contradictory words). Date rows and time rows are paired
mechanically into whole requests; a pairing whose start has passed must be asked too (the guard's past check).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

__all__ = ["Expression", "expressions", "REFERENCE"]

BERLIN, NEW_YORK = ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York")
REFERENCE = datetime(2026, 12, 2, 10, 0, tzinfo=BERLIN)  # a Wednesday, mid-morning

# (as said, the date slot's words, the day)
DATES: list[tuple[str, str, str]] = [
    ("today", "today", "2026-12-02"), ("tomorrow", "tomorrow", "2026-12-03"),
    ("the day after tomorrow", "the day after tomorrow", "2026-12-04"),
    ("day after tomorrow", "day after tomorrow", "2026-12-04"), ("on Friday", "Friday", "2026-12-04"),
    ("this Friday", "this Friday", "2026-12-04"), ("next Friday", "next Friday", "2026-12-11"),
    ("Friday next week", "Friday next week", "2026-12-11"), ("on Monday", "Monday", "2026-12-07"),
    ("next monday", "next monday", "2026-12-07"), ("on Wednesday", "Wednesday", "2026-12-09"),
    ("this coming Tuesday", "this coming Tuesday", "2026-12-08"), ("Thursday", "Thursday", "2026-12-03"),
    ("on Saturday", "Saturday", "2026-12-05"), ("on sunday", "sunday", "2026-12-06"),
    ("on December 15th", "December 15th", "2026-12-15"), ("on Dec 15", "Dec 15", "2026-12-15"),
    ("on 15 December", "15 December", "2026-12-15"),
    ("on the 15th of December", "the 15th of December", "2026-12-15"),
    ("on the 10th", "the 10th", "2026-12-10"), ("on the tenth", "the tenth", "2026-12-10"),
    ("on the twenty-first", "the twenty-first", "2026-12-21"), ("on the 1st", "the 1st", "2027-01-01"),
    ("on January 3rd", "January 3rd", "2027-01-03"), ("on Jan 15", "Jan 15", "2027-01-15"),
    ("on March the fifth", "March the fifth", "2027-03-05"),
    ("on Monday, December 7", "Monday, December 7", "2026-12-07"), ("on Mon, Dec 7", "Mon, Dec 7", "2026-12-07"),
    ("on Thursday, December 3rd", "Thursday, December 3rd", "2026-12-03"),
    ("on Sept 20th", "Sept 20th", "2027-09-20"), ("on Sep 20", "Sep 20", "2027-09-20"),
    ("on 9/20", "9/20", "2027-09-20"), ("on 12/15", "12/15", "2026-12-15"),
    ("on 1/4/2027", "1/4/2027", "2027-01-04"),
    ("on December 20, 2027", "December 20, 2027", "2027-12-20"),
    ("on Dec 20th 2027", "Dec 20th 2027", "2027-12-20"),
    ("on Mon, Sep 20", "Mon, Sep 20", "2027-09-20"),
    ("wednesday of next week", "wednesday of next week", "2026-12-09"),
    ("friday of this week", "friday of this week", "2026-12-04"),
    ("thursday of this week", "thursday of this week", "2026-12-03"),
    ("the 20th of next month", "the 20th of next month", "2027-01-20"),
    ("the 3rd of next month", "the 3rd of next month", "2027-01-03"),
    ("the 18th of this month", "the 18th of this month", "2026-12-18"),
    ("on the last friday of december", "the last friday of december", "2026-12-25"),
    ("on the last friday of january", "the last friday of january", "2027-01-29"),
    ("on the first monday of january", "the first monday of january", "2027-01-04"),
    ("on the third tuesday of january", "the third tuesday of january", "2027-01-19"),
    ("on the second wednesday in february", "the second wednesday in february", "2027-02-10"),
    ("last friday of october", "last friday of october", "2027-10-29"),
    ("a week from tomorrow", "a week from tomorrow", "2026-12-10"),
    ("a week from today", "a week from today", "2026-12-09"),
    ("a week from friday", "a week from friday", "2026-12-11"),
    ("two weeks from monday", "two weeks from monday", "2026-12-21"),
    ("in 3 days", "in 3 days", "2026-12-05"), ("in three days", "in three days", "2026-12-05"),
    ("in a week", "in a week", "2026-12-09"), ("in 2 weeks", "in 2 weeks", "2026-12-16"),
    ("in 10 days", "in 10 days", "2026-12-12"), ("in 7 days", "in 7 days", "2026-12-09"),
]

# (as said, slot texts, start "HH:MM", end "HH:MM" or None = the default 30 minutes; "+1" ends the next day)
TIMES: list[tuple[str, dict[str, str], str, str | None]] = [
    ("at 9", {"start_time": "9"}, "09:00", None), ("at 9am", {"start_time": "9am"}, "09:00", None),
    ("at 9 a.m.", {"start_time": "9 a.m."}, "09:00", None), ("at nine", {"start_time": "nine"}, "09:00", None),
    ("at 9:30", {"start_time": "9:30"}, "09:30", None), ("at 2", {"start_time": "2"}, "14:00", None),
    ("at 2pm", {"start_time": "2pm"}, "14:00", None), ("at 3p", {"start_time": "3p"}, "15:00", None),
    ("at 3:15p", {"start_time": "3:15p"}, "15:15", None), ("at 11a", {"start_time": "11a"}, "11:00", None),
    ("at a quarter past 3pm", {"start_time": "a quarter past 3pm"}, "15:15", None),
    ("at quarter past three", {"start_time": "quarter past three"}, "15:15", None),
    ("at half pass four", {"start_time": "half pass four"}, "16:30", None),  # "past" as recognizers hear it
    ("at quarter pass 2", {"start_time": "quarter pass 2"}, "14:15", None),
    ("at half past four", {"start_time": "half past four"}, "16:30", None),
    ("at half three", {"start_time": "half three"}, "15:30", None),
    ("at quarter to ten", {"start_time": "quarter to ten"}, "09:45", None),
    ("at a quarter to 11am", {"start_time": "a quarter to 11am"}, "10:45", None),
    ("at 20 minutes to 2pm", {"start_time": "20 minutes to 2pm"}, "13:40", None),
    ("at ten past nine", {"start_time": "ten past nine"}, "09:10", None),
    ("at twenty to four", {"start_time": "twenty to four"}, "15:40", None),
    ("at 15 to noon", {"start_time": "15 to noon"}, "11:45", None),
    ("at 5 minutes after 2pm", {"start_time": "5 minutes after 2pm"}, "14:05", None),
    ("at noon", {"start_time": "noon"}, "12:00", None), ("at midday", {"start_time": "midday"}, "12:00", None),
    ("at 16h", {"start_time": "16h"}, "16:00", None), ("at 15h30", {"start_time": "15h30"}, "15:30", None),
    ("at 07:00 PM", {"start_time": "07:00 PM"}, "19:00", None),
    ("at 08:30 am", {"start_time": "08:30 am"}, "08:30", None),
    ("at 14:30", {"start_time": "14:30"}, "14:30", None),
    ("at 1400 hours", {"start_time": "1400 hours"}, "14:00", None),
    ("at 4 in the PM", {"start_time": "4 in the PM"}, "16:00", None),
    ("at 9 in the morning", {"start_time": "9 in the morning"}, "09:00", None),
    ("at three in the afternoon", {"start_time": "three in the afternoon"}, "15:00", None),
    ("at 8 in the evening", {"start_time": "8 in the evening"}, "20:00", None),
    ("at 11:45 a.m.", {"start_time": "11:45 a.m."}, "11:45", None),
    ("at 12:30", {"start_time": "12:30"}, "12:30", None),
    ("at 3:45pm", {"start_time": "3:45pm"}, "15:45", None), ("at 10.30", {"start_time": "10.30"}, "10:30", None),
    ("at seven oh five pm", {"start_time": "seven oh five pm"}, "19:05", None),
    ("at nine thirty", {"start_time": "nine thirty"}, "09:30", None),
    ("at eleven forty-five", {"start_time": "eleven forty-five"}, "11:45", None),
    ("at 5 o'clock", {"start_time": "5 o'clock"}, "17:00", None), ("at 6pm", {"start_time": "6pm"}, "18:00", None),
    ("at 7", {"start_time": "7"}, "19:00", None), ("at 10 AM", {"start_time": "10 AM"}, "10:00", None),
    ("from 9 to 11", {"start_time": "9", "end_time": "11"}, "09:00", "11:00"),
    ("from 2 to 3pm", {"start_time": "2", "end_time": "3pm"}, "14:00", "15:00"),
    ("9a to 11a", {"start_time": "9a", "end_time": "11a"}, "09:00", "11:00"),
    ("15h30-18h", {"start_time": "15h30", "end_time": "18h"}, "15:30", "18:00"),
    ("between 1 and 2 pm", {"start_time": "1", "end_time": "2 pm"}, "13:00", "14:00"),
    ("from 10 until noon", {"start_time": "10", "end_time": "noon"}, "10:00", "12:00"),
    ("from 11 to 1", {"start_time": "11", "end_time": "1"}, "11:00", "13:00"),
    ("from 9 to 5pm", {"start_time": "9", "end_time": "5pm"}, "09:00", "17:00"),
    ("at 10 for an hour", {"start_time": "10", "duration": "an hour"}, "10:00", "11:00"),
    ("at 2 for 45 minutes", {"start_time": "2", "duration": "45 minutes"}, "14:00", "14:45"),
    ("at 3pm for an hour and a half", {"start_time": "3pm", "duration": "an hour and a half"}, "15:00", "16:30"),
    ("at 9 for 1h30", {"start_time": "9", "duration": "1h30"}, "09:00", "10:30"),
    ("at 4 for a quarter of an hour", {"start_time": "4", "duration": "a quarter of an hour"}, "16:00", "16:15"),
    ("from 10pm to midnight", {"start_time": "10pm", "end_time": "midnight"}, "22:00", "+1 00:00"),
    ("2-3pm", {"start_time": "2", "end_time": "3pm"}, "14:00", "15:00"),
    ("10:30-11:15", {"start_time": "10:30", "end_time": "11:15"}, "10:30", "11:15"),
    ("from 9:30 am to 10:15 am", {"start_time": "9:30 am", "end_time": "10:15 am"}, "09:30", "10:15"),
    ("at 1 for two hours", {"start_time": "1", "duration": "two hours"}, "13:00", "15:00"),
    ("from a quarter past 2 to 3", {"start_time": "a quarter past 2", "end_time": "3"}, "14:15", "15:00"),
]

# Said with no date: from the reference time (10:00). (as said, slot texts, start, end)
FROM_NOW: list[tuple[str, dict[str, str], str, str | None]] = [
    ("in one hour", {"start_time": "in one hour"}, "2026-12-02T11:00", None),
    ("in an hour", {"start_time": "in an hour"}, "2026-12-02T11:00", None),
    ("in 30 minutes", {"start_time": "in 30 minutes"}, "2026-12-02T10:30", None),
    ("in half an hour", {"start_time": "in half an hour"}, "2026-12-02T10:30", None),
    ("in two hours", {"start_time": "in two hours"}, "2026-12-02T12:00", None),
    ("in 2 hours for an hour", {"start_time": "in 2 hours", "duration": "an hour"}, "2026-12-02T12:00",
     "2026-12-02T13:00"),
    ("in 7 days at 5pm", {"date": "in 7 days", "start_time": "5pm"}, "2026-12-09T17:00", None),
    ("in 3 days at 2", {"date": "in 3 days", "start_time": "2"}, "2026-12-05T14:00", None),
]

# Words that must never become a command: asked, whatever the date. (as said, slot texts)
MUST_ASK: list[tuple[str, dict[str, str]]] = [
    ("tomorrow at a", {"date": "tomorrow", "start_time": "a"}),
    ("on Fri, Sep 20 at 10", {"date": "Fri, Sep 20", "start_time": "10"}),
    ("in october at 10", {"date": "october", "start_time": "10"}),
    ("next week at 10", {"date": "next week", "start_time": "10"}),
    ("tomorrow at quarter to 12 pm", {"date": "tomorrow", "start_time": "quarter to 12 pm"}),
    ("tomorrow at 3 to 4 and 5", {"date": "tomorrow", "start_time": "3 to 4 and 5"}),
    ("tomorrow at 14:00 pm", {"date": "tomorrow", "start_time": "14:00 pm"}),
    ("tomorrow at 9 pm in the morning", {"date": "tomorrow", "start_time": "9 pm in the morning"}),
    ("tomorrow from 3 to 2", {"date": "tomorrow", "start_time": "3", "end_time": "2"}),
    ("tomorrow at 11pm for 2 hours", {"date": "tomorrow", "start_time": "11pm", "duration": "2 hours"}),
    ("tomorrow from 8am to 8pm", {"date": "tomorrow", "start_time": "8am", "end_time": "8pm"}),
    ("tomorrow at 3 for a while", {"date": "tomorrow", "start_time": "3", "duration": "a while"}),
    ("tomorrow at 3 for an hour maybe two",
     {"date": "tomorrow", "start_time": "3", "duration": "an hour maybe two"}),
    ("today at 9am", {"date": "today", "start_time": "9am"}),
    ("today at 8", {"date": "today", "start_time": "8"}),
    ("yesterday at 3", {"date": "yesterday", "start_time": "3"}),
    ("on the 31st of november at 3", {"date": "the 31st of november", "start_time": "3"}),
    ("on the fifth monday of february at 3", {"date": "the fifth monday of february", "start_time": "3"}),
    ("on December 1, 2025 at 3", {"date": "December 1, 2025", "start_time": "3"}),
    ("tomorrow at the", {"date": "tomorrow", "start_time": "the"}),
    ("the day at 3", {"date": "the", "start_time": "3"}),
    ("tomorrow at 25:00", {"date": "tomorrow", "start_time": "25:00"}),
    ("tomorrow in an hour", {"date": "tomorrow", "start_time": "in an hour"}),
]

# Taggings that cut one time in pieces: the normalizer and guard must ask (the words themselves are fine and have
# rows above; these rows are for the normalizer alone, not for the model).
MISTAGGED: list[tuple[str, tuple[tuple[str, str], ...]]] = [
    ("tomorrow at 15 to noon", (("date", "tomorrow"), ("start_time", "15"), ("end_time", "noon"))),
    ("tomorrow at 15 to noon", (("date", "tomorrow"), ("start_time", "15"), ("start_time", "noon"))),
    ("tomorrow at 20 minutes to 2pm", (("date", "tomorrow"), ("start_time", "20 minutes"), ("end_time", "2pm"))),
    ("tomorrow at a quarter past 3pm", (("date", "tomorrow"), ("start_time", "a"), ("end_time", "quarter past 3pm"))),
    ("on Fri, Sep 20 at 10", (("date", "Fri"), ("start_time", "Sep 20 at 10"))),
    ("tomorrow from 20 minutes to 2pm", (("date", "tomorrow"), ("start_time", "20"), ("end_time", "2pm"))),
]

# The DST days and month and year ends: (reference, as said, slot texts, start ISO, end ISO)
EDGES: list[tuple[datetime, str, dict[str, str], str, str]] = [
    (datetime(2026, 3, 28, 10, 0, tzinfo=BERLIN), "tomorrow at 9 am", {"date": "tomorrow", "start_time": "9 am"},
     "2026-03-29T09:00:00+02:00", "2026-03-29T09:30:00+02:00"),
    (datetime(2026, 3, 28, 10, 0, tzinfo=BERLIN), "tomorrow at 1:30 am for an hour",
     {"date": "tomorrow", "start_time": "1:30 am", "duration": "an hour"},
     "2026-03-29T01:30:00+01:00", "2026-03-29T03:30:00+02:00"),
    (datetime(2026, 10, 24, 10, 0, tzinfo=BERLIN), "tomorrow at 1:30 am for two hours",
     {"date": "tomorrow", "start_time": "1:30 am", "duration": "two hours"},
     "2026-10-25T01:30:00+02:00", "2026-10-25T02:30:00+01:00"),
    (datetime(2026, 10, 31, 10, 0, tzinfo=NEW_YORK), "tomorrow from 10 to 11",
     {"date": "tomorrow", "start_time": "10", "end_time": "11"},
     "2026-11-01T10:00:00-05:00", "2026-11-01T11:00:00-05:00"),
    (datetime(2026, 3, 7, 10, 0, tzinfo=NEW_YORK), "tomorrow at a quarter past 9am",
     {"date": "tomorrow", "start_time": "a quarter past 9am"},
     "2026-03-08T09:15:00-04:00", "2026-03-08T09:45:00-04:00"),
    (datetime(2026, 1, 31, 10, 0, tzinfo=BERLIN), "tomorrow at 3p", {"date": "tomorrow", "start_time": "3p"},
     "2026-02-01T15:00:00+01:00", "2026-02-01T15:30:00+01:00"),
    (datetime(2026, 1, 31, 10, 0, tzinfo=BERLIN), "on the 31st at 2pm", {"date": "the 31st", "start_time": "2pm"},
     "2026-01-31T14:00:00+01:00", "2026-01-31T14:30:00+01:00"),
    (datetime(2026, 2, 1, 10, 0, tzinfo=BERLIN), "on the 31st at 2pm", {"date": "the 31st", "start_time": "2pm"},
     "2026-03-31T14:00:00+02:00", "2026-03-31T14:30:00+02:00"),
    (datetime(2026, 12, 31, 10, 0, tzinfo=BERLIN), "a week from tomorrow at 16h",
     {"date": "a week from tomorrow", "start_time": "16h"},
     "2027-01-08T16:00:00+01:00", "2027-01-08T16:30:00+01:00"),
    (datetime(2026, 12, 31, 10, 0, tzinfo=BERLIN), "the 20th of next month at half three",
     {"date": "the 20th of next month", "start_time": "half three"},
     "2027-01-20T15:30:00+01:00", "2027-01-20T16:00:00+01:00"),
    (datetime(2028, 2, 28, 10, 0, tzinfo=BERLIN), "tomorrow at 07:00 PM",
     {"date": "tomorrow", "start_time": "07:00 PM"},
     "2028-02-29T19:00:00+01:00", "2028-02-29T19:30:00+01:00"),
    (datetime(2026, 12, 6, 10, 0, tzinfo=BERLIN), "wednesday of this week at 10am",
     {"date": "wednesday of this week", "start_time": "10am"},
     "2026-12-02T10:00:00+01:00", ""),  # a Sunday: this week's Wednesday has passed -> asked
]


@dataclass(frozen=True)
class Expression:
    said: str  # the date and time words, as in "book Everest <said>"
    slots: tuple[tuple[str, str], ...]  # what a perfect tagger gives
    now: datetime
    start: str | None  # ISO; None: must be asked
    end: str | None

    @property
    def request(self) -> str:
        return f"book Everest {self.said}"


def _at(day: str, hhmm: str, zone: ZoneInfo) -> datetime:
    next_day = hhmm.startswith("+1 ")
    clock = time.fromisoformat(hhmm.removeprefix("+1 "))
    return datetime.combine(date.fromisoformat(day) + timedelta(days=next_day), clock, zone)


def _paired() -> list[Expression]:
    """Each date with five time rows, in rotation (every time row meets several dates)."""
    out = []
    for i, (said_date, date_words, day) in enumerate(DATES):
        for k in range(5):
            said_time, time_slots, start, end = TIMES[(i * 5 + k * 7) % len(TIMES)]
            begin = _at(day, start, BERLIN)
            finish = _at(day, end, BERLIN) if end else begin + timedelta(minutes=30)
            past = begin < REFERENCE
            said = f"{said_date} {said_time}" if k % 2 == 0 else f"{said_time} {said_date}"
            slots = (("date", date_words), *time_slots.items())
            out.append(Expression(said, slots, REFERENCE, None if past else begin.isoformat(),
                                  None if past else finish.isoformat()))
    return out


def expressions(mistagged: bool = False) -> list[Expression]:
    """Every row; `mistagged` adds the rows of MISTAGGED (for tests of the normalizer, not of the model)."""
    rows = _paired()
    for said, slots, start, end in FROM_NOW:
        begin = datetime.fromisoformat(start).replace(tzinfo=BERLIN)
        finish = datetime.fromisoformat(end).replace(tzinfo=BERLIN) if end else begin + timedelta(minutes=30)
        rows.append(Expression(said, tuple(slots.items()), REFERENCE, begin.isoformat(), finish.isoformat()))
    rows += [Expression(said, tuple(slots.items()), REFERENCE, None, None) for said, slots in MUST_ASK]
    if mistagged:
        rows += [Expression(said, slots, REFERENCE, None, None) for said, slots in MISTAGGED]
    for now, said, slots, start, end in EDGES:
        asked = not end
        rows.append(Expression(said, tuple(slots.items()), now, None if asked else start, None if asked else end))
    return rows
