"""A request's slots carried over to what a recognizer wrote for it.

The request's text and slots are known (the generator made them); the recognizer wrote other words ("at ten
thirty for forty five minutes" -> "at 1034 for 45 minutes"). Both are cut into words, each word compared by a
spoken-neutral form (the language's `spoken_words`: lower case, number words as digits, "p.m." as "pm", a Chinese
numeral as its digit), and the two word sequences aligned (difflib's longest matching blocks). A slot takes the
recognized words its own words were aligned with, including a run the recognizer wrote differently ("ten thirty"
-> "1034"). A changed run that
crosses a slot's edge ("book Denali" -> "Booked in Ollie") is cut where its letters line up (difflib again, on the
characters), at a word boundary of each side. Where a slot's words were not heard at all, or the cut leaves a slot
no word, which recognized words are the slot cannot be told: the request is dropped, and the reason counted
(`Misaligned`), never guessed.

What the recognizer could not hear is not taught either: a request of whose words less than half were heard
("What is going on in Matterhorn on Wednesday" -> "You'll be coming over the back and all the way to try"), or a
slot whose heard words keep less than half of its letters ("tomorrow" -> "develop a"), is dropped. Such labels
would teach the model to tag any words as a room or a date; what stays is what a recognizer writes for words it
did hear: "1034", "9.15", "2.5 hours", "sixteen thirty", "Book, Fuji, tomorrow,".
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np

from assistant.language.profile import Language
from assistant.language.registry import language_of
from models.example import Example, Span

__all__ = ["align", "Misaligned", "words", "MIN_HEARD"]

MIN_HEARD = 0.5  # of the request's words (difflib's ratio), and of each slot's letters, that must be heard


class Misaligned(ValueError):
    """Which recognized words are a slot cannot be told; `reason` says why (counted in the corpus header)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class _Word:
    start: int
    end: int
    form: str  # compared form


def words(text: str, language: Language) -> list[_Word]:
    spoken = language.spoken_words
    if spoken is None:
        raise ValueError(f"{language.name} says no spoken words (its profile's spoken_words)")
    return [_Word(start, end, form) for start, end, form in spoken(text)]


def align(example: Example, heard: str) -> Example:
    """`example` with the recognizer's text `heard` and its slots moved onto the words they became."""
    if not heard.strip():
        raise Misaligned("nothing heard")
    language = language_of(example.text)  # the recognizer was told the request's language
    said, got = words(example.text, language), words(heard, language)
    owner = [_slot_of(w, example.spans) for w in said]  # each said word's slot (index into spans), or -1
    heard_by_slot: dict[int, list[int]] = {}
    blocks = SequenceMatcher(None, [w.form for w in said], [w.form for w in got], autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in blocks:
        if tag == "equal":
            for offset in range(i2 - i1):
                heard_by_slot.setdefault(owner[i1 + offset], []).append(j1 + offset)
        elif tag == "insert":
            # words the recognizer added between two words of one slot belong to it
            if 0 < i1 < len(said) and owner[i1 - 1] == owner[i1] != -1:
                heard_by_slot.setdefault(owner[i1], []).extend(range(j1, j2))
        elif tag == "replace":
            for slot, part in _cut(said[i1:i2], owner[i1:i2], got[j1:j2]):
                heard_by_slot.setdefault(slot, []).extend(j1 + j for j in part)
    if SequenceMatcher(None, [w.form for w in said], [w.form for w in got], autojunk=False).ratio() < MIN_HEARD:
        raise Misaligned("heard too little of it")
    spans: list[Span] = []
    for index, (_, _, name) in sorted(enumerate(example.spans), key=lambda item: item[1][0]):
        if index not in owner:
            raise Misaligned("slot without words")
        taken = heard_by_slot.get(index)
        if not taken:
            raise Misaligned("slot not heard")
        span = (got[min(taken)].start, got[max(taken)].end, name)
        own = [w for w, who in zip(said, owner, strict=True) if who == index]
        if _letters_kept(own, got[min(taken):max(taken) + 1]) < MIN_HEARD:
            raise Misaligned("a slot misheard beyond recognition")
        if spans and span[0] < spans[-1][1]:
            raise Misaligned("slots overlap")
        spans.append(span)
    return Example(heard, example.intent, tuple(spans), example.template)


def _letters_kept(said: list[_Word], heard: list[_Word]) -> float:
    """How much of a slot's spoken form its heard words keep (difflib's ratio on the joined forms)."""
    return SequenceMatcher(None, " ".join(w.form for w in said), " ".join(w.form for w in heard),
                           autojunk=False).ratio()


def _slot_of(word: _Word, spans: tuple[Span, ...]) -> int:
    return next((i for i, (start, end, _) in enumerate(spans) if word.start >= start and word.end <= end), -1)


def _cut(said: list[_Word], owner: list[int], got: list[_Word]) -> list[tuple[int, range]]:
    """A changed run's recognized words shared out among the slots (or none, -1) of its said words: all of them
    when one owner has the whole run; else cut at the characters that line up."""
    groups: list[tuple[int, int]] = []  # (owner, number of said words), in order
    for who in owner:
        if groups and groups[-1][0] == who:
            groups[-1] = (who, groups[-1][1] + 1)
        else:
            groups.append((who, 1))
    if len(groups) == 1:
        return [(groups[0][0], range(len(got)))]
    a = " ".join(w.form for w in said)
    b = " ".join(w.form for w in got)
    ends_b = list(np.cumsum([len(w.form) + 1 for w in got]) - 1)  # where each recognized word ends in b
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    out: list[tuple[int, range]] = []
    first_word, done_said = 0, 0
    for who, count in groups[:-1]:
        done_said += count
        edge_a = sum(len(w.form) + 1 for w in said[:done_said]) - 1
        edge_b = _mapped(matcher, edge_a)
        last_word = sum(1 for end in ends_b if end <= edge_b + 0.5 * _word_len(got, ends_b, edge_b))
        out.append((who, range(first_word, max(first_word, last_word))))
        first_word = max(first_word, last_word)
    out.append((groups[-1][0], range(first_word, len(got))))
    return out


def _mapped(matcher: SequenceMatcher[str], position: int) -> float:
    """Where a character position of the said run falls in the heard run, by the nearest characters that match."""
    before = [(block.a, block.b, block.size) for block in matcher.get_matching_blocks() if block.size]
    best = 0.0
    for a, b, size in before:
        if a <= position:
            best = b + min(position - a, size)
    return best


def _word_len(got: list[_Word], ends_b: list[int], edge_b: float) -> int:
    """The length of the heard word the edge falls in: an edge past its middle takes the word along."""
    for word, end in zip(got, ends_b, strict=True):
        if end >= edge_b:
            return len(word.form)
    return 0
