"""Short replies and fragments, read without the model: "at 3 pm", "Friday", "Denali", "for an hour", "from 11",
"yes", "undo", "actually, make it three". The model is trained on requests; these are what a person says to a
question or right after a turn."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime

from assistant.booking.interval import from_now
from assistant.booking.rooms import RoomDirectory
from assistant.domain import Slot
from assistant.language.patterns import every_language
from assistant.language.profile import DialogueWords
from assistant.language.readers import parse_clock, parse_date, parse_duration
from assistant.language.registry import LANGUAGES

__all__ = ["either", "is_fragment", "read_answer", "YES", "NO", "UNDO", "CORRECTION", "CORRECTION_INSIDE"]


def either(part: Callable[[DialogueWords], str]) -> re.Pattern[str]:
    """One pattern of every language's words (each language's is one alternative)."""
    return re.compile(every_language(lambda language: part(language.dialogue)), re.I)


YES = either(lambda words: words.yes)
NO = either(lambda words: words.no)
UNDO = either(lambda words: words.undo)
# New words that correct what was just said ("actually, make it three", "on Friday instead", "改成三点"): they change
# the booking the turn before made rather than being read into the request again; and where such words begin
# inside one utterance, after what they correct ("at two. Actually, make it three").
CORRECTION = either(lambda words: words.correction)
CORRECTION_INSIDE = either(lambda words: words.correction_inside)
_ANSWER_FILLER = re.compile(rf"^({every_language(lambda language: language.dialogue.answer_lead)})\b[\s,]*|"
                            rf"[\s,.!?]*({every_language(lambda language: language.dialogue.answer_tail)})?[\s.!?]*$",
                            re.I)
# The word before a fragment's value says what it is: "for an hour" is a length, "from 11" a start, "until 5" an end.
_LEAD_KIND = {word: Slot(kind) for language in LANGUAGES for word, kind in language.dialogue.leads.items()}
_LEAD = re.compile(rf"^\W*(?:(?:{every_language(lambda language: language.dialogue.lead_fillers)})\W+)*"
                   rf"({'|'.join(_LEAD_KIND)})\b", re.I)
_FRAGMENT_WORDS = either(lambda words: words.fragment_joins)  # "tomorrow at 3 for an hour"


def is_fragment(text: str, slots: Sequence[tuple[Slot, str]]) -> bool:
    """True when the words are only slot values and the words that join them ("tomorrow at 3 for an hour"): a
    piece of a request, which fills the conversation's open one and never starts a booking in a room we pick."""
    rest = text
    for _, value in slots:
        rest = rest.replace(value, " ", 1)
    return not _FRAGMENT_WORDS.sub("", rest)


def _readers(rooms: RoomDirectory, today: datetime) -> dict[str, Callable[[str], bool]]:
    clock: Callable[[str], bool] = lambda t: parse_clock(t) is not None  # noqa: E731
    return {
        Slot.START_TIME: clock, Slot.NEW_TIME: clock, Slot.END_TIME: clock,
        Slot.DATE: lambda t: parse_date(t, today.date()) is not None,
        Slot.NEW_DATE: lambda t: parse_date(t, today.date()) is not None,
        Slot.ROOM: lambda t: rooms.match(t) is not None,
        Slot.DURATION: lambda t: parse_duration(t) is not None,
    }


def read_answer(text: str, missing: Sequence[str], rooms: RoomDirectory, today: datetime) -> list[tuple[Slot, str]]:
    """Slots from a short reply or a fragment ("at 3 pm", "Friday", "Denali", "for an hour", "from 11"), read
    by the value parsers: the kind its first word names, then the kinds the open question asks for, then any
    other kind (an amendment). Used when the NLU finds no slot the question asks for (fragments are not requests,
    and the model is trained on requests)."""
    lead = _LEAD.match(text.strip())
    core = text.strip().rstrip(".!?")
    if from_now(core, today) is not None:  # "in an hour": a start, not a length
        return [(Slot.NEW_TIME if Slot.NEW_TIME in missing else Slot.START_TIME, core)]
    for _ in range(3):
        core = _ANSWER_FILLER.sub("", core).strip()
    if not core:
        return []
    readers = _readers(rooms, today)
    hinted = _LEAD_KIND.get(lead.group(1).lower()) if lead else None
    if hinted == Slot.START_TIME and Slot.NEW_TIME in missing:
        hinted = Slot.NEW_TIME
    order: list[str] = [hinted] if hinted else []
    order += [*missing, Slot.START_TIME, Slot.DATE, Slot.DURATION, Slot.ROOM]
    for name in dict.fromkeys(k for k in order if k):
        reader = readers.get(name)
        if reader is not None and reader(core):
            return [(Slot(name), core)]
    return []
