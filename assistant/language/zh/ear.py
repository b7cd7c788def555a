"""Times as a Mandarin speaker says them, for spoken replies: "上午九点", "九点半", "下午两点十五分"."""

from __future__ import annotations

from datetime import datetime

__all__ = ["ear_clock", "ear_span", "ear_date"]


def _period(hour: int) -> str:
    if hour < 6:
        return "凌晨"
    if hour < 12:
        return "上午"
    if hour < 13:
        return "中午"
    return "下午" if hour < 19 else "晚上"


def _number(n: int) -> str:
    import cn2an  # imported when a reply is said: the registry loads with the standard library alone

    return str(cn2an.an2cn(n))


def _hour_minutes(moment: datetime) -> str:
    hour = moment.hour % 12 or 12
    said = "两" if hour == 2 else _number(hour)
    if not moment.minute:
        return f"{said}点"
    if moment.minute == 30:
        return f"{said}点半"
    minutes = _number(moment.minute)
    return f"{said}点{'零' if moment.minute < 10 else ''}{minutes}分"


def ear_clock(moment: datetime) -> str:
    return _period(moment.hour) + _hour_minutes(moment)


def ear_span(start: datetime, end: datetime) -> str:
    """"上午九点到十点", "上午十一点到下午一点"."""
    same = _period(start.hour) == _period(end.hour) and end.date() == start.date()
    return f"{ear_clock(start)}到{_hour_minutes(end) if same else ear_clock(end)}"


def ear_date(moment: datetime) -> str:
    return f"{moment.month}月{moment.day}日"
