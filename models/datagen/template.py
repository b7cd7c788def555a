"""A tiny template language for utterances with slot spans.

    book {room} {date:on} {start_time:at} [for {duration}]
    (cancel|call off|drop) my {start_time} meeting

- `{label}` / `{label:kind}`: a placeholder, rendered by a named renderer into pieces (text, slot label or None).
- `(a|b|c)`: one alternative, chosen uniformly.
- `[x]`: optional, kept with probability one half.

Rendering yields a list of pieces; joining them gives the text and the exact character spans of every slot.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

__all__ = ["Piece", "Renderer", "Node", "parse_template", "render", "join_pieces"]

# A piece of an utterance: its text and the slot label it belongs to (None: not part of any slot).
Piece = tuple[str, str | None]
Renderer = Callable[[random.Random, str], list[Piece]]  # (rng, kind) -> pieces


@dataclass(frozen=True)
class Literal:
    text: str


@dataclass(frozen=True)
class Placeholder:
    label: str
    kind: str


@dataclass(frozen=True)
class Choice:
    options: tuple[Node, ...]


@dataclass(frozen=True)
class Optional_:
    body: Node


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


Node = Literal | Placeholder | Choice | Optional_ | Seq

_TOKEN = re.compile(r"\{[a-z_]+(?::[a-z_]+)?\}|[()\[\]|]|[^{}()\[\]|]+")


@cache
def parse_template(template: str) -> Node:
    tokens = _TOKEN.findall(template)
    if "".join(tokens) != template:
        raise ValueError(f"unparseable template: {template!r}")
    node, pos = _parse_seq(tokens, 0, closers=())
    if pos != len(tokens):
        raise ValueError(f"unbalanced template: {template!r}")
    return node


def _parse_seq(tokens: list[str], pos: int, closers: tuple[str, ...]) -> tuple[Node, int]:
    items: list[Node] = []
    while pos < len(tokens) and tokens[pos] not in closers:
        tok = tokens[pos]
        if tok == "(":
            options: list[Node] = []
            pos += 1
            while True:
                option, pos = _parse_seq(tokens, pos, closers=("|", ")"))
                options.append(option)
                if pos >= len(tokens):
                    raise ValueError("unclosed '('")
                pos += 1
                if tokens[pos - 1] == ")":
                    break
            items.append(Choice(tuple(options)))
        elif tok == "[":
            body, pos = _parse_seq(tokens, pos + 1, closers=("]",))
            if pos >= len(tokens):
                raise ValueError("unclosed '['")
            items.append(Optional_(body))
            pos += 1
        elif tok.startswith("{"):
            label, _, kind = tok[1:-1].partition(":")
            items.append(Placeholder(label, kind))
            pos += 1
        elif tok in ")]|":
            raise ValueError(f"unexpected {tok!r}")
        else:
            items.append(Literal(tok))
            pos += 1
    return Seq(tuple(items)), pos


def render(node: Node, rng: random.Random, renderers: dict[str, Renderer]) -> list[Piece]:
    if isinstance(node, Literal):
        return [(node.text, None)]
    if isinstance(node, Placeholder):
        return renderers[node.label](rng, node.kind)
    if isinstance(node, Choice):
        return render(rng.choice(node.options), rng, renderers)
    if isinstance(node, Optional_):
        return render(node.body, rng, renderers) if rng.random() < 0.5 else []
    pieces: list[Piece] = []
    for item in node.items:
        pieces += render(item, rng, renderers)
    return pieces


def join_pieces(pieces: list[Piece]) -> tuple[str, list[tuple[int, int, str]]]:
    """Join pieces into one text with single spaces; return the text and its slot spans.

    Adjacent pieces of the same label merge into one span (a renderer may emit a slot in several pieces);
    whitespace at a span's edges is left outside it.
    """
    text = ""
    spans: list[tuple[int, int, str]] = []
    for piece_text, label in pieces:
        if not piece_text:
            continue
        text += piece_text
        if label is None:
            continue
        stripped = piece_text.strip()
        start = len(text) - len(piece_text) + (len(piece_text) - len(piece_text.lstrip()))
        end = start + len(stripped)
        if spans and spans[-1][2] == label and not text[spans[-1][1] : start].strip():
            spans[-1] = (spans[-1][0], end, label)
        else:
            spans.append((start, end, label))
    return _squeeze_spaces(text, spans)


def _squeeze_spaces(text: str, spans: list[tuple[int, int, str]]) -> tuple[str, list[tuple[int, int, str]]]:
    """Collapse runs of spaces (left by empty optionals) and strip the ends, keeping spans aligned."""
    keep: list[int] = []  # new index of each old character, or -1 when dropped
    out: list[str] = []
    for ch in text:
        drop = ch == " " and (not out or out[-1] == " ")
        keep.append(-1 if drop else len(out))
        if not drop:
            out.append(ch)
    while out and out[-1] == " ":
        out.pop()
    new_spans: list[tuple[int, int, str]] = []
    for start, end, label in spans:
        new_start = keep[start]
        new_end = keep[end - 1] + 1
        new_spans.append((new_start, new_end, label))
    result = "".join(out)
    # Punctuation glued after a space (" ,", " .", " ?") reads as no recognizer would write it.
    return _fix_punct_spacing(result, new_spans)


def _fix_punct_spacing(text: str, spans: list[tuple[int, int, str]]) -> tuple[str, list[tuple[int, int, str]]]:
    while True:
        m = re.search(r" ([,.?!])", text)
        if m is None:
            return text, spans
        cut = m.start()
        text = text[:cut] + text[cut + 1 :]
        spans = [(s - (s > cut), e - (e > cut), lab) for s, e, lab in spans]
