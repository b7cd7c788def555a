import re
from collections import Counter

import pytest

from assistant.domain import INTENTS, SLOT_NAMES
from models.datagen.generator import GeneratorConfig, generate_splits, split_templates
from models.datagen.templates import TEMPLATES
from models.example import Example

CONFIG = GeneratorConfig(seed=5, train_size=4000, dev_size=600)


@pytest.fixture(scope="module")
def splits() -> tuple[list[Example], list[Example]]:
    return generate_splits(CONFIG)


def test_same_seed_same_data(splits: tuple[list[Example], list[Example]]) -> None:
    assert generate_splits(CONFIG) == splits
    assert generate_splits(GeneratorConfig(seed=6, train_size=4000, dev_size=600))[0] != splits[0]


def test_dev_holds_out_whole_templates() -> None:
    train, dev = split_templates(13, 0.2)
    for intent in TEMPLATES:
        assert dev[intent], intent
        assert not set(train[intent]) & set(dev[intent])
        assert sorted(train[intent] + dev[intent]) == sorted(TEMPLATES[intent])


def test_dev_examples_come_only_from_held_out_templates(splits: tuple[list[Example], list[Example]]) -> None:
    train, dev = splits
    train_templates = {e.template for e in train} - {"junk"}
    assert not train_templates & ({e.template for e in dev} - {"junk"})


def test_labels_are_the_product_names_and_spans_are_clean(splits: tuple[list[Example], list[Example]]) -> None:
    train, dev = splits
    assert {e.intent for e in train} == set(INTENTS)
    names = Counter(name for e in train for _, _, name in e.spans)
    assert set(names) == set(SLOT_NAMES)
    for e in train + dev:
        for start, end, _ in e.spans:
            piece = e.text[start:end]
            assert piece and piece == piece.strip(), (e.text, piece)
        if e.intent == "out_of_scope":
            assert not e.spans


def test_covers_the_phrasings_users_say(splits: tuple[list[Example], list[Example]]) -> None:
    train, _ = splits
    texts = [e.text for e in train]
    everything = "\n".join(texts)
    for needle in ["a.m.", "p.m.", "half past", "quarter to", "noon", "the day after tomorrow", "next ",
                   " uh", " um", "between ", "half an hour", "an hour and a half", "o'clock"]:
        assert needle in everything, needle
    assert re.search(r"\b\d{1,2}-\d{1,2}\b", everything), "compact ranges like 10-11"
    assert re.search(r"\b\d{1,2}\.\d\d", everything), "times written 10.30"
    assert re.search(r"\b\d\.\d\d ?pm\b", everything), "times written 3.45pm"
    assert re.search(r"\b(1[3-9]|2[0-3]):\d\d\b", everything), "24 h times"
    assert re.search(r"\b(nine|ten|eleven) (thirty|fifteen|forty-five)\b", everything), "numbers as words"
    lower = [t for t in texts if t == t.lower() and not re.search(r"[,?!]", t)]
    cased = [t for t in texts if t[:1].isupper() and t.rstrip()[-1:] in ".?"]
    assert len(lower) > len(texts) // 5 and len(cased) > len(texts) // 5
    # telegraphic requests: a room, a date and a range with no verb
    assert any(e.intent == "book_meeting" and not re.search(r"(?i)book|reserve", e.text) and len(e.spans) >= 3
               for e in train)
