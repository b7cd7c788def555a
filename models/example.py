"""One labelled utterance: text, intent and character spans of its slots."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Example", "Span"]

# (start, end, slot name): text[start:end] is the slot's text.
Span = tuple[int, int, str]


@dataclass(frozen=True)
class Example:
    text: str
    intent: str
    spans: tuple[Span, ...]
    template: str = ""  # which template made it; the dev split holds out whole templates

    def slot_texts(self) -> list[tuple[str, str]]:
        return [(name, self.text[start:end]) for start, end, name in self.spans]
