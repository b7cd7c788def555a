"""Recognizer output compared as words, not characters: int8 decoding on a CPU is not bit-identical across
processors, so one machine writes "at 9" and another "at nine" for the same WAV (testing.md). Case,
punctuation, "p.m."/"pm", number words and digits all compare the same."""

from __future__ import annotations

import re

from assistant.language.en.numbers import words_to_digits

__all__ = ["normalized"]

_MERIDIEM = re.compile(r"\b([ap])\.\s?m\.?", re.I)
_DIGIT_LETTER = re.compile(r"(?<=\d)(?=[a-z])|(?<=[a-z])(?=\d)")
_NOT_WORD = re.compile(r"[^a-z0-9']+")


def normalized(text: str) -> str:
    """'Book Everest tomorrow at nine, 3 P.M.!' -> 'book everest tomorrow at 9 3 pm'."""
    text = _MERIDIEM.sub(r"\1m", text.lower())
    text = words_to_digits(_NOT_WORD.sub(" ", text))
    return " ".join(_DIGIT_LETTER.sub(" ", text).split())
