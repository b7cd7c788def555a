"""Time zones and reference times that come from outside (a client's `start`, an HTTP query), checked.

`ZoneInfo` raises more than ZoneInfoNotFoundError on names that are not zones: a folder ("Europe") is an
IsADirectoryError, a 300-character name an OSError. And a reference time at the edge of the calendar
(9999-12-31) overflows as soon as "tomorrow" is computed from it. Both are refused here, with a plain reason.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["parse_zone", "parse_reference", "check_day", "FIRST_YEAR", "LAST_YEAR"]

FIRST_YEAR, LAST_YEAR = 1970, 2199  # reference times and days asked about: far from the calendar's edges
_ZONE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+){0,2}")


def parse_zone(name: str) -> ZoneInfo:
    """An IANA zone ("Europe/Berlin", "UTC"); ValueError for anything else."""
    if len(name) > 64 or not _ZONE_NAME.fullmatch(name):
        raise ValueError(f"{name[:64]!r} is not an IANA time zone (e.g. Europe/Berlin)")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder of zones, or no such file
        raise ValueError(f"{name!r} is not an IANA time zone (e.g. Europe/Berlin)") from None


def check_day(day: date) -> date:
    if not FIRST_YEAR <= day.year <= LAST_YEAR:
        raise ValueError(f"{day.isoformat()} is out of range (years {FIRST_YEAR}-{LAST_YEAR})")
    return day


def parse_reference(text: str, zone: ZoneInfo) -> datetime:
    """An ISO 8601 date-time in `zone` (a naive one is a wall-clock time there); ValueError when unreadable or
    outside the years FIRST_YEAR-LAST_YEAR."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text[:64]!r} is not an ISO 8601 date-time") from None
    check_day(moment.date())
    return moment.replace(tzinfo=zone) if moment.tzinfo is None else moment.astimezone(zone)
