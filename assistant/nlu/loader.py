"""Assemble the parser from settings: model artifacts (built on first use) + chosen backend + tokenizer."""

from __future__ import annotations

import sys

from assistant.config import Settings
from assistant.nlu.artifacts import ensure_meeting_model
from assistant.nlu.parser import IntentSlotParser
from assistant.nlu.tokenizer import WordPieceTokenizer
from engines.base import BackendOptions
from engines.registry import create_backend

__all__ = ["build_parser"]


def build_parser(settings: Settings, verbose: bool = False) -> IntentSlotParser:
    nlu = settings.nlu
    model = ensure_meeting_model(settings.cache_dir)
    backend = create_backend(nlu.backend, model.files, BackendOptions(nlu.precision, nlu.threads))
    if verbose:
        print(f"[nlu] {backend.info().describe()} from {model.folder}", file=sys.stderr)
    return IntentSlotParser(
        backend, WordPieceTokenizer(model.tokenizer_file), model.labels,
        min_confidence=nlu.min_confidence, max_tokens=nlu.max_tokens, max_chars=nlu.max_chars,
        batch_size=nlu.batch_size,
    )
