"""Shared fixtures: the real trained model (built once into the user's cache on first use), its parser, and real
servers.

Test order must never change a result (the suite runs shuffled). So a test that books rooms gets a server of its
own with an empty store (`own_server`); the module's shared `server` is for tests that book nothing, and says so
at the end of the module if one did.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.bench.radicale import RadicaleServer
from assistant.booking.rooms import RoomDirectory
from assistant.config import Settings, load_settings
from assistant.language.registry import get
from assistant.nlu.model_folder import NLUModel
from assistant.nlu.parser import IntentSlotParser
from assistant.server.spawn import spawn_server

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def settings() -> Settings:
    return load_settings(None, os.environ)


@pytest.fixture(scope="session")
def meeting_model(settings: Settings) -> NLUModel:
    # The whole build (FP32 ONNX and weights besides the INT8 file servers load from models/shipped): what
    # `assistant train --check` leaves in the cache in CI; a machine without it trains once (minutes).
    from assistant.wiring import language_model

    return language_model(settings, get("en"), whole=True)


@pytest.fixture(scope="session")
def chinese_model(settings: Settings) -> NLUModel:
    """The Chinese and mixed-language model, built once like the English one."""
    from assistant.wiring import language_model

    return language_model(settings, get("zh"), whole=True)


@pytest.fixture(scope="session")
def parser(settings: Settings, meeting_model: NLUModel) -> IntentSlotParser:
    from assistant.wiring import build_parser

    return build_parser(settings, meeting_model)


def _bookings(store: Path) -> int:
    if not store.exists():
        return 0
    with sqlite3.connect(store) as db:
        return int(db.execute("SELECT count(*) FROM bookings").fetchone()[0])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, meeting_model: NLUModel) -> Iterator[str]:
    """A real `assistant serve` (real models) shared by one module's tests that book nothing: its ws:// URL."""
    store = tmp_path_factory.mktemp("server") / "bookings.sqlite"
    proc, url = spawn_server(store)
    yield url
    proc.terminate()
    proc.wait(30)
    assert _bookings(store) == 0, "a test booked on the shared server: give it own_server, so order cannot matter"


@pytest.fixture()
def own_server(tmp_path: Path, meeting_model: NLUModel) -> Iterator[str]:
    """A real `assistant serve` with an empty store of its own, for one test that books."""
    proc, url = spawn_server(tmp_path / "bookings.sqlite")
    yield url
    proc.terminate()
    proc.wait(30)


@pytest.fixture(scope="session")
def radicale() -> Iterator[RadicaleServer]:
    """A real CalDAV server (Radicale, its own process) on a free loopback port with a throwaway folder, once per
    session; each test keeps to calendars of its own (`room_calendars`)."""
    with RadicaleServer() as server:
        yield server


@pytest.fixture()
def room_calendars(radicale: RadicaleServer) -> dict[str, str]:
    """A calendar per room of the default directory, new for this test: room key -> calendar URL."""
    rooms = RoomDirectory.load(REPO / "configs" / "rooms.toml")
    return radicale.make_calendars([room.key for room in rooms.rooms], f"t{uuid.uuid4().hex[:10]}-")
