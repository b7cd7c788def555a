"""The Chinese generator: held-out templates, labels the tokenizer can express, values the readers can read."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest

from assistant.domain import INTENTS, SLOT_NAMES
from assistant.language.readers import parse_clock, parse_date, parse_duration
from assistant.language.zh.readers import parse_zh_count
from assistant.nlu.bio import char_spans_to_tags, tags_to_spans
from assistant.nlu.tokenizer import WordPieceTokenizer
from models.datagen.sampling import split_templates
from models.datagen.splits import GeneratorConfig, generate_splits
from models.datagen.zh_templates import ZH_TEMPLATES
from models.example import Example
from models.multilingual_encoder import multilingual_encoder_dir
from models.precision_files import calibration_requests
from models.recipe import chinese_characters_apart

CONFIG = GeneratorConfig(train_size=3000, dev_size=600, language="zh")


@pytest.fixture(scope="module")
def splits() -> tuple[list[Example], list[Example]]:
    return generate_splits(CONFIG)


def test_same_seed_same_data(splits: tuple[list[Example], list[Example]]) -> None:
    again = generate_splits(CONFIG)
    assert [e.text for e in again[0][:50]] == [e.text for e in splits[0][:50]]


def test_dev_holds_out_whole_templates(splits: tuple[list[Example], list[Example]]) -> None:
    train_templates, dev_templates = split_templates(CONFIG.seed, CONFIG.dev_template_fraction, ZH_TEMPLATES)
    for intent in ZH_TEMPLATES:
        assert len(dev_templates[intent]) >= 2 and not set(dev_templates[intent]) & set(train_templates[intent])
    held = {t for ts in dev_templates.values() for t in ts}
    assert all(e.template in held or e.template == "junk" for e in splits[1])
    assert not any(e.template in held for e in splits[0])


def test_int8_calibration_requests_are_chinese_from_training_templates_only() -> None:
    # The Chinese model's INT8 Q/DQ file is calibrated on what it will read, not on English requests.
    _, dev_templates = split_templates(CONFIG.seed, CONFIG.dev_template_fraction, ZH_TEMPLATES)
    held = {t for ts in dev_templates.values() for t in ts}
    calibration = calibration_requests(CONFIG, 200)
    assert len(calibration) == 200 and not any(e.template in held for e in calibration)
    assert all(re.search(r"[\u4e00-\u9fff]", e.text) for e in calibration)
    english = calibration_requests(GeneratorConfig(), 50)
    assert not any(re.search(r"[\u4e00-\u9fff]", e.text) for e in english)


def test_requests_are_chinese_with_english_names_and_every_intent(splits: tuple[list[Example], list[Example]]
                                                                  ) -> None:
    train = splits[0]
    assert {e.intent for e in train} == set(INTENTS)
    assert {name for e in train for _, _, name in e.spans} == set(SLOT_NAMES)
    mixed = [e for e in train if re.search(r"[A-Za-z]{3}", e.text) and re.search(r"[\u4e00-\u9fff]", e.text)]
    assert len(mixed) > len(train) // 10  # "帮我订 Everest 明天下午三点"
    everything = " ".join(e.text for e in train)
    for said in ("明天", "后天", "下周一", "这周五", "月", "上午", "下午", "晚上", "中午", "半", "一刻", "一个小时",
                 "半小时", "个钟头", "个人", "珠穆朗玛", "乞力马扎罗", "德纳利", "富士", "马特洪峰", "奥林匹斯"):
        assert said in everything, said


def test_a_day_part_before_a_clock_time_is_the_times(splits: tuple[list[Example], list[Example]]) -> None:
    """明天下午三点 is date 明天 + time 下午三点 in every example: tagged both ways, no model could learn which."""
    for example in splits[0]:
        spans = sorted(example.spans)
        for (_, end, name), (start, _, next_name) in zip(spans, spans[1:], strict=False):
            if name == "date" and next_name == "start_time" and end == start:
                assert not re.search(r"(上午|下午|晚上|早上|中午)$", example.text[:end]), example


def test_every_slot_is_a_run_of_whole_tokens(splits: tuple[list[Example], list[Example]], tmp_path: Path) -> None:
    """With Chinese characters, digits and punctuation apart, the tags can spell every slot exactly (not so with
    SentencePiece's own pieces: 今天的, 日下午, Everest8 crossed a slot boundary in one request in eleven)."""
    from assistant.config import load_settings

    folder = multilingual_encoder_dir(load_settings(None, {}).cache_dir)
    tokenizer_json = chinese_characters_apart(json.loads((folder / "tokenizer.json").read_text()))
    (tmp_path / "tokenizer.json").write_text(json.dumps(tokenizer_json, ensure_ascii=False))
    tokenizer = WordPieceTokenizer(tmp_path / "tokenizer.json")
    examples = [e for e in splits[0] if e.spans]
    wrong = 0
    for example, item in zip(examples, tokenizer.tokenize([e.text for e in examples]), strict=True):
        tags = char_spans_to_tags(item.word_spans, example.spans)
        spans = [(name, example.text[item.word_spans[a][0]: item.word_spans[b - 1][1]])
                 for a, b, name in tags_to_spans(tags)]
        wrong += sorted(spans) != sorted(example.slot_texts())
    assert wrong <= len(examples) * 0.005  # digits run together when punctuation goes: "2:101个小时"


def test_generated_values_are_read_by_the_readers(splits: tuple[list[Example], list[Example]]) -> None:
    today = date(2026, 12, 2)
    readers = {"date": lambda t: parse_date(t, today), "start_time": parse_clock, "end_time": parse_clock,
               "new_time": parse_clock, "duration": parse_duration, "people_count": parse_zh_count}
    seen, unread = 0, []
    for example in splits[0]:
        if example.intent == "out_of_scope":
            continue
        for name, text in example.slot_texts():
            if name in readers:
                seen += 1
                if readers[name](text) is None:
                    unread.append((name, text))
    assert len(unread) <= seen * 0.01, unread[:20]
