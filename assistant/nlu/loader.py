"""Assemble the parser from settings: model artifacts (built on first use) + chosen backend + tokenizer."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

from assistant.booking.dialogue import Dialogue
from assistant.booking.dispatcher import Dispatcher
from assistant.booking.interval import TimePolicy
from assistant.booking.rooms import RoomDirectory
from assistant.booking.sqlite_store import SqliteStore
from assistant.config import Settings
from assistant.errors import ConfigError
from assistant.nlu.artifacts import ensure_meeting_model
from assistant.nlu.parser import IntentSlotParser
from assistant.nlu.tokenizer import WordPieceTokenizer
from assistant.text_pipeline import TextPipeline
from engines.base import BackendOptions, ShapeProfile
from engines.registry import create_backend, create_best_backend

__all__ = ["build_parser", "build_text_pipeline", "shape_profile"]


def shape_profile(settings: Settings) -> ShapeProfile:
    """[nlu] profile_batch / profile_seq as the GPU backends' shapes, refused clearly when malformed."""
    batch, seq = settings.nlu.profile_batch, settings.nlu.profile_seq
    if len(batch) != 3 or len(seq) != 3:
        raise ConfigError(f"[nlu] profile_batch and profile_seq are [min, opt, max]; got {batch!r}, {seq!r}")
    try:
        return ShapeProfile((batch[0], batch[1], batch[2]), (seq[0], seq[1], seq[2]))
    except ValueError as exc:
        raise ConfigError(f"[nlu] {exc}") from exc


def build_parser(settings: Settings, verbose: bool = False) -> IntentSlotParser:
    nlu = settings.nlu
    model = ensure_meeting_model(settings.cache_dir)
    options = BackendOptions(nlu.precision, nlu.threads, shape_profile(settings))
    if nlu.backend == "auto":
        backend, passed_over = create_best_backend(model.files, options)
        if verbose:
            for name, reason in passed_over.items():
                print(f"[nlu] not {name}: {reason}", file=sys.stderr)
    else:
        backend = create_backend(nlu.backend, model.files, options)
    if verbose:
        print(f"[nlu] {backend.info().describe()} from {model.folder}", file=sys.stderr)
    return IntentSlotParser(
        backend, WordPieceTokenizer(model.tokenizer_file), model.labels,
        min_confidence=nlu.min_confidence, max_tokens=nlu.max_tokens, max_chars=nlu.max_chars,
        batch_size=nlu.batch_size,
    )


def build_text_pipeline(settings: Settings, store_file: Path | None = None, verbose: bool = False,
                        commit: bool = True) -> TextPipeline:
    """With commit=False (a dry run) a store file that does not exist yet is not created: an empty in-memory
    store stands in for it."""
    booking = settings.booking
    for name in ("morning_hours", "afternoon_hours"):
        hours = getattr(booking, name)
        if len(hours) != 2 or not all(isinstance(h, int) and 1 <= h <= 12 for h in hours) or hours[0] > hours[1]:
            raise ConfigError(f"[booking] {name} must be [first, last] clock hours 1-12, got {hours!r}")
    policy = TimePolicy(range(booking.morning_hours[0], booking.morning_hours[1] + 1),
                        range(booking.afternoon_hours[0], booking.afternoon_hours[1] + 1),
                        timedelta(minutes=booking.default_duration_minutes))
    rooms = RoomDirectory.load(settings.rooms_file)
    path = store_file or settings.store_file
    store = SqliteStore(path if commit or path.exists() else Path(":memory:"))
    dialogue = Dialogue(Dispatcher(store, rooms), rooms, policy,
                        timedelta(seconds=booking.conversation_idle_seconds))
    return TextPipeline(build_parser(settings, verbose), dialogue)
