"""The languages the assistant speaks, listed once. Config, wiring, NLU routing, the turn policy, replies, the
clients and the benchmarks ask here; adding a language is adding its profile package and one line below.

A text's language is its script: the first language whose script the text holds, else the default (English).
The script decides, not a recognizer's guess: a typed request has none, and Whisper labels mixed speech either way.
"""

from __future__ import annotations

from assistant.language.en.profile import ENGLISH
from assistant.language.profile import Language
from assistant.language.zh.profile import CHINESE

__all__ = ["LANGUAGES", "DEFAULT", "AUTO", "CODES", "SESSION_LANGUAGES", "get", "language_of", "known"]

LANGUAGES: tuple[Language, ...] = (ENGLISH, CHINESE)
DEFAULT = ENGLISH  # always served: the server listens once it is ready; the others are built behind it
AUTO = "auto"  # a session's language when each utterance's language is told apart by the recognizer
CODES: tuple[str, ...] = tuple(language.code for language in LANGUAGES)
SESSION_LANGUAGES: tuple[str, ...] = (*CODES, AUTO)  # what a session may ask to be heard in

_BY_CODE = {language.code: language for language in LANGUAGES}


def known(code: object) -> bool:
    return code in _BY_CODE


def get(code: str) -> Language:
    """The language of this code; KeyError for a code not listed here."""
    return _BY_CODE[code]


def language_of(text: str) -> Language:
    """The language the text is written in: the first whose script it holds, else the default."""
    return next((language for language in LANGUAGES if language.written_in(text)), DEFAULT)
