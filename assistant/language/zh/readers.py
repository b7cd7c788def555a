"""Chinese date, clock, duration and head-count phrases, as the NLU tags them, into the same values the English
readers give (ResolvedDate, ClockTime, timedelta, int).

Dates: 今天 明天 后天 大后天; 周五 / 星期五 / 礼拜五 (the next one);
这周五 / 本周五 (this week's); 下周一 / 下星期一 (next week's);
上周五 (last week's: the guard refuses a past day with its reason);
12月3日 / 十二月三号 / 3号; with a day part (上午 早上 中午 下午 傍晚 晚上).
Clock times: 九点, 九点钟, 九点半, 三点一刻, 三点三刻, 十点二十, 十点零五分, 9:30, 十四点;
a day part fixes am/pm, 中午十二点 is noon; a bare 九点 keeps its am/pm open like "nine"
(the dispatcher assumes and says so).
Durations: 一个小时, 半小时, 一个半小时, 两个钟头, 一刻钟, 九十分钟, 一个小时十五分钟.
Head counts: 六个人, 6人, 六位, 六.

Every character must be read, as in the English readers: a phrase with anything left over is no value (the
dispatcher then asks). Numerals go through cn2an (MIT), which reads 两, 〇 and 二十三; cn2an's own sentence
`transform` is not used: it turns 三点一刻 into "3.1刻" and 下周一 into "下周1". docs/multilingual.md has the
table of expressions this was chosen by.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from assistant.language.script import HAN
from assistant.language.values import ClockTime, DayPart, Meridiem, ResolvedDate

__all__ = ["zh_number", "parse_zh_date", "parse_zh_clock", "parse_zh_duration", "parse_zh_count"]

_NUMERAL = r"[零〇一二两三四五六七八九十百\d]+"
_WEEKDAYS = "一二三四五六日天"  # 日 and 天 are both Sunday
_PARTS = (("凌晨", DayPart.MORNING), ("早上", DayPart.MORNING), ("早晨", DayPart.MORNING),
          ("上午", DayPart.MORNING), ("中午", DayPart.AFTERNOON), ("下午", DayPart.AFTERNOON),
          ("傍晚", DayPart.EVENING), ("晚上", DayPart.EVENING), ("今晚", DayPart.EVENING), ("夜里", DayPart.EVENING))
# words around a value that say nothing about it ("大概一个小时左右"); 前/后 (before/after) are not among them
_FILLERS = re.compile(r"大概|左右|差不多|大约|约|一共|总共|共|时长|持续|的|在|个|\s|[，,。]")


def zh_number(text: str) -> int | None:
    """A whole number written in digits or Chinese numerals ("23", "二十三", "两", "十"); None otherwise."""
    if text.isdigit():
        return int(text)
    import cn2an

    try:
        value = cn2an.cn2an(text, "smart")
    except (ValueError, KeyError, IndexError):
        return None
    return int(value) if float(value).is_integer() and value >= 0 else None


def _day_part(text: str) -> tuple[str, DayPart | None]:
    """The text without its day-part word, and the part (None if none, or if two contradict each other)."""
    found = [(word, part) for word, part in _PARTS if word in text]
    if not found:
        return text, None
    if len({part for _, part in found}) > 1:
        return text, None  # "上午下午": left for the caller to refuse (the word stays in)
    for word, _ in found:
        text = text.replace(word, "")
    if "今晚" in (word for word, _ in found):
        text = "今天" + text
    return text, found[0][1]


def _this_week(today: date, weekday: int) -> date:
    return today + timedelta(days=weekday - today.weekday())


def _weekday_date(prefix: str, weekday: int, today: date) -> date:
    if prefix in ("这", "本"):
        return _this_week(today, weekday)
    if prefix == "下":
        return _this_week(today, weekday) + timedelta(days=7)
    if prefix == "上":  # last week's: a past day, which the guard then refuses with its reason
        return _this_week(today, weekday) - timedelta(days=7)
    if prefix == "下下":
        return _this_week(today, weekday) + timedelta(days=14)
    ahead = (weekday - today.weekday()) % 7  # a bare 周五: the next Friday (today if today is Friday)
    return today + timedelta(days=ahead)


def _month_day(month: int | None, day: int, today: date) -> date | None:
    if month is None:
        candidates = [(today.year, today.month), (today.year + (today.month == 12), today.month % 12 + 1)]
    else:
        candidates = [(today.year, month), (today.year + 1, month)]
    for year, m in candidates:
        try:
            when = date(year, m, day)
        except ValueError:
            continue
        if when >= today:
            return when
    return None


def _core_date(core: str, today: date) -> date | None:
    relative = {"今天": 0, "今日": 0, "明天": 1, "明日": 1, "后天": 2, "大后天": 3}
    if core in relative:
        return today + timedelta(days=relative[core])
    weekday = re.fullmatch(rf"(这|本|下下|下|上)?(?:周|星期|礼拜)([{_WEEKDAYS}])", core)
    if weekday:
        return _weekday_date(weekday.group(1) or "", min(_WEEKDAYS.index(weekday.group(2)), 6), today)
    month_day = re.fullmatch(rf"(?:({_NUMERAL})月)?({_NUMERAL})[日号]", core)
    if month_day:
        month = zh_number(month_day.group(1)) if month_day.group(1) else None
        day = zh_number(month_day.group(2))
        if day is None or (month_day.group(1) and month is None):
            return None
        return _month_day(month, day, today)
    return None


def parse_zh_date(text: str, today: date) -> ResolvedDate | None:
    rest, part = _day_part(text)
    core = _FILLERS.sub("", rest)
    # a date with its weekday ("12月3日周四"): both must name the same day
    both = re.fullmatch(rf"(.+[日号])((?:周|星期|礼拜)[{_WEEKDAYS}])", core)
    if both:
        day, check = _core_date(both.group(1), today), _core_date(both.group(2), today)
        if day is None or check is None or day.weekday() != check.weekday():
            return None
        return ResolvedDate(day, part)
    if not core and part is not None:
        return ResolvedDate(today, part)  # "下午" alone: this afternoon
    resolved = _core_date(core, today)
    return ResolvedDate(resolved, part) if resolved is not None else None


def parse_zh_clock(text: str) -> ClockTime | None:
    rest, part = _day_part(text)
    core = re.sub(r"大概|左右|大约|约|的|钟|\s", "", rest).replace("：", ":")
    parsed = _hour_minute(core)
    if parsed is None:
        return None
    hour, minute = parsed
    if not (0 <= hour <= 24 and 0 <= minute < 60):
        return None
    if "中午" in text and hour == 12:
        return ClockTime(12, minute, Meridiem.PM, fixed=True)
    if hour == 24 or hour == 0:
        return ClockTime(0, minute, Meridiem.AM, fixed=True) if part in (None, DayPart.MORNING) else None
    if hour > 12:
        return ClockTime(hour, minute, None, fixed=True) if part is not DayPart.MORNING else None
    return ClockTime(hour, minute, part.meridiem if part is not None else None)


def _hour_minute(core: str) -> tuple[int, int] | None:
    digital = re.fullmatch(r"(\d{1,2}):(\d{2})", core)
    if digital:
        return int(digital.group(1)), int(digital.group(2))
    spoken = re.fullmatch(rf"({_NUMERAL})[点時时](.*)", core)
    if not spoken:
        return None
    hour, tail = zh_number(spoken.group(1)), spoken.group(2).removesuffix("分")
    if hour is None:
        return None
    named = {"": 0, "整": 0, "半": 30, "一刻": 15, "三刻": 45}
    if tail in named:
        return hour, named[tail]
    minute = re.fullmatch(rf"零?({_NUMERAL})", tail)
    if minute is None:
        return None
    value = zh_number(minute.group(1))
    return (hour, value) if value is not None else None


def parse_zh_duration(text: str) -> timedelta | None:
    core = _FILLERS.sub("", text).replace("钟头", "小时")
    if core in ("一刻钟", "一刻"):
        return timedelta(minutes=15)
    if core in ("三刻钟", "三刻"):
        return timedelta(minutes=45)
    match = re.fullmatch(rf"(?:({_NUMERAL})?(半)?小时)?(?:({_NUMERAL})分钟?)?", core)
    if not match or not any(match.groups()):  # nothing said: "" and "很久" alike
        return None
    hours_said, half, minutes_said = match.groups()
    if hours_said is None and half is None and "小时" in core:
        return None  # an hour count without its number: "小时", "小时十五分钟"
    hours = zh_number(hours_said) if hours_said else 0
    minutes = zh_number(minutes_said) if minutes_said else 0
    if hours is None or minutes is None:
        return None
    total = hours * 60 + (30 if half else 0) + minutes
    return timedelta(minutes=total) if total > 0 else None


def parse_zh_count(text: str) -> int | None:
    core = re.sub(r"一共|总共|一起|共|大概|左右|大约|约|\s", "", text)
    match = re.fullmatch(rf"({_NUMERAL})(?:个人|个|人|位|名)?", core)  # the tagger may leave the unit out
    if not match:
        return None
    count = zh_number(match.group(1))
    return count if count is not None and count > 0 else None


_HAN_DIGITS = dict(zip("零〇一二两三四五六七八九", "001223456789", strict=True)) | {"十": "10"}
_SPOKEN_WORD = re.compile(f"[{HAN}]|[^\\W\\d_{HAN}]+|\\d+")


def spoken_words(text: str) -> list[tuple[int, int, str]]:
    """(start, end, form) of each word for aligning speech with a transcript: a Chinese character a word, a numeral
    as its digits ("九" and "9": "9"; 十 as "10"), a Latin word lower case ("Everest" inside Chinese)."""
    return [(m.start(), m.end(), _HAN_DIGITS.get(m.group(0), m.group(0).lower())) for m in _SPOKEN_WORD.finditer(text)]
