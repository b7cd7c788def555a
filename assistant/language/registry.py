"""The languages the assistant speaks, listed once. Config, wiring, NLU routing, the turn policy, replies, the
clients and the benchmarks ask here; adding a language is adding its profile package and one line below.

A text's language is its script: the first language whose script the text holds, else the default (English).
The script decides, not a recognizer's guess: a typed request has none, and Whisper labels mixed speech either way.
"""

from __future__ import annotations

from dataclasses import dataclass

from assistant.language.en.profile import ENGLISH
from assistant.language.profile import Language
from assistant.language.zh.profile import CHINESE

__all__ = ["LANGUAGES", "DEFAULT", "AUTO", "Auto", "Spoken", "CODES", "SESSION_LANGUAGES", "get", "spoken",
           "language_of", "known"]

LANGUAGES: tuple[Language, ...] = (ENGLISH, CHINESE)
DEFAULT = ENGLISH  # always served: the server listens once it is ready; the others are built behind it


@dataclass(frozen=True)
class Auto:
    """A session's language when each utterance's language is told apart by the recognizer."""

    code: str = "auto"
    name: str = "the language of each utterance"


AUTO = Auto()
Spoken = Language | Auto  # what a session is heard in
CODES: tuple[str, ...] = tuple(language.code for language in LANGUAGES)
SESSION_LANGUAGES: tuple[str, ...] = (*CODES, AUTO.code)  # what a session may ask to be heard in

_BY_CODE = {language.code: language for language in LANGUAGES}


def known(code: object) -> bool:
    return code in _BY_CODE


def get(code: str) -> Language:
    """The language of this code; KeyError for a code not listed here."""
    return _BY_CODE[code]


def spoken(code: str) -> Spoken:
    """What a session asks to be heard in, from its code (an event, the command line): a language, or AUTO;
    KeyError for a code not listed here. Codes are read here once; past the edges the values travel."""
    return AUTO if code == AUTO.code else _BY_CODE[code]


def language_of(text: str) -> Language:
    """The language the text is written in: the first whose script it holds, else the default."""
    return next((language for language in LANGUAGES if language.written_in(text)), DEFAULT)
