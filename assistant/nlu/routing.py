"""Two models behind one parser: English on MiniLM, Chinese and mixed Chinese-English on multilingual-e5.

A text goes to the Chinese model when it holds a Chinese character ("帮我订 Everest 明天下午三点" does), to the
English one otherwise. The script decides, not the recognizer's language guess: a typed request has none, and
Whisper labels mixed speech either way. Why two models and not one: docs/multilingual.md (English keeps its
accuracy and its 6-layer latency; the 12-layer multilingual encoder is paid only by the requests that need it).

One `parse_many` call still makes one model call per model, so the server's batching across connections holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from assistant.booking.zh_time import has_chinese
from assistant.nlu.parser import IntentSlotParser, ParseFailure, Understanding, clean_text
from assistant.nlu.tokenizer import WordPieceTokenizer
from engines.base import NLUBackend

__all__ = ["LanguageRoutedParser"]


class LanguageRoutedParser:
    """Parses like IntentSlotParser; `backend` and `tokenizer` are the English model's (the default one).

    `chinese` may come later (a server builds it while it serves English: assistant/server/languages.py); until
    then a Chinese text is refused with `language_unavailable` and the reason `waiting()` gives."""

    def __init__(self, english: IntentSlotParser, chinese: IntentSlotParser | None,
                 waiting: Callable[[], str] = lambda: "Chinese is not ready yet") -> None:
        self.english = english
        self.chinese = chinese
        self.waiting = waiting

    @property
    def backend(self) -> NLUBackend:
        return self.english.backend

    @property
    def tokenizer(self) -> WordPieceTokenizer:
        return self.english.tokenizer

    def parse(self, text: str) -> Understanding | ParseFailure:
        return self.parse_many([text])[0]

    def parse_many(self, texts: Sequence[str]) -> list[Understanding | ParseFailure]:
        chinese = [i for i, text in enumerate(texts) if has_chinese(clean_text(text))]
        english = sorted(set(range(len(texts))) - set(chinese))
        results: dict[int, Understanding | ParseFailure] = {}
        chinese_parser = self.chinese  # read once: it may be set meanwhile, by the thread that built it
        if chinese_parser is None and chinese:
            reason = self.waiting()
            results.update({i: ParseFailure(texts[i], "language_unavailable", reason) for i in chinese})
            chinese = []
        for parser, indices in ((self.english, english), (chinese_parser, chinese)):
            if indices and parser is not None:
                results.update(zip(indices, parser.parse_many([texts[i] for i in indices]), strict=True))
        return [results[i] for i in range(len(texts))]
