"""What a language is to the assistant: one `Language` per language, made in its own package
(assistant/language/en, assistant/language/zh) and listed once in assistant/language/registry.py.

Everything here is data and plain functions: how its text is recognized (its script), how its words are counted
and which ones ask for more, how its values (dates, clock times, lengths, head counts) are read, what the
assistant says in it, and what its recognizer is primed with. Code outside this package asks a profile; it never
branches on a language code or a script itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Protocol

from assistant.language.values import ClockTime, ResolvedDate

__all__ = ["Language", "WordProfile", "DialogueWords", "RoomWords", "ModelRecipe", "NamedRoom"]


class NamedRoom(Protocol):
    """A room as a recognizer prompt names it (assistant.booking.rooms.Room is one)."""

    @property
    def name(self) -> str: ...

    @property
    def aliases(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class WordProfile:
    """Words as the turn policy counts them: how a text splits into words, and which last words ask for more."""

    pattern: re.Pattern[str]  # one match per word
    asks_for_more: frozenset[str]  # a request ending on one of these goes on
    ends_asking: tuple[str, ...] = ()  # multi-character endings that ask for more (Chinese words of 2+ characters)
    fillers: frozenset[str] = frozenset()  # hesitations a recognizer writes in one decode and drops in another
    length_lead: str = ""  # regex source: words that begin a length said after the time ("for", "in"); "": none
    # words that are never a time on their own: a time slot tagged on one of these ("at") was misread
    function_words: frozenset[str] = frozenset()
    # regex source: the words between the two ends of a time range said as one span ("9 to 11", "9 until 11");
    # a dash joins them in every language
    range_joiners: str = ""
    range_openers: tuple[str, ...] = ()  # words before such a range ("from 9 to 11", "between 9 and 11")
    from_now: str = ""  # regex source with one group, the length: a start said as a time from now ("in (an hour)")
    # a length of 13-19 minutes said as a teen ("nineteen minutes", "19 min"): (the words, the minutes), else None;
    # a -ty is easily heard as a teen (guard.py asks)
    teen_minutes: Callable[[str], tuple[str, int] | None] | None = None


@dataclass(frozen=True)
class DialogueWords:
    """Regular-expression sources, each one alternative of the dialogue's patterns (assistant/booking/dialogue.py
    joins every language's with "|", case-insensitive)."""

    yes: str  # a whole answer that says yes
    no: str  # an answer that says no
    undo: str  # a whole answer that takes the last booking back
    correction: str  # new words that correct what was just said, at their start
    correction_inside: str  # where a correction begins after what it corrects, in one utterance
    fragment_joins: str  # the words that join a fragment's values ("tomorrow at 3 for an hour")
    answer_lead: str = ""  # words before the value of a short answer ("uh", "make it", "how about", "at")
    answer_tail: str = ""  # words after it ("please", "thanks")
    lead_fillers: str = ""  # hesitations before the word that says what a fragment's value is ("uh, for an hour")
    # the word before a fragment's value says which slot it fills: "for an hour" a length, "from 11" a start
    leads: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RoomWords:
    """How rooms are named in the language: the words around a name, the words that leave the room to us, and how
    a name is matched by sound when it is not spelled right."""

    noise: str  # regex source: words said around a room's name ("the ... room", "会议室")
    any_room: str  # regex source: words that ask for some room rather than a named one ("a room", "会议室")
    spaced: bool  # words are written apart: a name is found among runs of words, else as a run of characters
    sound_key: Callable[[str], str]  # what a name sounds like (Metaphone code, toneless pinyin)
    sound_least: float  # the similarity of sound keys that counts as a match
    sound_min_length: int  # a shorter key says too little to match on


@dataclass(frozen=True)
class ModelRecipe:
    """How the language's intent + slot model is made: plain data that the build side (models/model_cache.py,
    models/recipe.py) reads; nothing here imports it. It is part of the model's cache key."""

    encoder: str  # the pretrained encoder fine-tuned: "minilm" or "multilingual-e5" (models/recipe.py ENCODERS)
    data: str  # the module that writes its training requests (TEMPLATES, render_example, generate_language_splits)
    own_sources: str = ""  # a glob of recipe sources only this language's model reads: a change there retrains it
    characters_apart: bool = False  # its tokenizer reads the script a character a token
    sizes: tuple[int, int] | None = None  # (train, dev) requests; None: the generator's defaults
    training: tuple[int, float] | None = None  # (epochs, learning rate); None: the trainer's defaults
    # the voices its heard corpus is rendered in (models/heard/voices.py), "ENGINE:VOICE": espeak-ng's accents
    # (its variants are drawn there), "piper:..." and "hibari:..." for those engines' packaged voices
    voices: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)  # one value per language, compared and hashed by identity
class Language:
    code: str  # what sessions, configs and replies call it: "en", "zh"
    name: str  # what people call it: "English"
    script: re.Pattern[str] | None  # a text with a match is in this language; None: any text in no other's script
    words: WordProfile
    dialogue: DialogueWords
    rooms: RoomWords
    replies: Mapping[str, str]  # what the assistant says, by key, with named fields
    list_separator: str  # between the names of a list: ", ", "、"
    sentence_gap: str  # between two sentences of one reply: " ", ""
    units_per_second: float  # most words (or characters, in a script without spaces) a second of fast speech holds
    read_date: Callable[[str, date], ResolvedDate | None]
    read_clock: Callable[[str], ClockTime | None]
    read_duration: Callable[[str], timedelta | None]
    read_count: Callable[[str], int | None]
    clock_words: Callable[[datetime], str]  # a time as said: "3:15 pm"
    date_words: Callable[[datetime], str]  # a date as said, neither today nor tomorrow: "Fri 4 Dec"
    span_words: Callable[[datetime, datetime], str]  # a proposed booking's time: "Fri 4 Dec 09:00-10:00"
    model: ModelRecipe  # how its intent + slot model is trained
    hotwords: Callable[[Iterable[NamedRoom]], str]  # the recognizer's prompt: the rooms, the domain's words
    rewrite: Callable[[str], str] | None = None  # the recognizer's text put right where no rooms are known
    rewrite_for_rooms: Callable[[Iterable[NamedRoom]], Callable[[str], str]] | None = None  # ... and where they are
    # The words of a text with the form each is compared by when what was said is aligned with what a recognizer
    # wrote for it (models/heard/align.py): (start, end, form), number words as digits ("nine" and "9": "9").
    spoken_words: Callable[[str], list[tuple[int, int, str]]] | None = None
    # the multilingual Whisper model that hears it where it is not the default language ([asr] models overrides)
    recognizer: str = ""
    # spoken replies (assistant/speech): a time and a booking's span as said aloud ("nine to ten a.m."; None: the
    # screen's words), and the voice that says them ("piper:joe", "espeak:cmn"; "": replies in this language are
    # shown, not spoken; [speech] voices overrides)
    ear_clock: Callable[[datetime], str] | None = None
    ear_span: Callable[[datetime, datetime], str] | None = None
    ear_date: Callable[[datetime], str] | None = None  # a day neither today nor tomorrow: "on Friday, December 4"
    voice: str = ""

    def written_in(self, text: str) -> bool:
        """The text holds this language's script (always False for the default language, which has none)."""
        return self.script is not None and self.script.search(text) is not None
