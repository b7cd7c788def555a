"""Shared fixtures: the real trained model (built once into the user's cache on first use) and its parser."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.config import Settings, load_settings
from assistant.nlu.artifacts import NLUModel, ensure_meeting_model
from assistant.nlu.parser import IntentSlotParser
from assistant.server.spawn import spawn_server

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def settings() -> Settings:
    return load_settings(None, os.environ)


@pytest.fixture(scope="session")
def meeting_model(settings: Settings) -> NLUModel:
    # The same cache the README's main command fills: a fresh machine trains once (minutes), then reuses it.
    return ensure_meeting_model(settings.cache_dir)


@pytest.fixture(scope="session")
def parser(settings: Settings, meeting_model: NLUModel) -> IntentSlotParser:
    from assistant.nlu.loader import build_parser

    return build_parser(settings)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, meeting_model: NLUModel) -> Iterator[str]:
    """A real `assistant serve` (real models, a throwaway SQLite store) for one test module: its ws:// URL."""
    proc, url = spawn_server(tmp_path_factory.mktemp("server") / "bookings.sqlite")
    yield url
    proc.terminate()
    proc.wait(30)
