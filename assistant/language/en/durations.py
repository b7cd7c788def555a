"""Duration phrases -> timedelta: "45 minutes", "an hour and a half", "half an hour", "two hours", "1.5 h",
"a 30 minute", "a couple of hours", "an hour and fifteen minutes", "1h30", "a quarter of an hour".

Everything but the amount and its unit must be a known filler: "an hour or so" is read, "an hour maybe two" is not."""

from __future__ import annotations

import re
from datetime import timedelta

from assistant.language.en.numbers import words_to_digits

__all__ = ["parse_duration", "teen_minutes"]

_UNIT = r"(hours?|hrs?|h|minutes?|mins?|m)"


def _minutes(amount: float, unit: str) -> float:
    return amount * 60 if unit.startswith("h") else amount


def parse_duration(text: str) -> timedelta | None:
    lower = text.lower().replace("-", " ")
    lower = re.sub(r"\b(for|about|around|lasting|roughly|full)\b", " ", lower)
    lower = re.sub(r"\s+", " ", lower)
    lower = re.sub(r"\ba couple of\b", "2", lower)
    lower = re.sub(r"\b(\d+)\s?h\s?(\d{1,2})\b(?!\s?(?:min|m\b))", r"\1 hours \2 minutes", lower)  # "1h30"
    lower = re.sub(r"\b(a |one )?quarter (of an|an) hour\b", "15 minutes", lower)
    lower = re.sub(r"\bthree quarters? of an hour\b", "45 minutes", lower)
    lower = re.sub(r"\b(an?|one) (hour|hr) and a quarter\b", "75 minutes", lower)
    lower = re.sub(r"\bhalf an? hour\b|\ba half hour\b|\bhalf hour\b", "30 minutes", lower)
    lower = re.sub(r"\b(an?|one) (hour|hr)\b", "1 hour", lower)
    lower = re.sub(r"\b(\w+) and a half (hours?)\b", r"\1.5 \2", lower)
    lower = re.sub(r"\b1 hour and a half\b", "1.5 hours", lower)
    lower = words_to_digits(lower)
    lower = re.sub(r"\b(\d+) and a half\b", r"\1.5", lower)
    lower = re.sub(r"\s+", " ", lower).strip()
    total = 0.0
    found = False
    for amount, unit in re.findall(rf"(\d+(?:\.\d+)?)\s?{_UNIT}\b", lower):
        total += _minutes(float(amount), unit)
        found = True
    leftover = re.sub(rf"(\d+(?:\.\d+)?)\s?{_UNIT}\b|\b(and|an?|long|or so|in total|total|of)\b|[,.]", " ", lower)
    if not found or total <= 0 or leftover.strip():
        return None
    return timedelta(minutes=round(total))


_TEEN_MINUTES = re.compile(
    r"\b(thirteen|fourteen|sixteen|seventeen|eighteen|nineteen|1[346789])[\s-]*(minutes?|mins?)\b", re.I)
_TEEN_VALUES = {"thirteen": 13, "fourteen": 14, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}


def teen_minutes(said: str) -> tuple[str, int] | None:
    """A length of 13-19 minutes said as a teen ("nineteen minutes", "19 min"): the words and the minutes (15 is
    left out: "fifteen" is rarely a misheard "fifty")."""
    found = _TEEN_MINUTES.search(said)
    if found is None:
        return None
    return found.group(0), _TEEN_VALUES.get(found.group(1).lower()) or int(found.group(1))
