"""The encoder's vocabulary trimmed to the pieces a model can be handed, so the shipped files are small.

The word embeddings are most of a small encoder's weights (MiniLM: 11.7M of 22.7M; the multilingual encoder: 38M
of 59M after its script pruning). The recipe keeps:

- every piece the tokenizer cuts the training text into (generated requests and the heard corpus's training rows);
- of the rest, only pieces the tokenizer's own pre-tokenizer can hand to the model: the Chinese model reads every
  Han character, run of digits and punctuation mark as a word of its own (models/recipe.py), so "九点", "▁9" and
  ")," can never be looked up;
- only pieces in the model's scripts: Latin (and, for a tokenizer that reads Chinese, CJK); WordPiece's
  "[unused12]" and Devanagari never reach the English model, whose requests the language router sends it;
- every single character of those scripts, alone and as a continuation ("a", "##a", "▁a", "九");
- for a multilingual vocabulary, Latin pieces only where they are English words (the English encoder's WordPiece
  vocabulary): XLM-R spends most of its Latin pieces on Norwegian, Romanian and Indonesian ("▁Jeg", "▁fost"),
  while the Chinese model reads English room names and the odd English word.

WordPiece takes the longest kept prefix and unigram Viterbi the best kept segmentation, so any text whose full
tokenization uses kept pieces only is cut exactly as before; the recipe checks that on its training text. The word
embeddings are frozen in training (TrainConfig), so on such text the trimmed model is the untrimmed one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

__all__ = ["VocabularyTrim", "kept_pieces", "trim_tokenizer", "trim_encoder_folder"]


@dataclass(frozen=True)
class VocabularyTrim:
    before: int
    kept: int
    from_text: int  # pieces the training text uses
    characters: int  # single-character pieces besides those

    def as_dict(self) -> dict[str, int]:
        return {"before": self.before, "kept": self.kept, "from_training_text": self.from_text,
                "single_characters": self.characters}


def _pieces(tokenizer_json: dict[str, Any]) -> list[str]:
    """The pieces by id."""
    vocab = tokenizer_json["model"]["vocab"]
    if isinstance(vocab, dict):  # WordPiece: piece -> id
        pieces = [""] * len(vocab)
        for piece, index in vocab.items():
            pieces[index] = piece
        return pieces
    return [piece for piece, _ in vocab]  # Unigram: [piece, log probability] by id


_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x3000, 0x303F), (0xFF00, 0xFFEF))  # ideographs, CJK punctuation


def _in_scripts(piece: str, chinese: bool) -> bool:
    """Latin (ASCII to Latin Extended-B) and the SentencePiece space mark; CJK too for a model reading Chinese."""
    return all(ord(ch) < 0x250 or ch == "\u2581" or (chinese and any(a <= ord(ch) <= b for a, b in _CJK))
               for ch in piece)


def _continuation(piece: str) -> tuple[str, bool]:
    """The piece's letters and whether it continues a word ("##ing", "ing" in SentencePiece) or starts one."""
    if piece.startswith("##"):
        return piece[2:], True
    if piece.startswith("\u2581"):
        return piece[1:], False
    return piece, True


def kept_pieces(tokenizer_json: dict[str, Any], texts: Iterable[str], english_words: set[str] | None = None
                ) -> tuple[list[int], VocabularyTrim]:
    """The ids to keep (ascending, the special tokens among them) and what each rule contributed.
    `english_words`: WordPiece pieces ("meeting", "##ing"); given, the Latin pieces of several letters are kept
    only where they are one of them."""
    tokenizer = Tokenizer.from_str(json.dumps(tokenizer_json))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    used: set[int] = set()
    for encoding in tokenizer.encode_batch(list(texts)):
        used.update(encoding.ids)
    pieces = _pieces(tokenizer_json)
    pre_tokenizer = tokenizer.pre_tokenizer
    chinese = tokenizer_json["model"]["type"] == "Unigram"  # the multilingual encoder: the one reading Chinese

    def reachable(piece: str) -> bool:
        if pre_tokenizer is None or piece.startswith("##"):
            return True
        got = [word for word, _ in pre_tokenizer.pre_tokenize_str(piece.replace("\u2581", " "))]
        return len(got) == 1 and got[0] in (piece, "\u2581" + piece)

    specials = {token["id"] for token in tokenizer_json["added_tokens"] if token["id"] < len(pieces)}
    characters = 0
    keep = set(used | specials)
    for index, piece in enumerate(pieces):
        letters, continues = _continuation(piece)
        if index in keep or not letters or not _in_scripts(letters, chinese) or piece.startswith("[unused"):
            continue
        if not reachable(piece):
            continue
        if len(letters) == 1:
            characters += 1
            keep.add(index)
        elif english_words is None or not letters.isascii() or \
                (("##" if continues else "") + letters.lower()) in english_words:
            keep.add(index)
    return sorted(keep), VocabularyTrim(len(pieces), len(keep), len(used), characters)


def trim_tokenizer(tokenizer_json: dict[str, Any], keep: list[int]) -> dict[str, Any]:
    """tokenizer.json with only the pieces `keep` (old ids, ascending), renumbered in that order; special
    tokens that are not kept are dropped."""
    new_id = {old: new for new, old in enumerate(keep)}
    out: dict[str, Any] = json.loads(json.dumps(tokenizer_json))  # a deep copy
    model = out["model"]
    if isinstance(model["vocab"], dict):
        pieces = _pieces(tokenizer_json)
        model["vocab"] = {pieces[old]: new for old, new in new_id.items()}
    else:
        model["vocab"] = [tokenizer_json["model"]["vocab"][old] for old in keep]
        model["unk_id"] = new_id[tokenizer_json["model"]["unk_id"]]
    out["added_tokens"] = [dict(token, id=new_id[token["id"]]) for token in tokenizer_json["added_tokens"]
                           if token["id"] in new_id]
    processor = out.get("post_processor") or {}
    for special in processor.get("special_tokens", {}).values():
        special["ids"] = [new_id[i] for i in special["ids"]]
    if out.get("padding"):
        out["padding"]["pad_id"] = new_id[out["padding"]["pad_id"]]
    return out


def trim_encoder_folder(source: Path, target: Path, tokenizer_json: dict[str, Any], keep: list[int]) -> None:
    """A copy of the pretrained encoder folder (config.json, model.safetensors) with only the kept rows of the
    word embeddings and `tokenizer_json` trimmed to match: what training starts from."""
    from safetensors.numpy import load_file, save_file

    weights = load_file(str(source / "model.safetensors"))
    name = next(n for n in weights if n.endswith("embeddings.word_embeddings.weight"))
    weights[name] = np.ascontiguousarray(weights[name][keep])
    save_file(weights, str(target / "model.safetensors"))
    config = json.loads((source / "config.json").read_text())
    config["vocab_size"] = len(keep)
    if config.get("pad_token_id") is not None:
        config["pad_token_id"] = keep.index(config["pad_token_id"])
    (target / "config.json").write_text(json.dumps(config, indent=1))
    (target / "tokenizer.json").write_text(json.dumps(trim_tokenizer(tokenizer_json, keep), ensure_ascii=False))
