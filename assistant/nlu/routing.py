"""One model per language behind one parser: English on MiniLM, Chinese and mixed Chinese-English on
multilingual-e5.

A text goes to the model of the language it is written in (assistant/language/registry.py: "帮我订 Everest 明天下午
三点" holds a Han character, so Chinese). The script decides, not the recognizer's language guess: a typed request
has none, and Whisper labels mixed speech either way. Why two models and not one: docs/multilingual.md (English
keeps its accuracy and its 6-layer latency; the 12-layer multilingual encoder is paid only by the requests that
need it).

One `parse_many` call still makes one model call per model, so the server's batching across connections holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from assistant.language.profile import Language
from assistant.language.registry import DEFAULT, language_of
from assistant.nlu.parser import IntentSlotParser, ParseFailure, Understanding, clean_text
from assistant.nlu.tokenizer import WordPieceTokenizer
from engines.base import NLUBackend

__all__ = ["LanguageRoutedParser"]


class LanguageRoutedParser:
    """Parses like IntentSlotParser, each text with the model of the language it is written in; `backend` and
    `tokenizer` are the default language's (English).

    Another language's parser may come later (a server builds it while it serves English:
    assistant/server/languages.py); until then its texts are refused with `language_unavailable` and the reason
    `waiting(language)` gives. With `load`, a language is loaded on its first text instead (a command that parses:
    English text never waits for Chinese); `load` returns None when it cannot be had now, and the text is refused."""

    def __init__(self, default: IntentSlotParser, others: dict[Language, IntentSlotParser | None] | None = None,
                 waiting: Callable[[Language], str] = lambda language: f"{language.name} is not ready yet",
                 load: Callable[[Language], IntentSlotParser | None] | None = None) -> None:
        self.parsers: dict[Language, IntentSlotParser | None] = {DEFAULT: default, **(others or {})}
        self.waiting = waiting
        self.load = load

    @property
    def default(self) -> IntentSlotParser:
        parser = self.parsers[DEFAULT]
        assert parser is not None
        return parser

    @property
    def backend(self) -> NLUBackend:
        return self.default.backend

    @property
    def tokenizer(self) -> WordPieceTokenizer:
        return self.default.tokenizer

    def install(self, language: Language, parser: IntentSlotParser) -> None:
        """Parse the language's texts with `parser` from now on (one assignment: safe beside a serving thread)."""
        self.parsers[language] = parser

    def parse(self, text: str) -> Understanding | ParseFailure:
        return self.parse_many([text])[0]

    def parse_many(self, texts: Sequence[str]) -> list[Understanding | ParseFailure]:
        by_language: dict[Language, list[int]] = {}
        for i, text in enumerate(texts):
            language = language_of(clean_text(text))
            by_language.setdefault(language if language in self.parsers else DEFAULT, []).append(i)
        results: dict[int, Understanding | ParseFailure] = {}
        for language, indices in by_language.items():
            parser = self.parsers[language]  # read once: it may be set meanwhile, by the thread that built it
            if parser is None and self.load is not None:
                parser = self.load(language)
                if parser is not None:
                    self.install(language, parser)
            if parser is None:
                reason = self.waiting(language)
                results.update({i: ParseFailure(texts[i], "language_unavailable", reason) for i in indices})
            else:
                results.update(zip(indices, parser.parse_many([texts[i] for i in indices]), strict=True))
        return [results[i] for i in range(len(texts))]
