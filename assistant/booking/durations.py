"""Duration phrases -> timedelta: "45 minutes", "an hour and a half", "half an hour", "two hours", "1.5 h",
"a 30 minute", "a couple of hours", "an hour and fifteen minutes"."""

from __future__ import annotations

import re
from datetime import timedelta

from assistant.booking.numbers import words_to_digits

__all__ = ["parse_duration"]

_UNIT = r"(hours?|hrs?|h|minutes?|mins?|m)"


def _minutes(amount: float, unit: str) -> float:
    return amount * 60 if unit.startswith("h") else amount


def parse_duration(text: str) -> timedelta | None:
    lower = text.lower().replace("-", " ")
    lower = re.sub(r"\b(for|about|around|lasting|roughly|a full|full)\b", " ", lower)
    lower = re.sub(r"\ba couple of\b", "2", lower)
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
    if not found or total <= 0:
        return None
    return timedelta(minutes=round(total))
