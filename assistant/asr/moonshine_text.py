"""Moonshine's English as the rest of the pipeline reads it.

Moonshine tiny spells some words its own way; only forms with one meaning here are put right, as for Whisper
(assistant/language/en/transcript.py, applied after these):
- "to-morrow", "to morrow": tomorrow (nobody says "to morrow" for anything else);
- "half-past three": half past three (the clock reader takes the words apart);
- "p. M.", "a. m", "p M": pm / am, after a number or a number's word ("at nine a. M", "two p M,").
Its numbers as words ("at nine", "from one to two thirty", "forty-five minutes") are read by the value readers
themselves (assistant/language/en/clock.py, durations.py), as they are when people type them.
"""

from __future__ import annotations

import re

from assistant.language.en.transcript import rewrite as english_rewrite

__all__ = ["rewrite"]

_TOMORROW = re.compile(r"\bto[- ]morrow\b", re.I)
_HALF_PAST = re.compile(r"\b(half|quarter)-(past|to)\b", re.I)
# "a. M", "p. m.", "p M": a time's half of the day spelled letter by letter, after a number or number word
_MERIDIEM = re.compile(r"(?<=[0-9a-z])\s+([ap])\.?\s?m\b\.?(?!\w)", re.I)


def rewrite(text: str) -> str:
    text = _TOMORROW.sub(lambda m: "Tomorrow" if m.group(0)[0].isupper() else "tomorrow", text)
    text = _HALF_PAST.sub(lambda m: f"{m.group(1)} {m.group(2)}", text)
    text = _MERIDIEM.sub(lambda m: f" {m.group(1).lower()}m", text)
    return english_rewrite(text)
