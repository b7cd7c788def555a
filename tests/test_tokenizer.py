import json

import pytest

from assistant.nlu.model_folder import NLUModel
from assistant.nlu.tokenizer import WordPieceTokenizer


@pytest.fixture(scope="module")
def tokenizer(meeting_model: NLUModel) -> WordPieceTokenizer:
    return WordPieceTokenizer(meeting_model.tokenizer_file)


def test_words_follow_bert_pre_tokenizer_and_offsets_are_exact(tokenizer: WordPieceTokenizer,
                                                               meeting_model: NLUModel) -> None:
    tokenizer_file = meeting_model.tokenizer_file
    text = "Book Kilimanjaro at 3.45pm, uh, 10-11"
    (item,) = tokenizer.tokenize([text])
    words = [text[s:e] for s, e in item.word_spans]
    assert words == ["Book", "Kilimanjaro", "at", "3", ".", "45pm", ",", "uh", ",", "10", "-", "11"]
    # [CLS] first, [SEP] last (their ids are the trimmed vocabulary's: models/vocabulary.py renumbers the pieces);
    # every word's first token points inside the sequence
    vocabulary = json.loads(tokenizer_file.read_text())["model"]["vocab"]
    assert item.ids[0] == vocabulary["[CLS]"] and item.ids[-1] == vocabulary["[SEP]"]
    assert all(0 < t < item.num_tokens - 1 for t in item.word_first_token)
    # "kilimanjaro" is several word pieces, tagged on the first only
    assert item.word_first_token[2] - item.word_first_token[1] > 1


def test_batch_pads_to_longest_and_masks(tokenizer: WordPieceTokenizer) -> None:
    items = tokenizer.tokenize(["book everest", "cancel my nine o'clock meeting tomorrow please"])
    batch = tokenizer.batch(items)
    assert batch.input_ids.shape == (2, max(i.num_tokens for i in items))
    assert batch.attention_mask[0].sum() == items[0].num_tokens
    assert (batch.input_ids[0, items[0].num_tokens :] == tokenizer.pad_id).all()
    assert batch.input_ids.dtype.name == "int64"


def test_batch_rounds_length_up_to_a_multiple(tokenizer: WordPieceTokenizer) -> None:
    batch = tokenizer.batch(tokenizer.tokenize(["book everest"]), pad_to_multiple=8)
    assert batch.input_ids.shape == (1, 8)


def test_no_truncation_or_fixed_padding_from_the_package(tokenizer: WordPieceTokenizer) -> None:
    (item,) = tokenizer.tokenize(["word " * 300])
    assert item.num_tokens == 302  # refused later by the parser, never silently cut
    (short,) = tokenizer.tokenize(["hi"])
    assert short.num_tokens == 3


def test_chinese_characters_digits_and_marks_are_words_and_english_words_stay_whole(chinese_model: NLUModel
                                                                                   ) -> None:
    """The Chinese model's SentencePiece tokenizer: a word's span starts past the space SentencePiece glues to it;
    the lone "▁" before the text's first character is a word with that character's span (as trained: the tokenizer
    module says why); padding uses XLM-R's <pad>."""
    tokenizer = WordPieceTokenizer(chinese_model.tokenizer_file)
    text = "帮我订 Kilimanjaro 明天9:30，六个人"
    (item,) = tokenizer.tokenize([text])
    words = [text[s:e] for s, e in item.word_spans]
    assert words == ["帮", "帮", "我", "订", "Kilimanjaro", "明", "天", "9", ":", "30", "，", "六", "个", "人"]
    assert item.word_first_token[5] - item.word_first_token[4] > 1  # Kilimanjaro: several pieces, tagged once
    assert tokenizer.pad_id == 1 and item.ids[0] == 0 and item.ids[-1] == 2  # <pad>, <s>, </s>
