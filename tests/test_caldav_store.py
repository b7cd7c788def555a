"""What only the CalDAV store has to get right, against a real Radicale: events other apps made (as python-caldav
makes them, like a calendar app), changes made meanwhile, the read cache, credentials, and the server down or slow."""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import icalendar
import pytest
from caldav.davclient import DAVClient

from assistant.bench.radicale import RadicaleServer
from assistant.booking.caldav_config import calendar_urls, read_credentials
from assistant.booking.caldav_store import CalDavStore
from assistant.booking.dialogue import Dialogue
from assistant.booking.dispatcher import Dispatcher
from assistant.booking.results import Answer, Clarify, Command
from assistant.booking.rooms import Room, RoomDirectory
from assistant.booking.store import Booked, Booking, Conflict, NotFound, StoreUnavailable
from assistant.config import DEFAULT_CONFIG
from assistant.errors import ConfigError

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 12, 2, 10, 0, tzinfo=BERLIN)  # a Wednesday
NINE = datetime(2026, 12, 3, 9, 0, tzinfo=BERLIN)  # Thursday, "tomorrow at 9"


def app(radicale: RadicaleServer, url: str) -> Any:
    """A room calendar as another calendar app reaches it."""
    client = DAVClient(url=url, username=radicale.username, password=radicale.password, enable_rfc6764=False)
    return client.calendar(url=url)


@pytest.fixture
def store(radicale: RadicaleServer, room_calendars: dict[str, str]) -> Iterator[CalDavStore]:
    s = CalDavStore(room_calendars, radicale.username, radicale.password, cache_s=0)
    yield s
    s.close()


def meeting(room: str = "everest", start: datetime = NINE, minutes: int = 60) -> Booking:
    return Booking("", room, start, start + timedelta(minutes=minutes))


def test_a_booking_is_one_event_with_its_id_zone_title_attendees_and_owner(
        store: CalDavStore, radicale: RadicaleServer, room_calendars: dict[str, str]) -> None:
    made = store.book(Booking("", "everest", NINE, NINE + timedelta(hours=1), "budget", ("Priya", "tom@example.com"),
                              "ws-1", "token:alice"), "key-1")
    assert isinstance(made, Booked)
    events = app(radicale, room_calendars["everest"]).events()
    assert len(events) == 1 and events[0].url.path.endswith(f"/{made.booking.id}.ics")
    event = icalendar.Calendar.from_ical(events[0].data).walk("VEVENT")[0]
    assert str(event["UID"]) == made.booking.id and str(event["SUMMARY"]) == "budget"
    assert event["DTSTART"].params["TZID"] == "Europe/Berlin" and event.decoded("DTSTART") == NINE
    assert sorted(str(a) for a in event["ATTENDEE"])[0] == "mailto:tom@example.com"
    assert str(event["X-VOICE-ASSISTANT-OWNER"]) == "token:alice"
    assert str(event["X-VOICE-ASSISTANT-COMMAND"]) == "key-1"


def test_events_other_apps_made_block_the_room_and_are_never_changed(
        store: CalDavStore, radicale: RadicaleServer, room_calendars: dict[str, str]) -> None:
    calendar = app(radicale, room_calendars["everest"])
    calendar.add_event(dtstart=NINE, dtend=NINE + timedelta(hours=1), summary="board meeting", uid="other-app-1")
    weekly = NINE + timedelta(hours=4)  # Thursdays 13:00-14:00, the first a week ago
    calendar.add_event(dtstart=weekly - timedelta(days=7), dtend=weekly - timedelta(days=6, hours=23),
                       summary="weekly", uid="other-app-2", rrule={"FREQ": "WEEKLY"})
    calendar.add_event(dtstart=NINE + timedelta(hours=2), dtend=NINE + timedelta(hours=3), summary="free time",
                       uid="other-app-3", transp="TRANSPARENT")
    found = store.bookings(NINE - timedelta(hours=1), NINE + timedelta(hours=8), "everest")
    assert [(b.id, b.title, b.owner, b.start) for b in found] == [
        ("other-app-1", "board meeting", "calendar", NINE), ("other-app-2", "weekly", "calendar", weekly)]
    assert isinstance(store.book(meeting(start=NINE + timedelta(minutes=30)), "k1"), Conflict)
    assert isinstance(store.book(meeting(start=weekly), "k2"), Conflict)  # this week's occurrence
    assert isinstance(store.book(meeting(start=NINE + timedelta(hours=2)), "k3"), Booked)  # marked free
    # the assistant cancels and moves only its own events
    assert store.cancel("other-app-1", "k4") == NotFound("other-app-1")
    assert store.reschedule("other-app-1", NINE, NINE + timedelta(hours=2), "k5") == NotFound("other-app-1")
    assert len(calendar.events()) == 4


def test_all_day_and_private_events_block_and_a_private_title_stays_private(
        store: CalDavStore, radicale: RadicaleServer, room_calendars: dict[str, str]) -> None:
    app(radicale, room_calendars["fuji"]).add_event(dtstart=NINE.date(), dtend=NINE.date() + timedelta(days=1),
                                                    summary="offsite", uid="all-day")
    app(radicale, room_calendars["denali"]).add_event(dtstart=NINE, dtend=NINE + timedelta(hours=1),
                                                      summary="salary talk", uid="private", **{"class": "PRIVATE"})
    assert isinstance(store.book(meeting(room="fuji", start=NINE + timedelta(hours=8)), "k1"), Conflict)
    assert isinstance(store.book(meeting(room="fuji", start=NINE + timedelta(days=1)), "k2"), Booked)  # next day
    blocked = store.bookings(NINE, NINE + timedelta(hours=1), "denali")
    assert [(b.id, b.title) for b in blocked] == [("private", None)]
    assert isinstance(store.book(meeting(room="denali"), "k3"), Conflict)


def test_a_request_for_a_slot_another_app_booked_is_refused_and_another_room_offered(
        store: CalDavStore, radicale: RadicaleServer, room_calendars: dict[str, str]) -> None:
    app(radicale, room_calendars["everest"]).add_event(dtstart=NINE, dtend=NINE + timedelta(hours=1),
                                                       summary="booked in a calendar app")
    rooms = RoomDirectory.load(DEFAULT_CONFIG.parent / "rooms.toml")
    dialogue = Dialogue(Dispatcher(store, rooms), rooms)
    result = dialogue.turn("c1", "book everest tomorrow at 9 for an hour", "book_meeting",
                           [("room", "everest"), ("date", "tomorrow"), ("start_time", "9"),
                            ("duration", "an hour")], NOW, commit=True)
    assert isinstance(result, Clarify) and result.options, result
    offered = result.options[0]
    assert offered.room != "everest" and offered.start == NINE
    accepted = dialogue.turn("c1", "yes", "affirm", [], NOW, commit=True)
    assert isinstance(accepted, Command) and accepted.committed and accepted.room == offered.room
    assert [b.room for b in store.bookings(NINE, NINE + timedelta(hours=1)) if b.owner != "calendar"] == \
        [offered.room]


def test_cancelling_another_apps_event_is_refused_as_not_yours_even_from_the_command_line(
        store: CalDavStore, radicale: RadicaleServer, room_calendars: dict[str, str]) -> None:
    calendar = app(radicale, room_calendars["everest"])
    calendar.add_event(dtstart=NINE, dtend=NINE + timedelta(hours=1), summary="board meeting")
    rooms = RoomDirectory.load(DEFAULT_CONFIG.parent / "rooms.toml")
    dialogue = Dialogue(Dispatcher(store, rooms), rooms)
    result = dialogue.turn("c1", "cancel the 9 am in everest tomorrow", "cancel_meeting",
                           [("room", "everest"), ("date", "tomorrow"), ("start_time", "9 am")], NOW, commit=True,
                           owner=None)  # the local owner of the store, who may cancel any booking of its own
    assert isinstance(result, Answer) and result.data["reason"] == "not yours", result
    assert len(calendar.events()) == 1


def test_a_move_keeps_what_someone_changed_meanwhile(
        store: CalDavStore, radicale: RadicaleServer, room_calendars: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    made = store.book(meeting(), "k1")
    assert isinstance(made, Booked)
    calendar = app(radicale, room_calendars["everest"])

    def edit_in_an_app() -> None:
        event = calendar.event_by_uid(made.booking.id)
        component = event.icalendar_component
        component["DESCRIPTION"] = "bring the slides"
        event.save()

    put = store.http.put
    edits = []

    def put_after_an_edit(href: str, text: str, condition: Any) -> str | None:
        if "If-Match" in condition and not edits:  # someone saves the event between our read and our write
            edit_in_an_app()
            edits.append(href)
        return put(href, text, condition)

    monkeypatch.setattr(store.http, "put", put_after_an_edit)
    moved = store.reschedule(made.booking.id, NINE + timedelta(hours=1), NINE + timedelta(hours=2), "k2")
    assert edits and isinstance(moved, Booked) and moved.booking.start == NINE + timedelta(hours=1)
    event = icalendar.Calendar.from_ical(calendar.event_by_uid(made.booking.id).data).walk("VEVENT")[0]
    assert str(event["DESCRIPTION"]) == "bring the slides"  # their change, kept under our move
    assert event.decoded("DTSTART") == NINE + timedelta(hours=1)


def test_reads_are_cached_until_our_own_write_or_their_age(
        radicale: RadicaleServer, room_calendars: dict[str, str]) -> None:
    store = CalDavStore(room_calendars, radicale.username, radicale.password, cache_s=0.5)
    window = (NINE - timedelta(hours=1), NINE + timedelta(hours=6), "everest")
    assert store.bookings(*window) == []
    app(radicale, room_calendars["everest"]).add_event(dtstart=NINE, dtend=NINE + timedelta(hours=1),
                                                       summary="from an app")
    assert store.bookings(*window) == []  # cached
    assert isinstance(store.book(meeting(start=NINE + timedelta(hours=2)), "k1"), Booked)  # checked afresh
    assert [b.title for b in store.bookings(*window)] == ["from an app", None]  # our write dropped the cache
    app(radicale, room_calendars["everest"]).add_event(dtstart=NINE + timedelta(hours=4),
                                                       dtend=NINE + timedelta(hours=5), summary="later")
    time.sleep(0.6)
    assert len(store.bookings(*window)) == 3  # the cache's age is bounded
    store.close()


def test_wrong_credentials_are_a_clear_error(radicale: RadicaleServer, room_calendars: dict[str, str]) -> None:
    store = CalDavStore(room_calendars, radicale.username, "not-the-password")
    with pytest.raises(StoreUnavailable, match="refused the credentials"):
        store.book(meeting(), "k1")
    assert store.problem() is not None and "refused the credentials" in str(store.problem())
    store.close()


def test_server_down_books_nothing_says_so_and_the_retry_books_once(tmp_path: Path) -> None:
    server = RadicaleServer(folder=tmp_path).start()
    calendars = server.make_calendars(["everest"])
    store = CalDavStore(calendars, server.username, server.password, timeout_s=2)
    assert store.problem() is None
    server.stop()
    with pytest.raises(StoreUnavailable, match="not answering"):
        store.book(meeting(), "k1")
    store.http._health = (float("-inf"), None)  # ask again now rather than in a few seconds
    assert "not answering" in str(store.problem())
    server.start()
    outcome = store.book(meeting(), "k1")  # the same command again
    assert isinstance(outcome, Booked) and not outcome.replayed
    assert len(store.bookings(NINE, NINE + timedelta(hours=1))) == 1
    store.close()
    server.close()


def test_a_write_cut_off_half_way_is_taken_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server goes down after our event is written but before it is checked: nothing stays booked."""
    server = RadicaleServer(folder=tmp_path).start()
    calendars = server.make_calendars(["everest"])
    store = CalDavStore(calendars, server.username, server.password, timeout_s=2)
    put = store.http.put

    def put_then_go_down(href: str, text: str, condition: Any) -> str | None:
        written = put(href, text, condition)
        server.stop()
        return written

    monkeypatch.setattr(store.http, "put", put_then_go_down)
    with pytest.raises(StoreUnavailable):
        store.book(meeting(), "k1")
    monkeypatch.setattr(store.http, "put", put)
    server.start()
    assert store.bookings(NINE, NINE + timedelta(hours=1)) != []  # the half-written event, until the next command
    elsewhere = store.book(meeting(room="everest", start=NINE + timedelta(hours=3)), "k2")  # takes it back first
    assert isinstance(elsewhere, Booked)
    again = store.book(meeting(), "k3")  # the user says it again: a new command, and the slot is free
    assert isinstance(again, Booked)
    assert len(store.bookings(NINE, NINE + timedelta(hours=4))) == 2
    store.close()
    server.close()


def test_a_server_that_never_answers_times_out_then_fails_at_once_until_it_answers(
        radicale: RadicaleServer, room_calendars: dict[str, str]) -> None:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()  # accepts connections, never answers
    port = silent.getsockname()[1]
    store = CalDavStore({"everest": f"http://127.0.0.1:{port}/rooms/everest/"}, timeout_s=0.5)
    with pytest.raises(StoreUnavailable, match=r"not answering \(\w*Timeout"):  # it gave up, at timeout_s
        store.bookings(NINE, NINE + timedelta(hours=1))
    # the one thread that serves every session's understanding is not held for the timeout again: the next
    # request fails without going to the server at all (told by what reached the socket, not by a clock)
    with pytest.raises(StoreUnavailable, match="not asked again"):
        store.book(meeting(), "k1")
    first, _ = silent.accept()  # the connection of the request that timed out
    silent.setblocking(False)
    with pytest.raises(BlockingIOError):
        silent.accept()  # and no other
    first.close()
    silent.close()
    store.close()
    # the health probe still asks; once the server answers, requests go through at once
    answering = CalDavStore(room_calendars, radicale.username, radicale.password, timeout_s=0.5)
    answering.http._silent_until, answering.http._silence = time.monotonic() + 60, "silenced"
    with pytest.raises(StoreUnavailable, match="silenced"):
        answering.bookings(NINE, NINE + timedelta(hours=1))
    assert answering.problem() is None
    assert answering.bookings(NINE, NINE + timedelta(hours=1)) == []
    answering.close()


def test_rooms_map_to_calendars_and_credentials_never_come_from_the_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rooms = [Room("Everest", (), 12), Room("Fuji", (), 4, "resources/fuji-4/"),
             Room("Denali", (), 6, "https://other.example/cal/denali")]
    assert calendar_urls(rooms, "http://localhost:5232/rooms") == {
        "everest": "http://localhost:5232/rooms/everest/", "fuji": "http://localhost:5232/rooms/resources/fuji-4/",
        "denali": "https://other.example/cal/denali/"}
    with pytest.raises(ConfigError, match="not a URL"):
        calendar_urls(rooms[:1], "")
    secret = tmp_path / "caldav-credentials"
    secret.write_text("rooms-bot:s3cret\n")
    secret.chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        read_credentials(str(secret), {})
    secret.chmod(0o600)
    assert read_credentials(str(secret), {}) == ("rooms-bot", "s3cret")
    assert read_credentials(str(secret), {"ASSISTANT_CALDAV_USER": "u", "ASSISTANT_CALDAV_PASSWORD": "p"}) == \
        ("u", "p")
    assert read_credentials("", {}) == (None, None)
    secret.write_text("no colon here\n")
    with pytest.raises(ConfigError, match="USER:PASSWORD"):
        read_credentials(str(secret), {})


def test_health_probe_never_waits_behind_a_slow_write(store: CalDavStore) -> None:
    """/healthz asks from the web thread: a write holding the store's client must not hold the probe up."""
    with store._lock:  # a write in progress
        answer: list[str | None] = []
        probe = threading.Thread(target=lambda: answer.append(store.problem()))
        probe.start()
        probe.join(5)
        assert answer == [None]


def test_the_wiring_refuses_missing_room_calendars_makes_them_when_asked_and_refuses_a_sqlite_file(
        radicale: RadicaleServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from assistant.config import StoreSettings, load_settings
    from assistant.wiring import build_store

    monkeypatch.setenv("ASSISTANT_CALDAV_USER", radicale.username)
    monkeypatch.setenv("ASSISTANT_CALDAV_PASSWORD", radicale.password)
    rooms = tmp_path / "rooms.toml"
    space = f"w{uuid.uuid4().hex[:8]}-"  # calendars no other test made
    rooms.write_text(f'[[room]]\nname = "Everest"\nseats = 12\ncalendar = "{space}everest/"\n'
                     f'[[room]]\nname = "Fuji"\nseats = 4\ncalendar = "{space}fuji/"\n')
    base = load_settings(None, {})
    settings = replace(base, rooms_file=rooms, store=StoreSettings(backend="caldav", url=radicale.home))
    with pytest.raises(ConfigError, match="no calendar for everest, fuji"):
        build_store(settings)
    store = build_store(replace(settings, store=replace(settings.store, create_calendars=True)))
    assert isinstance(store.book(meeting(room="fuji"), "k1"), Booked)
    store.close()
    again = build_store(settings)  # the calendars are there now: no refusal
    assert again.bookings(NINE, NINE + timedelta(hours=1), "fuji") != []
    again.close()
    with pytest.raises(ConfigError, match="names a SQLite file"):
        build_store(settings, tmp_path / "bookings.sqlite")


def test_a_writer_that_steps_back_lets_others_go_on_while_it_waits(
        store: CalDavStore, radicale: RadicaleServer, room_calendars: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No sleep under the store's lock: another app writes the same slot between our write and our re-check, our
    writer steps back and waits; a read asked meanwhile is answered before that writer is done."""
    import assistant.booking.caldav_claim as claim_module

    calendar = app(radicale, room_calendars["everest"])
    put = store.http.put
    stepping_back = threading.Event()
    order: list[str] = []

    def put_then_someone_else(href: str, text: str, condition: Any) -> str | None:
        written = put(href, text, condition)
        if not stepping_back.is_set():
            calendar.add_event(dtstart=NINE, dtend=NINE + timedelta(hours=1), summary="same slot", uid="rival")
        return written

    def pause(attempt: int, yields: bool) -> float:
        stepping_back.set()
        return 2.0

    def read_meanwhile() -> None:
        stepping_back.wait(30)
        store.bookings(NINE, NINE + timedelta(hours=1), "fuji")
        order.append("read")

    monkeypatch.setattr(store.http, "put", put_then_someone_else)
    monkeypatch.setattr(claim_module, "step_back_pause", pause)
    reader = threading.Thread(target=read_meanwhile)
    reader.start()
    outcome = store.book(meeting(), "k1")
    order.append("booked")
    reader.join(30)
    assert isinstance(outcome, Conflict) and [b.id for b in outcome.clashes] == ["rival"]
    assert order == ["read", "booked"]
    assert [e.icalendar_component["UID"] for e in calendar.events()] == ["rival"]  # ours was taken back
