"""Clock-time phrases -> (hour, minute), with what was said about am/pm.

"9", "9 am", "9 a.m.", "3p", "nine thirty", "10.30", "14:30", "16h", "15h30", "07:00 PM", "half past four",
"half three", "quarter to ten", "20 minutes to 2", "15 to noon", "noon", "midnight", "3.45pm", "4 in the PM",
"9 in the morning", "fourteen hundred hours". Every word must be read: a phrase with words left over is no time.
Duckling reads most of these too, but not "3p" or "9a", and it reads "half three" as 15:30 and a whole sentence's
"at nine for an hour" as 9 to 11 (docs/nlu.md has the comparison); clock arithmetic and zones are left to
datetime/zoneinfo.
"""

from __future__ import annotations

import re

from assistant.language.en.numbers import word_to_int
from assistant.language.values import ClockTime, DayPart, Meridiem

__all__ = ["parse_clock", "parse_day_part"]


_MERIDIEM = re.compile(r"\s*\b(?:in the )?(a\.?\s?m\.?|p\.?\s?m\.?)(?=\W|$)|(?<=\d)(am|pm|a|p)\b", re.IGNORECASE)
_PART = re.compile(r"\s*\b(?:in the |this |tomorrow |tonight)?(morning|afternoon|evening|night)\b|\s*\btonight\b",
                   re.IGNORECASE)
_FILLER = re.compile(r"\b(at|around|about|approximately|roughly|by|o'clock|oclock|ish|sharp|hours|hrs)\b|[~,!?]",
                     re.IGNORECASE)
# "N to H" is a clock time only when N cannot be an hour itself: "3 to 4" is a range, "20 to 4" is 3:40.
_RELATIVE = re.compile(r"(?:a )?(half|quarter|[a-z0-9]+(?:[- ](?!min)[a-z]+)?)(?: (minutes?|mins?))? "
                       r"(past|pass|after|to|before|till|til|of) (\S+)")  # "pass": how recognizers hear "past"
_NOT_AN_HOUR = {"a", "an", "oh", "zero"}  # "a quarter", "oh five": never an hour on their own


def parse_day_part(text: str) -> DayPart | None:
    lower = text.lower()
    if "tonight" in lower or "evening" in lower or "night" in lower:
        return DayPart.EVENING
    if "afternoon" in lower:
        return DayPart.AFTERNOON
    if "morning" in lower:
        return DayPart.MORNING
    return None


def _meridiem_of(text: str) -> tuple[str, Meridiem | None]:
    match = _MERIDIEM.search(text)
    meridiem: Meridiem | None = None
    if match:
        meridiem = Meridiem.AM if match.group(0).strip().lower().removeprefix("in the ").startswith("a") \
            else Meridiem.PM
        text = text[: match.start()] + " " + text[match.end() :]
    part = parse_day_part(text)
    if part is not None:
        if meridiem is not None and meridiem is not part.meridiem:
            return "", None  # "9 pm in the morning": contradicts itself, so it is not read
        meridiem = part.meridiem
        text = _PART.sub(" ", text)
    return text, meridiem


def _hour(text: str) -> int | None:
    return None if text in _NOT_AN_HOUR else word_to_int(text)


def _relative(core: str) -> tuple[int, int] | None:
    """'quarter past four', 'a quarter to 10', '20 minutes to 2', 'ten past nine', '15 to noon' -> (hour, minute);
    noon and midnight give a 24 h hour (0 or 12). None when the words are not such a time."""
    match = _RELATIVE.fullmatch(core)
    if match is None:
        return None
    amount_text, minutes_said, direction, hour_text = match.groups()
    amount = {"half": 30, "quarter": 15}.get(amount_text)
    if amount is None:
        amount = word_to_int(amount_text.replace("-", " "))
    hour = {"noon": 12, "midday": 12, "midnight": 0}.get(hour_text, _hour(hour_text) or -1)
    if amount is None or not 0 < amount < 60 or not 0 <= hour <= 24:
        return None
    if direction in ("past", "pass", "after"):
        return hour, amount
    if amount <= 12 and not minutes_said and amount_text not in ("half", "quarter"):
        return None  # "3 to 4": a range, not 3:57
    return (hour - 1) % 24 if hour not in (0, 1) else (23 if hour == 0 else 12), 60 - amount


def _hour_minute(core: str) -> tuple[int, int] | None:
    core = core.strip().rstrip(".")
    digits = re.fullmatch(r"(\d{1,2})(?:[:.h](\d{2})|h)?", core)
    if digits:
        return int(digits.group(1)), int(digits.group(2) or 0)
    if re.fullmatch(r"\d{3,4}", core):  # "1430", "930" (recognizers write 24 h times this way)
        return int(core[:-2]), int(core[-2:])
    hundred = re.fullmatch(r"(\S+(?: \S+)?) hundred", core)  # "fourteen hundred (hours)"
    if hundred:
        hour = _hour(hundred.group(1))
        return (hour, 0) if hour is not None and hour > 12 else None
    half = re.fullmatch(r"half (\S+)", core)  # British "half three" = 3:30
    if half:
        hour = _hour(half.group(1))
        return (hour, 30) if hour is not None else None
    relative = _relative(core)
    if relative is not None or _RELATIVE.fullmatch(core):
        return relative
    words = core.replace("-", " ").split() if _hour(core) is None else [core]
    hour = _hour(words[0]) if words else None
    if hour is None:
        return None
    if len(words) == 1:
        return hour, 0
    rest = " ".join(words[1:])
    oh_minutes = words[1] in ("oh", "o") and len(words) == 3  # "seven oh five"
    minute = word_to_int(words[2] if oh_minutes else rest)
    if minute is not None and not oh_minutes and minute < 10:
        return None  # "nine five" is no time anyone says; "nine oh five" is
    return (hour, minute) if minute is not None else None


def _special(text: str) -> ClockTime | None:
    if re.fullmatch(r"(12 |twelve )?(noon|midday)", text) or text == "12 noon":
        return ClockTime(12, 0, Meridiem.PM, fixed=True)
    if re.fullmatch(r"(12 |twelve )?midnight", text):
        return ClockTime(0, 0, Meridiem.AM, fixed=True)
    return None


def parse_clock(text: str) -> ClockTime | None:
    """One clock time, read in full; None when the text is not one (e.g. "this afternoon" alone: a day part, no
    clock; "a": one letter is never a time; words left over: not read). Chinese: assistant/language/zh/readers.py."""
    lower = re.sub(r"\s+", " ", text.strip().lower())
    special = _special(re.sub(r"\s+", " ", _FILLER.sub(" ", lower)).strip())
    if special is not None:
        return special
    rest, meridiem = _meridiem_of(lower)
    rest = re.sub(r"\s+", " ", _FILLER.sub(" ", rest)).strip()
    zero_padded = re.fullmatch(r"0\d(?:[:.h]?\d\d|h)", rest) is not None  # "09:00", "0900", "09h"
    parsed = _hour_minute(rest)
    if parsed is None or (meridiem is not None and re.search(r"\b(to|before|till|til|of) (12|twelve)$", rest)):
        return None  # "quarter to 12 pm": is the pm 11:45's or noon's? Asked, not guessed
    hour, minute = parsed
    if not (0 <= hour <= 24 and 0 <= minute < 60):
        return None
    if hour == 24:
        hour = 0
    h_clock = re.fullmatch(r"\d{1,2}h(\d\d)?", rest) is not None  # "16h", "9h30": a 24 h clock
    named = re.search(r"\b(noon|midday|midnight)$", rest) is not None  # "15 to noon"
    if meridiem is not None and (hour > 12 or h_clock or (hour == 0 and not named)):
        return None  # "14:00 pm", "16h pm": contradicts itself
    if hour == 0 or hour > 12 or named or h_clock or (zero_padded and meridiem is None):
        return ClockTime(hour, minute, None, fixed=True)  # a 24 h clock: no am/pm to guess
    return ClockTime(hour, minute, meridiem)
