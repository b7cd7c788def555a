"""Spoken requests through real voice servers (`assistant serve`, tiny.en, the real NLU model) into a real Radicale:
a booking lands in the room's calendar, another app's event is refused with another room offered, two servers
racing for one slot make exactly one booking every round, and a calendar server that is down is said plainly and
books nothing until it is back."""

from __future__ import annotations

import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import icalendar
import pytest
from caldav.davclient import DAVClient

from assistant.bench.radicale import RadicaleServer
from assistant.booking.rooms import RoomDirectory
from assistant.config import DEFAULT_CONFIG
from assistant.nlu.model_folder import NLUModel
from assistant.server.spawn import spawn_server
from tests.schema import assert_valid_result
from tests.test_voice_server import DATA, of, send

BERLIN = ZoneInfo("Europe/Berlin")
WAV = DATA / "book_everest_tomorrow_9.wav"  # "book everest tomorrow at 9 for an hour"
ROOMS = [room.key for room in RoomDirectory.load(DEFAULT_CONFIG.parent / "rooms.toml").rooms]


def write_config(folder: Path, url: str, space: str) -> Path:
    """A config beside its own room directory, each room mapped to its calendar (as an administrator would)."""
    folder.mkdir(parents=True, exist_ok=True)
    rooms = (DEFAULT_CONFIG.parent / "rooms.toml").read_text()
    for key in ROOMS:  # a calendar line after each room's name
        name = f'name = "{key.capitalize()}"'
        rooms = rooms.replace(name, f'{name}\ncalendar = "{space}{key}/"')
    (folder / "rooms.toml").write_text(rooms)
    config = folder / "config.toml"
    config.write_text(f'[store]\nbackend = "caldav"\nurl = "{url}"\ntimeout_s = 2.0\n\n[nlu]\nlanguages = ["en"]\n')
    return config


def caldav_env(radicale: RadicaleServer) -> dict[str, str]:
    return {**os.environ, "ASSISTANT_CALDAV_USER": radicale.username, "ASSISTANT_CALDAV_PASSWORD": radicale.password}


def events_on(radicale: RadicaleServer, url: str, day: datetime) -> list[Any]:
    """The room's events that day, read as a calendar app reads them."""
    client = DAVClient(url=url, username=radicale.username, password=radicale.password, enable_rfc6764=False)
    return list(client.calendar(url=url).search(start=day, end=day + timedelta(days=1), event=True, expand=False))


def at(day: int) -> list[str]:
    return ["--now", f"2026-12-{day:02d}T10:00:00", "--tz", "Europe/Berlin"]


def result_of(events: list[dict[str, Any]]) -> dict[str, Any]:
    results = of(events, "result")
    assert len(results) == 1, events
    result: dict[str, Any] = results[0]["result"]
    assert_valid_result(result)
    return result


@pytest.fixture(scope="module")
def calendars(radicale: RadicaleServer) -> dict[str, str]:
    return radicale.make_calendars(ROOMS, "voice-")


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory, radicale: RadicaleServer, calendars: dict[str, str],
            meeting_model: NLUModel) -> Iterator[list[str]]:
    """Two voice servers (gateways) sharing the calendars; each test below books on days of its own."""
    config = write_config(tmp_path_factory.mktemp("caldav-voice"), radicale.home, "voice-")
    started = [spawn_server(None, ["--config", str(config)], env=caldav_env(radicale)) for _ in range(2)]
    yield [url for _, url in started]
    for proc, _ in started:
        proc.terminate()
        proc.wait(30)


def test_a_spoken_request_books_into_the_rooms_calendar(servers: list[str], radicale: RadicaleServer,
                                                        calendars: dict[str, str]) -> None:
    result = result_of(send(servers[0], WAV, *at(2)))
    assert result["type"] == "command" and result["committed"], result
    command = result["command"]
    assert (command["room"], command["start"], command["end"]) == (
        "everest", "2026-12-03T09:00:00+01:00", "2026-12-03T10:00:00+01:00")
    found = events_on(radicale, calendars["everest"], datetime(2026, 12, 3, tzinfo=BERLIN))
    assert len(found) == 1
    event = icalendar.Calendar.from_ical(found[0].data).walk("VEVENT")[0]
    assert str(event["UID"]) == command["booking_id"]
    assert event.decoded("DTSTART") == datetime(2026, 12, 3, 9, tzinfo=BERLIN)
    assert event["DTSTART"].params["TZID"] == "Europe/Berlin"


def test_a_slot_booked_in_a_calendar_app_is_refused_and_another_room_offered(
        servers: list[str], radicale: RadicaleServer, calendars: dict[str, str]) -> None:
    nine = datetime(2026, 12, 10, 9, tzinfo=BERLIN)
    client = DAVClient(url=calendars["everest"], username=radicale.username, password=radicale.password,
                       enable_rfc6764=False)
    client.calendar(url=calendars["everest"]).add_event(dtstart=nine, dtend=nine + timedelta(hours=1),
                                                        summary="booked in a calendar app")
    result = result_of(send(servers[1], WAV, *at(9)))
    assert result["type"] == "clarify" and result["options"], result
    assert result["options"][0]["room"] != "everest"
    assert result["options"][0]["start"] == nine.isoformat()
    assert len(events_on(radicale, calendars["everest"], nine.replace(hour=0))) == 1  # theirs, untouched


@pytest.mark.parametrize("round_", range(3))
def test_two_servers_racing_for_one_slot_book_it_once(servers: list[str], radicale: RadicaleServer,
                                                      calendars: dict[str, str], round_: int) -> None:
    day = 15 + round_
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda url: result_of(send(url, WAV, *at(day))), servers))
    assert sorted(r["type"] for r in results) == ["clarify", "command"], results
    booked = [r for r in results if r["type"] == "command"][0]
    assert booked["committed"] and booked["command"]["room"] == "everest"
    found = events_on(radicale, calendars["everest"], datetime(2026, 12, day + 1, tzinfo=BERLIN))
    assert [str(icalendar.Calendar.from_ical(e.data).walk("VEVENT")[0]["UID"]) for e in found] == \
        [booked["command"]["booking_id"]]


def _health(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url.replace("ws://", "http://").rstrip("/") + "/healthz", timeout=10) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_calendar_server_down_is_said_books_nothing_and_the_request_works_once_it_is_back(
        tmp_path: Path, meeting_model: NLUModel) -> None:
    down = RadicaleServer(folder=tmp_path / "radicale")  # not started yet: its port refuses connections
    config = write_config(tmp_path / "config", down.home, "")
    proc, url = spawn_server(None, ["--config", str(config)], env=caldav_env(down), every_language=False)
    try:
        status, body = _health(url)
        assert status == 503 and body.startswith("store unavailable") and "not answering" in body, body
        events = send(url, WAV, *at(2))
        errors = of(events, "error")
        assert [e["code"] for e in errors] == ["store_unavailable"] and not of(events, "result"), events
        assert "nothing was booked" in errors[0]["message"]
        down.start()
        down.make_calendars(ROOMS)
        for _ in range(100):  # /healthz asks the calendar server again within seconds
            status, body = _health(url)
            if status == 200:
                break
            time.sleep(0.1)
        assert (status, body) == (200, "ok\n")
        result = result_of(send(url, WAV, *at(2)))
        assert result["type"] == "command" and result["committed"], result
        assert len(events_on(down, down.calendar_url("everest"), datetime(2026, 12, 3, tzinfo=BERLIN))) == 1
    finally:
        proc.terminate()
        proc.wait(30)
        down.close()
