"""The character ranges of the scripts the languages are written in. A profile's `script` pattern is made from
these; the tokenizer (assistant/nlu/tokenizer.py) and the training recipe split Han text a character a token with
the same ranges, so they live here once (this file is one of the recipe's sources: a change retrains)."""

from __future__ import annotations

__all__ = ["HAN", "HAN_COMPATIBILITY"]

HAN = "\u3400-\u4dbf\u4e00-\u9fff"  # CJK unified ideographs and extension A: what Chinese text is written in
HAN_COMPATIBILITY = "\uf900-\ufaff"  # compatibility ideographs: split like Han by the tokenizer, rare in speech
