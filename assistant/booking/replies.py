"""What the assistant says, in the language of the request (each language's texts are in its profile:
assistant/language/en/replies.py, assistant/language/zh/replies.py), by key with named fields
(`say(CHINESE, "ask.start_time")` is "您想订几点？"). The language is the request's script (`language_of`), the same
rule that routes a text to its language's model, so a request answered in Chinese was also read by it.
Machine-facing text (a command's `assumptions`, error codes) stays English: programs read it, not people.
"""

from __future__ import annotations

from datetime import date, datetime

from assistant.language import registry
from assistant.language.profile import Language

__all__ = ["language_of", "say", "clock", "room_list", "clock_words", "day_words", "sentences"]


def language_of(text: str) -> Language:
    """The language the words are written in (the model of that language read them)."""
    return registry.language_of(text)


def say(language: Language, key: str, **fields: object) -> str:
    return language.replies[key].format(**fields)


def sentences(language: Language, *parts: str) -> str:
    """Sentences of one reply, joined as the language writes them ("Which day? At what time?", "哪一天？几点？")."""
    return language.sentence_gap.join(parts)


def room_list(language: Language, names: list[str]) -> str:
    return language.list_separator.join(names)


def clock_words(language: Language, moment: datetime) -> str:
    """A time as said: "3:15 pm"; "下午3:15" (上午 before noon)."""
    return language.clock_words(moment)


def day_words(language: Language, moment: datetime, today: date) -> str:
    """today, tomorrow, else the date: "Fri 4 Dec"; "12月4日"."""
    days = (moment.date() - today).days
    if days in (0, 1):
        return say(language, "today" if days == 0 else "tomorrow")
    return language.date_words(moment)


def clock(moment: datetime) -> str:
    """24-hour time, as both languages write it in a reply ("14:30")."""
    return moment.strftime("%H:%M")
