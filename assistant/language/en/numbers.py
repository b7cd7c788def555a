"""Spoken numbers -> ints: "nine" -> 9, "forty-five" -> 45, "twenty first" -> 21, "3rd" -> 3."""

from __future__ import annotations

import re

__all__ = ["word_to_int", "ordinal_to_int", "words_to_digits", "parse_count", "spoken_words"]

_UNITS = {
    "zero": 0, "oh": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "a": 1, "an": 1,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}
_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
    "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20,
    "thirtieth": 30,
}


def word_to_int(text: str) -> int | None:
    """A cardinal below 100 in digits or words ("45", "forty-five", "forty five"); None if it is not one."""
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    parts = re.split(r"[-\s]+", text)
    if len(parts) == 1:
        return _UNITS.get(parts[0], _TENS.get(parts[0]))
    if len(parts) == 2 and parts[0] in _TENS and parts[1] in _UNITS and 0 < _UNITS[parts[1]] < 10:
        return _TENS[parts[0]] + _UNITS[parts[1]]
    return None


def ordinal_to_int(text: str) -> int | None:
    """A day ordinal: "3rd", "21st", "third", "twenty-first", "twenty first"; None if it is not one."""
    text = text.strip().lower()
    match = re.fullmatch(r"(\d{1,2})(st|nd|rd|th)?", text)
    if match:
        return int(match.group(1))
    parts = re.split(r"[-\s]+", text)
    if len(parts) == 1:
        return _ORDINALS.get(parts[0])
    if len(parts) == 2 and parts[0] in _TENS and parts[1] in _ORDINALS and _ORDINALS[parts[1]] < 10:
        return _TENS[parts[0]] + _ORDINALS[parts[1]]
    return None


_NUMBER_WORDS = "|".join(sorted({*_UNITS, *_TENS} - {"a", "an", "oh"}, key=len, reverse=True))
_DIGIT_WORDS = "|".join(k for k, v in _UNITS.items() if 0 < v < 10 and len(k) > 2)
_COMPOUND = re.compile(rf"\b(?:{'|'.join(_TENS)})[-\s](?:{_DIGIT_WORDS})\b")
_SINGLE = re.compile(rf"\b(?:{_NUMBER_WORDS})\b")


def words_to_digits(text: str) -> str:
    """Replace number words with digits ("two hours" -> "2 hours"); leaves "a"/"an" alone."""
    text = _COMPOUND.sub(lambda m: str(word_to_int(m.group(0))), text)
    return _SINGLE.sub(lambda m: str(word_to_int(m.group(0))), text)


def parse_count(text: str) -> int | None:
    """A head count as the NLU tagged it: the first number in digits ("6 people"), else one in words ("six")."""
    match = re.search(r"\d+", text)
    return int(match.group(0)) if match else word_to_int(text)


# a word as a recognizer may write it: "a.m." spelled out, letters (with an apostrophe), a run of digits
_SPOKEN_WORD = re.compile(r"[ap]\.\s?m\.?|[^\W\d_]+(?:'[^\W\d_]+)*|\d+", re.I)
_NOT_NUMBERS = {"a", "an"}  # numbers only in "a quarter", "an hour": compared as the words they are


def spoken_words(text: str) -> list[tuple[int, int, str]]:
    """(start, end, form) of each word: lower case, number words as their digits ("thirty" and "30": "30"),
    "a.m." and "am" alike, so what was said and what a recognizer wrote for it can be aligned word by word."""
    out = []
    for found in _SPOKEN_WORD.finditer(text):
        word = found.group(0).lower()
        if "." in word:
            word = word[0] + "m"
        number = None if word in _NOT_NUMBERS else _UNITS.get(word, _TENS.get(word))
        out.append((found.start(), found.end(), str(number) if number is not None else word))
    return out
