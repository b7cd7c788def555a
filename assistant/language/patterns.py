"""Patterns made of every language's words: code outside this package asks for the words of a kind (the words that
join a time range, that lead an answer) and gets one pattern holding each language's, never a word list of its
own (tests/test_language_seam.py checks)."""

from __future__ import annotations

from collections.abc import Callable

from assistant.language.profile import Language
from assistant.language.registry import LANGUAGES

__all__ = ["every_language"]


def every_language(part: Callable[[Language], str]) -> str:
    """One regex source with each language's alternative (the languages that have one), in registry order."""
    return "|".join(source for language in LANGUAGES if (source := part(language)))
