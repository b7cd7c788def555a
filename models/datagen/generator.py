"""Generate labelled meeting-booking requests, with a dev split that holds out whole templates.

Every example is rendered from a template (templates.py) with slot values (values.py), then written in one of two
styles: as a speech recognizer writes ("Book Everest tomorrow at 9 a.m. for an hour.") or lower case without
punctuation ("book everest tomorrow at 9 am for an hour"); some get disfluencies ("uh", "um", repeated words).
Seeded: the same seed gives the same data.
"""

from __future__ import annotations

import random
import re

from models.datagen.lexicon import FIRST_NAMES, TITLES
from models.datagen.sampling import GeneratorConfig, generate, split_templates
from models.datagen.template import Piece, Renderer, join_pieces, parse_template, render
from models.datagen.templates import PREFIXES, TEMPLATES
from models.datagen.values import ValueRenderers
from models.example import Example, Span

__all__ = ["TEMPLATES", "render_example", "generate_language_splits"]

_CITIES = ["Paris", "London", "Tokyo", "Berlin", "New York", "Lisbon", "Nairobi", "Denver", "Seoul", "Madrid"]
_CHORES = ["call mom", "buy milk", "water the plants", "pick up the kids", "take my pills", "pay rent",
           "send the report", "check the oven", "walk the dog", "call the plumber"]
_MUSIC = ["jazz", "some music", "the Beatles", "my workout playlist", "lo-fi beats", "Taylor Swift", "the radio",
          "classical music", "a podcast"]
_RESTAURANTS = ["Luigi's", "the Italian place", "Sushi Zen", "Nando's", "the steakhouse", "Chez Marie"]
_FOOD = ["pizza", "coffee", "sandwiches", "a burrito", "milk", "eggs", "bananas", "sushi"]
_HOME_ROOMS = ["kitchen", "living room", "bedroom", "garage", "office", "bathroom"]
_FILLERS = ["uh", "um", "uhm", "er", "like", "you know", "I mean", "hmm", "so", "well", "actually"]

# Text that is not an English request at all: other languages, emoji, keyboard mash, fragments.
_JUNK = [
    "réserve une salle pour demain à neuf heures", "reservar una sala mañana a las diez",
    "ich möchte einen Raum buchen", "明天上午九点预订会议室", "会議室を予約してください", "забронируй переговорку",
    "😀😀😀", "🙂 👍", "🎉", "asdfghjkl", "qwerty uiop", "lorem ipsum dolor sit amet", "blah blah blah",
    "???", "...", "hmm", "uh", "um um", "the", "and then", "zzz", "12345", "3 4 5 6", "a b c d",
    "print('hello world')", "SELECT * FROM rooms;", "<script>alert(1)</script>", "ok ok ok", "la la la",
    "testing testing one two three", "is this thing on", "can you hear me", "sorry wrong button",
    "the meeting went really well", "I hate meetings", "meetings are boring", "that was a long meeting",
    "مرحبا كيف حالك", "नमस्ते", "γεια σου", "hej hej", "ciao bella", "obrigado",
    # Ordinary speech that is no request at all: narration, chat, overheard talk (a microphone hears it all).
    "it was a dark and stormy night", "the captain looked out over the grey sea",
    "and then they walked home together in silence", "I told him it would never work", "we had lunch by the river",
    "the children were playing in the garden all afternoon", "honestly I think the movie was too long",
    "he had always been fond of his sister", "they lived in a large house in the country", "my brother moved to Ohio",
    "it rained the whole weekend so we stayed in", "she read the letter twice before answering",
    "the train was late again this morning", "I don't know what you mean by that", "that's what she said to me",
    "the old man sat by the fire and smoked his pipe", "nobody expected the story to end that way",
    "they had been married for nearly forty years", "the dog barked at the mailman", "I'll be there in a minute",
    "you should have seen his face", "there was nothing left to say", "the coffee here is really good",
    "the village lay quiet under the snow", "her uncle had been a sailor in his youth", "we talked about the past",
    "the meeting yesterday was long and pointless", "I think the booking system is great",
]


def _plain(values: list[str]) -> Renderer:
    def renderer(rng: random.Random, kind: str) -> list[Piece]:
        return [(rng.choice(values), None)]

    return renderer


def _renderers(style: str) -> dict[str, Renderer]:
    table = ValueRenderers(style).table()
    table.update({
        "city": _plain(_CITIES), "chore": _plain(_CHORES), "music": _plain(_MUSIC),
        "restaurant": _plain(_RESTAURANTS), "food": _plain(_FOOD), "home_room": _plain(_HOME_ROOMS),
        "person": _plain(FIRST_NAMES), "junk_phrase": _plain(_JUNK), "title_word": _plain(TITLES),
    })
    return table


def render_example(template: str, intent: str, rng: random.Random) -> Example:
    style = "asr" if rng.random() < 0.6 else "plain"
    pieces: list[Piece] = [(rng.choice(PREFIXES), None)]
    pieces += render(parse_template(template), rng, _renderers(style))
    if intent == "out_of_scope":  # the words of a timer or a restaurant booking are no meeting slots
        pieces = [(text, None) for text, _ in pieces]
    text, spans = join_pieces(pieces)
    if rng.random() < 0.25:
        text, spans = _add_disfluency(text, spans, rng, style)
    text, spans = (_asr_finish if style == "asr" else _plain_finish)(text, spans, rng)
    return Example(text=text, intent=intent, spans=tuple(spans), template=template)


def _free_spaces(text: str, spans: list[Span]) -> list[int]:
    return [i for i, ch in enumerate(text) if ch == " " and not any(s <= i < e for s, e, _ in spans)]


def _insert(text: str, spans: list[Span], at: int, insert: str) -> tuple[str, list[Span]]:
    moved = [(s + len(insert) if s >= at else s, e + len(insert) if e > at else e, lab) for s, e, lab in spans]
    return text[:at] + insert + text[at:], moved


def _add_disfluency(text: str, spans: list[Span], rng: random.Random, style: str) -> tuple[str, list[Span]]:
    for _ in range(rng.choice([1, 1, 2])):
        spaces = _free_spaces(text, spans)
        if not spaces:
            break
        at = rng.choice(spaces)
        if rng.random() < 0.3:  # a repeated word: "at at nine"
            word = text[:at].split(" ")[-1]
            if word and not any(s < at <= e for s, e, _ in spans):
                text, spans = _insert(text, spans, at, " " + word)
                continue
        filler = rng.choice(_FILLERS)
        insert = f", {filler}," if style == "asr" and rng.random() < 0.5 else f" {filler}"
        text, spans = _insert(text, spans, at, insert)
    if rng.random() < 0.3:
        filler = rng.choice(["uh ", "um ", "uh, ", "um, ", "so ", "okay so "])
        text, spans = _insert(text, spans, 0, filler)
    return text, spans


def _delete(text: str, spans: list[Span], drop: set[int]) -> tuple[str, list[Span]]:
    index = []
    count = 0
    for i in range(len(text) + 1):
        index.append(count)
        if i < len(text) and i not in drop:
            count += 1
    out = "".join(ch for i, ch in enumerate(text) if i not in drop)
    return out, [(index[s], index[e], lab) for s, e, lab in spans]


def _asr_finish(text: str, spans: list[Span], rng: random.Random) -> tuple[str, list[Span]]:
    text = re.sub(r"\bi\b(?=[ ']|$)", "I", text)
    text = text[:1].upper() + text[1:]
    question = bool(re.match(r"(?i)(is|are|what|which|when|who|can|could|do|does|will|any|how|am)\b", text))
    end = _choose(rng, [("?" if question else ".", 6), ("", 3), ("!", 0.3)])
    if text.endswith(".") and end == ".":  # "... at 9 a.m." already ends the sentence
        end = ""
    return text + end, spans


def _plain_finish(text: str, spans: list[Span], rng: random.Random) -> tuple[str, list[Span]]:
    # Punctuation goes, except inside numbers and times ("10.30", "9:30") and apostrophes.
    drop = {i for i, ch in enumerate(text) if ch in ',.?!";' and not _between_digits(text, i)}
    text, spans = _delete(text.lower(), spans, drop)
    doubled = {i for i, ch in enumerate(text) if ch == " " and (i == 0 or text[i - 1] == " " or i == len(text) - 1)}
    return _delete(text, spans, doubled)


def _between_digits(text: str, i: int) -> bool:
    return 0 < i < len(text) - 1 and text[i - 1].isdigit() and text[i + 1].isdigit()


def _choose(rng: random.Random, weighted: list[tuple[str, float]]) -> str:
    values = [v for v, _ in weighted]
    return rng.choices(values, weights=[w for _, w in weighted])[0]


def _junk_examples(rng: random.Random, n: int) -> list[Example]:
    return [Example(text=rng.choice(_JUNK), intent="out_of_scope", spans=(), template="junk") for _ in range(n)]


def generate_language_splits(config: GeneratorConfig) -> tuple[list[Example], list[Example]]:
    """(train, dev) in English: dev uses only the held-out templates; junk text goes to both."""
    train_templates, dev_templates = split_templates(config.seed, config.dev_template_fraction, TEMPLATES)
    rng = random.Random(config.seed + 1)
    train = generate(train_templates, config.train_size, rng, render_example) + _junk_examples(
        rng, config.train_size // 20)
    dev = generate(dev_templates, config.dev_size, rng, render_example) + _junk_examples(rng, config.dev_size // 20)
    rng.shuffle(train)
    return train, dev
