"""English: the default language, for every text written in no other language's script."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from assistant.language.en.clock import parse_clock
from assistant.language.en.dates import parse_date
from assistant.language.en.durations import parse_duration, teen_minutes
from assistant.language.en.ear import ear_clock, ear_date, ear_span
from assistant.language.en.numbers import parse_count, spoken_words
from assistant.language.en.replies import REPLIES
from assistant.language.en.transcript import rewrite
from assistant.language.profile import DialogueWords, Language, ModelRecipe, NamedRoom, RoomWords, WordProfile

__all__ = ["ENGLISH"]

# Prepositions before a slot, joins, fillers (whisper writes a lone "um" as "M." or "Ah.").
_WORDS = WordProfile(re.compile(r"[a-z0-9']+"), frozenset({
    "a", "about", "ah", "an", "and", "around", "at", "between", "book", "but", "by", "can", "cancel", "could", "eh",
    "er", "erm", "for", "from", "hm", "hmm", "in", "m", "maybe", "mm", "move", "next", "on", "or", "past",
    "quarter", "reserve", "schedule", "so", "starting", "the", "this", "till", "to", "uh", "uhm", "um", "until",
    "with",
}), fillers=frozenset({"ah", "eh", "er", "erm", "hm", "hmm", "m", "mm", "uh", "uhm", "um"}),
    length_lead=r"for(?!\s+(?:me|us|you|them|him|her)\b)|in",  # "for me" is whom it is for, not how long
    function_words=frozenset({
        "a", "an", "the", "at", "on", "in", "for", "from", "to", "until", "till", "by", "of", "and", "or", "then",
        "it", "me", "us", "i", "we", "um", "uh", "er", "so", "ok", "okay", "please", "about", "around",
    }),
    range_joiners=r"\bto\b|\band\b|\buntil\b|\btill\b|\bthrough\b|\bthru\b", range_openers=("from ", "between "),
    from_now=r"^in (.+)$", teen_minutes=teen_minutes)

# New words that correct what was just said ("actually, make it three", "on Friday instead").
_HESITATION = r"(?:(?:uh|um|oh|sorry|wait)\W+)*"
_CORRECTING = r"actually|i mean|make (?:it|that)|rather|no\W+\w"
_DIALOGUE = DialogueWords(
    yes=r"^(yes|yeah|yep|yup|sure|ok|okay|please do|do it|go ahead|that works|sounds good)\b",
    no=r"^(no|nope|nah|never ?mind|don't|do not|forget it)\b",
    undo=r"^(undo|undo that|cancel that|scratch that|revert( that)?)\W*$",
    correction=rf"^\W*{_HESITATION}(?:{_CORRECTING}|change (?:it|that) to)|\binstead\W*$",
    # ... and the same correction inside one utterance, after what it corrects ("at two. Actually, make it three")
    correction_inside=rf"[,.;!?]\s+(?={_HESITATION}(?:{_CORRECTING})|[\w\s]+\binstead\W*$)",
    fragment_joins=r"\b(uh|um|er|well|ok|okay|so|and|make|it|actually|the|at|on|in|for|from|until|till|"
                   r"to|starting|around|about|between|please|thanks|thank|you|then|yeah|no|instead)\b|"
                   r"[\s,.!?'\-]",
    answer_lead=r"uh|um|well|ok|okay|so|and|make it|how about|let's say|lets say|maybe|say|actually|the|around|"
                r"starting( at)?|at|on|in|for|from|until|till|to",
    answer_tail=r"please|thanks|thank you",
    lead_fillers=r"uh|um|and|so|ok|okay|make it|actually",
    leads={"for": "duration", "from": "start_time", "starting": "start_time", "at": "start_time",
           "until": "end_time", "till": "end_time", "to": "end_time", "on": "date"},
)

def _metaphone(text: str) -> str:
    import jellyfish  # on first use: the language registry stays stdlib-only (the Triton process imports it)

    return str(jellyfish.metaphone(text))


_ROOMS = RoomWords(
    noise=r"\b(the|room|conference|meeting|mount|mt)\b|'s\b|[^\w\s]",
    # "a room", "any free room", "a meeting", "somewhere"
    any_room=r"\b(?:a|an|any|some|one|another)\s+(?:[a-z'-]+\s+){0,2}?(?:room|space|meeting|call|session|sync|"
             r"review|slot|huddle|standup|stand-up|catch-up|interview|demo|workshop|retro|one-on-one)s?\b|"
             r"\b(?:somewhere|anywhere)\b",
    spaced=True,
    # Metaphone: "Dinally" and "Denali" are both TNL; codes are short, so 0.9 is nearly the same code
    sound_key=_metaphone, sound_least=0.9, sound_min_length=2,
)


def _clock_words(moment: datetime) -> str:
    """A time as said: "3:15 pm"."""
    minutes = moment.strftime(":%M") if moment.minute else ""
    return f"{moment.hour % 12 or 12}{minutes} {'am' if moment.hour < 12 else 'pm'}"


def _hotwords(rooms: Iterable[NamedRoom]) -> str:
    return f"Book, reserve, cancel, move. Rooms: {', '.join(room.name for room in rooms)}."


ENGLISH = Language(
    code="en", name="English", script=None, words=_WORDS, dialogue=_DIALOGUE, rooms=_ROOMS, replies=REPLIES,
    list_separator=", ", sentence_gap=" ",
    units_per_second=6.0,  # words; fast English speech is about 4
    read_date=parse_date, read_clock=parse_clock, read_duration=parse_duration, read_count=parse_count,
    clock_words=_clock_words, date_words=lambda moment: moment.strftime("%a %-d %b"),
    span_words=lambda start, end: f"{start.strftime('%a %-d %b %H:%M')}-{end.strftime('%H:%M')}",
    model=ModelRecipe(encoder="minilm", data="models.datagen.generator", voices=(
        "espeak-ng:en-gb", "espeak-ng:en-gb-x-rp", "espeak-ng:en-gb-x-gbclan", "espeak-ng:en-gb-x-gbcwmd",
        "piper:en_US-joe-medium", "hibari:heart")),
    hotwords=_hotwords, rewrite=rewrite, spoken_words=spoken_words,
    ear_clock=ear_clock, ear_span=ear_span, ear_date=ear_date, voice="piper:joe",
)
