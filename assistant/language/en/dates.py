"""Date phrases -> calendar dates, relative to today.

Relative forms (today, tomorrow, the day after tomorrow, weekdays with this/next, "wednesday of this week",
"in 3 days", "a week from tomorrow", "the 20th of next month", "the last friday of october") are hand-written:
dateparser keeps the current time of day for "tomorrow" and fails on "the day after tomorrow", and "next Friday"
must follow the product's rule. Month-and-day forms ("December 15th", "Sept 20", "15 December", "December 20,
2027") go to dateutil's parser, which must place every word; "9/20" is month/day, as in the US.

Rules: a bare weekday or "this <weekday>" is its next occurrence after today; "next <weekday>" (and
"<weekday> next week") is that weekday in the following Monday-to-Sunday week; a date without a year that has
passed this year is next year's; a day without a month that has passed this month is next month's. A weekday
said with a date must be that date's weekday ("Fri, Sep 20" when the 20th is a Monday is not read: it is asked).
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from assistant.language.en.clock import parse_day_part
from assistant.language.en.numbers import ordinal_to_int, word_to_int
from assistant.language.values import ResolvedDate

__all__ = ["parse_date", "WEEKDAYS"]

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_RE = re.compile(r"\b(mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|nesday|rsday|urday|sday)?\b")
_WEEKDAY_WORD = r"(mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|nesday|rsday|urday|sday)?"
_PARTS = re.compile(r"\b(morning|afternoon|evening|night|tonight)\b")
_ORDINAL_WORDS = (r"(?:(?:twenty|thirty)[-\s]?)?(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)|tenth|"
                  r"eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|"
                  r"twentieth|thirtieth|\d{1,2}(?:st|nd|rd|th)?")
_DAY_ONLY = re.compile(rf"^(?:the )?({_ORDINAL_WORDS})$")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


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
    # "Monday at" when the tagger took the "at" of the time along; "Monday yet": tiny.en hears an "at" followed
    # by a pause ("book Matterhorn on Monday at ... nine") as "yet" (the pause corpus, tests/data/pauses)
    text = re.sub(r"\s(at|yet)\s*$", " ", text)
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
    if rest in ("this week", "week"):  # "wednesday of this week": may be today or already past (the guard asks)
        return today - timedelta(days=today.weekday()) + timedelta(days=weekday)
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
    said = _month_day(rest, today) or _slashed(rest, today)
    if said is None or said.weekday() != weekday:
        return None  # "Fri, Sep 20" when the 20th is a Monday: which one was meant is asked, not guessed
    return said


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
    if not re.search(r"\b\d{1,2}\b", numeric):
        return None  # "october" alone names no day (dateutil would say the 1st)
    from dateutil import parser as dateutil_parser  # on first use: the language registry stays stdlib-only

    try:
        default = datetime.combine(today.replace(day=1), time())  # unsaid fields: this month, this year
        parsed_at, skipped = dateutil_parser.parse(numeric, default=default, fuzzy_with_tokens=True)
    except (ValueError, OverflowError):
        return None
    if any(re.sub(r"\b(the|in|day)\b", "", token).strip() for token in skipped):
        return None  # words dateutil could not place ("the 20th next month"): not read, rather than half read
    parsed: date = parsed_at.date()
    if re.search(r"\b\d{4}\b", numeric):
        return parsed
    if parsed < today:  # no year said and the date has passed: next year's
        try:
            return parsed.replace(year=parsed.year + 1)
        except ValueError:  # 29 February
            return None
    return parsed


_COUNT = r"(a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d{1,3})"
_IN_DAYS = re.compile(rf"^in {_COUNT} (days?|weeks?)$")
_FROM_DAY = re.compile(rf"^{_COUNT} (days?|weeks?) (?:from|after) (.+)$")
_NTH = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3, "fifth": 4,
        "5th": 4, "last": -1}
_NTH_WEEKDAY = re.compile(rf"^(?:the )?({'|'.join(_NTH)}) {_WEEKDAY_WORD}(?: in)? ([a-z]+)(?: (\d{{4}}))?$")
_OF_MONTH = re.compile(rf"^(?:the )?({_ORDINAL_WORDS}) (this|next) month$")
_SLASHED = re.compile(r"^(\d{1,2})/(\d{1,2})(?:/(\d{2}|\d{4}))?$")


def _days(count: str, unit: str) -> int:
    n = 1 if count in ("a", "an") else word_to_int(count) or 0
    return n * (7 if unit.startswith("week") else 1)


def _offset(text: str, today: date) -> date | None:
    """'in 3 days', 'in a week', 'a week from tomorrow', 'two weeks from friday'."""
    within = _IN_DAYS.match(text)
    if within:
        return today + timedelta(days=_days(*within.groups()))
    after = _FROM_DAY.match(text)
    if after:
        base = _resolve(after.group(3), today)
        return base + timedelta(days=_days(after.group(1), after.group(2))) if base else None
    return None


def _month_number(word: str) -> int | None:
    return _MONTHS.index(word[:3]) + 1 if word[:3] in _MONTHS and len(word) >= 3 else None


def _nth_weekday(text: str, today: date) -> date | None:
    """'the last friday of october', 'the third tuesday of january': this year's if not passed, else next year's."""
    match = _NTH_WEEKDAY.match(text)
    if match is None:
        return None
    nth, weekday_word, month_word, year_said = match.groups()
    month = _month_number(month_word)
    if month is None:
        return None
    weekday = _weekday_index(weekday_word)
    for year in ([int(year_said)] if year_said else [today.year, today.year + 1]):
        days = [date(year, month, d) for d in range(1, 32) if _valid(year, month, d)]
        matching = [d for d in days if d.weekday() == weekday]
        index = _NTH[nth]
        if index >= len(matching):
            return None  # no fifth Monday that month
        found = matching[index]
        if found >= today or year_said:
            return found
    return None


def _valid(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


def _of_month(text: str, today: date) -> date | None:
    """'the 20th of next month', 'the third of this month'."""
    match = _OF_MONTH.match(text)
    if match is None:
        return None
    number = ordinal_to_int(match.group(1))
    year, month = today.year, today.month
    if match.group(2) == "next":
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return date(year, month, number) if number and _valid(year, month, number) else None


def _slashed(text: str, today: date) -> date | None:
    """'9/20', '12/3/2027': month/day, as written in the US; a date with no year that has passed is next year's."""
    match = _SLASHED.match(text)
    if match is None:
        return None
    month, day = int(match.group(1)), int(match.group(2))
    year_text = match.group(3)
    year = (2000 + int(year_text) if len(year_text) == 2 else int(year_text)) if year_text else today.year
    if not _valid(year, month, day):
        return None
    found = date(year, month, day)
    if year_text is None and found < today:
        return date(year + 1, month, day) if _valid(year + 1, month, day) else None
    return found


def _resolve(core: str, today: date) -> date | None:
    for reader in (_relative, _offset, _nth_weekday, _of_month, _slashed):
        resolved = reader(core, today)
        if resolved is not None:
            return resolved
    if _WEEKDAY_RE.search(core):  # a weekday said is checked against the date; never read past it
        return _with_weekday(core, today)
    day_only = _DAY_ONLY.match(core)
    if day_only:
        number = ordinal_to_int(day_only.group(1))
        return _day_of_month(today, number) if number else None
    return _month_day(core, today)


def parse_date(text: str, today: date) -> ResolvedDate | None:
    """An English date phrase as the NLU tagged it (or an ISO date); None when it names no day."""
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
    resolved = _resolve(core, today)
    return ResolvedDate(resolved, part) if resolved is not None else None
