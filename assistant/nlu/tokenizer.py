"""Sub-word tokenization shared by training and every backend: WordPiece (MiniLM) and SentencePiece (XLM-R).

Words are the pre-tokenizer's words (WordPiece: whitespace and punctuation split, "3.45pm" -> "3", ".", "45pm";
SentencePiece: whitespace only), so a slot boundary always falls between words. Chinese has no spaces: there a
piece that holds a Chinese character is a word of its own ("明天|上午|九|点"; WordPiece already splits every
character). A word's tag is predicted on its first sub-token (JointBERT); its character span runs from its first
sub-token's start to its last sub-token's end (past the space SentencePiece glues to a word's start), so slot text
is always an exact substring of what was said.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from tokenizers import Encoding, Tokenizer

from assistant.language.script import HAN, HAN_COMPATIBILITY

__all__ = ["Batch", "WordPieceTokenizer", "TokenizedText"]

# Han characters (also the compatibility ideographs): each one a word, as the Chinese model was trained
_CHARACTER_WORDS = re.compile(f"[{HAN}{HAN_COMPATIBILITY}]")


@dataclass(frozen=True)
class TokenizedText:
    """One text: token ids, and for every word its first token index and character span."""

    ids: list[int]
    word_first_token: list[int]
    word_spans: list[tuple[int, int]]

    @property
    def num_tokens(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class Batch:
    input_ids: NDArray[np.int64]  # (batch, seq), padded with the pad id
    attention_mask: NDArray[np.int64]  # (batch, seq), 1 for real tokens


class WordPieceTokenizer:
    def __init__(self, tokenizer_file: Path | None = None, tokenizer: Tokenizer | None = None) -> None:
        if tokenizer is None:
            if tokenizer_file is None:
                raise ValueError("a tokenizer file or a tokenizer")
            tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tok = tokenizer
        # The model package ships fixed padding to 128 and truncation; we pad per batch and refuse long input.
        self._tok.no_padding()
        self._tok.no_truncation()
        pad_id = self._tok.token_to_id("[PAD]")  # WordPiece's; SentencePiece (XLM-R) calls it <pad>
        pad_id = self._tok.token_to_id("<pad>") if pad_id is None else pad_id
        self.pad_id = 0 if pad_id is None else pad_id

    @classmethod
    def from_json(cls, tokenizer_json: dict[str, Any]) -> WordPieceTokenizer:
        return cls(tokenizer=Tokenizer.from_str(json.dumps(tokenizer_json)))

    def tokenize(self, texts: Sequence[str]) -> list[TokenizedText]:
        texts = list(texts)
        return [_words(enc, text) for enc, text in zip(self._tok.encode_batch(texts), texts, strict=True)]

    def batch(self, items: Sequence[TokenizedText], pad_to_multiple: int = 1) -> Batch:
        """Pad to the longest item (rounded up to a multiple, so shape-specialized engines see few shapes)."""
        longest = max(item.num_tokens for item in items)
        length = -(-longest // pad_to_multiple) * pad_to_multiple
        ids = np.full((len(items), length), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(items), length), dtype=np.int64)
        for row, item in enumerate(items):
            ids[row, : item.num_tokens] = item.ids
            mask[row, : item.num_tokens] = 1
        return Batch(ids, mask)


def _words(enc: Encoding, text: str) -> TokenizedText:
    first: list[int] = []
    spans: list[tuple[int, int]] = []
    previous: int | None = None
    previous_chinese = False
    for index, (word, (start, end)) in enumerate(zip(enc.word_ids, enc.offsets, strict=True)):
        while start < end and text[start].isspace():  # SentencePiece's "▁Everest" covers the space before it
            start += 1
        if word is None or start >= end:  # [CLS], [SEP], <s>, </s>
            # SentencePiece's lone "▁" before a text's first Chinese character claims that character's offsets
            # and stays a word of its own (a slot there starts on it): the Chinese model was trained so, and one
            # training without it scored lower on dev (sentence accuracy 88.6 % against 92.9 %).
            previous = None if word is None else previous
            continue
        chinese = _CHARACTER_WORDS.search(text, start, end) is not None
        if word != previous or chinese or previous_chinese:
            first.append(index)
            spans.append((start, end))
        else:
            spans[-1] = (spans[-1][0], end)
        previous, previous_chinese = word, chinese
    return TokenizedText(ids=list(enc.ids), word_first_token=first, word_spans=spans)
