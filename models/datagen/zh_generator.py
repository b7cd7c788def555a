"""Generate labelled Chinese (and mixed Chinese-English) meeting requests, dev holding out whole templates.

The same template language and intent mix as the English generator (generator.py); the values come from
zh_values.py and the phrasings from zh_templates.py. Each request is written in one of two styles: as Whisper
writes Chinese (full-width punctuation, "明天上午9点。") or bare, without punctuation; numbers in characters or
digits (one choice per request, as a recognizer makes it); some get fillers (嗯, 那个) where no value is.
"""

from __future__ import annotations

import random
import re

from models.datagen.sampling import GeneratorConfig, generate, split_templates
from models.datagen.template import Piece, Renderer, join_pieces, parse_template, render
from models.datagen.zh_templates import ZH_FILLERS, ZH_JUNK, ZH_PREFIXES, ZH_TEMPLATES
from models.datagen.zh_values import ZhValueRenderers
from models.example import Example, Span

__all__ = ["TEMPLATES", "render_example", "generate_language_splits"]

TEMPLATES = ZH_TEMPLATES

_QUESTION_END = re.compile(r"(吗|呢|么|有空|空不空|几点|什么时候|哪些|多久)$")
_PUNCTUATION = "，。？！,?!"
_DAY_PARTS = ("上午", "下午", "中午", "晚上", "早上")


def _junk(rng: random.Random, kind: str) -> list[Piece]:
    return [(rng.choice(ZH_JUNK), None)]


def _renderers(digits: bool) -> dict[str, Renderer]:
    return {**ZhValueRenderers(digits).table(), "junk": _junk}


def render_example(template: str, intent: str, rng: random.Random) -> Example:
    pieces: list[Piece] = [(rng.choice(ZH_PREFIXES), None)]
    pieces += render(parse_template(template), rng, _renderers(digits=rng.random() < 0.45))
    if intent == "out_of_scope":  # the times of an alarm or a train ticket are no meeting slots
        pieces = [(text, None) for text, _ in pieces]
    text, spans = join_pieces(pieces)
    if rng.random() < 0.2:
        text, spans = _add_filler(text, spans, rng)
    if rng.random() < 0.6:
        end = "？" if _QUESTION_END.search(text) else "。"
        text += end if rng.random() < 0.85 else ""
    else:
        text, spans = _strip_punctuation(text, spans)
    return Example(text=text, intent=intent, spans=tuple(_day_part_to_clock(text, spans)), template=template)


def _day_part_to_clock(text: str, spans: list[Span]) -> list[Span]:
    """明天下午 + 三点 -> 明天 + 下午三点: a day part said between a day and a clock time belongs to the time, in
    every example alike (tagged now with the one, now with the other, no model could learn which). A day part
    with no time after it stays with the day ("明天下午有空吗")."""
    ordered = sorted(spans)
    for i in range(len(ordered) - 1):
        (start, end, label), (next_start, next_end, next_label) = ordered[i], ordered[i + 1]
        part = next((p for p in _DAY_PARTS if text[start:end].endswith(p)), None)
        if (part and label in ("date", "new_date") and next_label in ("start_time", "end_time", "new_time")
                and next_start == end and end - len(part) > start):
            ordered[i] = (start, end - len(part), label)
            ordered[i + 1] = (end - len(part), next_end, next_label)
    return ordered


def _add_filler(text: str, spans: list[Span], rng: random.Random) -> tuple[str, list[Span]]:
    """A filler at a place no value covers, between two Chinese characters (never inside an English word)."""
    places = [i for i in range(1, len(text))
              if not any(s < i < e for s, e, _ in spans) and not (text[i - 1].isascii() and text[i].isascii())]
    if not places:
        return text, spans
    at = rng.choice(places)
    insert = rng.choice(ZH_FILLERS) + ("，" if rng.random() < 0.5 else "")
    moved = [(s + len(insert) if s >= at else s, e + len(insert) if e > at else e, lab) for s, e, lab in spans]
    return text[:at] + insert + text[at:], moved


def _strip_punctuation(text: str, spans: list[Span]) -> tuple[str, list[Span]]:
    """Without punctuation, as some recognizers write; a mark between two digits stays ("4:20，2个小时" would read
    as "4:202个小时", which no recognizer writes)."""
    keep = [ch not in _PUNCTUATION or (0 < i < len(text) - 1 and text[i - 1].isdigit() and text[i + 1].isdigit())
            for i, ch in enumerate(text)]
    index = [0]
    for kept in keep:
        index.append(index[-1] + kept)
    out = "".join(ch for ch, kept in zip(text, keep, strict=True) if kept)
    return out, [(index[s], index[e], lab) for s, e, lab in spans]


def _junk_examples(rng: random.Random, n: int) -> list[Example]:
    return [Example(text=rng.choice(ZH_JUNK), intent="out_of_scope", spans=(), template="junk") for _ in range(n)]


def generate_language_splits(config: GeneratorConfig) -> tuple[list[Example], list[Example]]:
    """(train, dev) in Chinese: dev uses only the held-out templates; junk text goes to both."""
    train_templates, dev_templates = split_templates(config.seed, config.dev_template_fraction, ZH_TEMPLATES)
    rng = random.Random(config.seed + 1)
    train = generate(train_templates, config.train_size, rng, render_example) + _junk_examples(
        rng, config.train_size // 20)
    dev = generate(dev_templates, config.dev_size, rng, render_example) + _junk_examples(rng, config.dev_size // 20)
    rng.shuffle(train)
    return train, dev
