"""BIO tags <-> spans, over words.

Decoding follows conlleval: an I- tag that does not continue a span of the same name starts a new one, so a
tagger's stray I- is not silently dropped. The same decoder scores the model (entity-level F1), so evaluation
and serving read tags the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["tags_to_spans", "char_spans_to_tags"]

WordSpan = tuple[int, int, str]  # (first word, last word + 1, slot name)


def tags_to_spans(tags: Sequence[str]) -> list[WordSpan]:
    spans: list[WordSpan] = []
    current: tuple[int, str] | None = None  # (start word, name) of the open span
    for i, tag in enumerate(tags):
        prefix, _, name = tag.partition("-")
        continues = prefix == "I" and current is not None and current[1] == name
        if current is not None and not continues:
            spans.append((current[0], i, current[1]))
            current = None
        if prefix in ("B", "I") and not continues:
            current = (i, name)
    if current is not None:
        spans.append((current[0], len(tags), current[1]))
    return spans


def char_spans_to_tags(word_spans: Sequence[tuple[int, int]], slots: Sequence[tuple[int, int, str]]) -> list[str]:
    """Tag each word B-/I-/O from slot character spans; a word belongs to a slot if it starts inside it."""
    tags = ["O"] * len(word_spans)
    for slot_start, slot_end, name in slots:
        inside = [i for i, (start, _) in enumerate(word_spans) if slot_start <= start < slot_end]
        for n, i in enumerate(inside):
            tags[i] = ("B-" if n == 0 else "I-") + name
    return tags
