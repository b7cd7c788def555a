"""The booking store's contract, held by every backend: SQLite (a real file) and CalDAV (a real Radicale on
loopback). Book, conflict, cancel, move, replace, idempotent retries, owners, and processes racing for one slot."""

from __future__ import annotations

import multiprocessing
import multiprocessing.synchronize
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from assistant.bench.radicale import RadicaleServer
from assistant.booking.caldav_store import CalDavStore
from assistant.booking.sqlite_store import SqliteStore
from assistant.booking.store import Booked, Booking, BookingStore, Conflict, NotFound

BERLIN = ZoneInfo("Europe/Berlin")
NINE = datetime(2026, 12, 7, 9, 0, tzinfo=BERLIN)
BACKENDS = ("sqlite", "caldav")


def meeting(room: str = "everest", start: datetime = NINE, minutes: int = 60, **extra: object) -> Booking:
    return Booking("", room, start, start + timedelta(minutes=minutes), **extra)  # type: ignore[arg-type]


def _open(backend: str, where: str | Mapping[str, str], user: str = "", password: str = "") -> BookingStore:
    if backend == "sqlite":
        assert isinstance(where, str)
        return SqliteStore(Path(where))
    assert not isinstance(where, str)
    return CalDavStore(where, user, password)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def place(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str | dict[str, str]:
    """Where this test's bookings live: a new SQLite file, or new calendars on the session's Radicale."""
    if backend == "sqlite":
        return str(tmp_path / "bookings.sqlite")
    calendars: dict[str, str] = request.getfixturevalue("room_calendars")
    return calendars


@pytest.fixture
def store(backend: str, place: str | dict[str, str], request: pytest.FixtureRequest) -> Iterator[BookingStore]:
    if backend == "sqlite":
        s = _open(backend, place)
    else:
        radicale: RadicaleServer = request.getfixturevalue("radicale")
        s = _open(backend, place, radicale.username, radicale.password)
    yield s
    s.close()


def test_book_then_read_back(store: BookingStore) -> None:
    outcome = store.book(meeting(title="budget review", attendees=("Priya", "tom@example.com"),
                                 conversation="c1", owner="token:alice"), "k1")
    assert isinstance(outcome, Booked) and not outcome.replayed
    got = store.get(outcome.booking.id)
    assert got == outcome.booking
    assert got.start.isoformat() == "2026-12-07T09:00:00+01:00" and got.attendees == ("Priya", "tom@example.com")
    assert (got.title, got.conversation, got.owner) == ("budget review", "c1", "token:alice")
    assert store.bookings(NINE - timedelta(hours=1), NINE + timedelta(hours=2)) == [got]
    assert store.get("no-such-id") is None


def test_naive_times_are_refused(store: BookingStore) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        store.book(Booking("", "fuji", datetime(2026, 12, 7, 9), datetime(2026, 12, 7, 10)), "n")


def test_overlap_is_a_conflict_and_touching_is_not(store: BookingStore) -> None:
    first = store.book(meeting(), "a")
    assert isinstance(first, Booked)
    clash = store.book(meeting(start=NINE + timedelta(minutes=30)), "b")
    assert isinstance(clash, Conflict) and clash.clashes == (first.booking,)
    assert isinstance(store.book(meeting(start=NINE + timedelta(hours=1)), "c"), Booked)  # 10:00 after 9-10
    assert isinstance(store.book(meeting(room="fuji", start=NINE + timedelta(minutes=30)), "d"), Booked)
    assert [b.room for b in store.bookings(NINE, NINE + timedelta(hours=2))] == ["everest", "fuji", "everest"]
    assert [b.room for b in store.bookings(NINE, NINE + timedelta(hours=2), "fuji")] == ["fuji"]


def test_replaying_a_key_never_books_twice(store: BookingStore) -> None:
    first = store.book(meeting(), "same-key")
    again = store.book(meeting(), "same-key")
    assert isinstance(again, Booked) and again.replayed and again.booking == first.booking  # type: ignore[union-attr]
    assert len(store.bookings(NINE - timedelta(days=1), NINE + timedelta(days=1))) == 1


def test_cancel_and_reschedule(store: BookingStore) -> None:
    booked = store.book(meeting(title="standup"), "b1")
    assert isinstance(booked, Booked)
    other = store.book(meeting(start=NINE + timedelta(hours=2)), "b2")
    assert isinstance(other, Booked)
    clash = store.reschedule(booked.booking.id, NINE + timedelta(hours=2), NINE + timedelta(hours=3), "r1")
    assert isinstance(clash, Conflict) and clash.clashes == (other.booking,)
    assert store.get(booked.booking.id) == booked.booking  # a refused move changes nothing
    # a move onto a slot that overlaps its own old one is no conflict
    moved = store.reschedule(booked.booking.id, NINE + timedelta(minutes=30), NINE + timedelta(minutes=90), "r2",
                             attendees=["Ana"])
    assert isinstance(moved, Booked) and moved.booking.start == NINE + timedelta(minutes=30)
    assert (moved.booking.title, moved.booking.attendees) == ("standup", ("Ana",))
    assert store.reschedule(booked.booking.id, NINE, NINE + timedelta(hours=1), "r2") == \
        Booked(moved.booking, replayed=True)
    assert isinstance(store.reschedule("no-such-id", NINE, NINE + timedelta(hours=1), "r3"), NotFound)
    assert isinstance(store.cancel(other.booking.id, "c1"), Booked)
    assert store.cancel(other.booking.id, "c1").replayed  # type: ignore[union-attr]
    assert isinstance(store.cancel(other.booking.id, "c2"), NotFound)
    assert [b.id for b in store.bookings(NINE, NINE + timedelta(days=1))] == [booked.booking.id]


def test_replace_undoes_the_first_guess_only_as_the_new_booking_is_made(store: BookingStore) -> None:
    first = store.book(meeting("denali"), "k1")
    assert isinstance(first, Booked)
    taken = store.book(meeting("everest", NINE + timedelta(minutes=30)), "k2")
    assert isinstance(taken, Booked)
    refused = store.replace(first.booking.id, meeting("everest"), "k3")  # Everest is taken then: nothing changes
    assert isinstance(refused, Conflict) and store.get(first.booking.id) == first.booking
    assert store.replace("no-such-id", meeting("fuji"), "k4") == NotFound("no-such-id")
    done = store.replace(first.booking.id, meeting("fuji"), "k5")
    assert isinstance(done, Booked) and done.booking.room == "fuji" and store.get(first.booking.id) is None
    # its own slot never conflicts with what replaces it, and a replayed key changes nothing
    again = store.replace(done.booking.id, meeting("fuji", minutes=90), "k6")
    assert isinstance(again, Booked) and again.booking.end == NINE + timedelta(minutes=90)
    assert store.replace(done.booking.id, meeting("fuji", minutes=90), "k6") == Booked(again.booking, replayed=True)
    assert [b.room for b in store.bookings(NINE, NINE + timedelta(hours=3))] == ["fuji", "everest"]  # by start


def test_each_booking_keeps_its_owner(store: BookingStore) -> None:
    alice = store.book(meeting(owner="token:alice"), "a")
    bob = store.book(meeting(room="fuji", owner="token:bob", conversation="ws-1"), "b")
    assert isinstance(alice, Booked) and isinstance(bob, Booked)
    owners = {b.room: b.owner for b in store.bookings(NINE, NINE + timedelta(hours=1))}
    assert owners == {"everest": "token:alice", "fuji": "token:bob"}
    moved = store.reschedule(bob.booking.id, NINE + timedelta(hours=1), NINE + timedelta(hours=2), "m")
    assert isinstance(moved, Booked) and (moved.booking.owner, moved.booking.conversation) == ("token:bob", "ws-1")


def _race(backend: str, where: str | dict[str, str], user: str, password: str, start: datetime, key: str,
          barrier: multiprocessing.synchronize.Barrier, results: multiprocessing.Queue) -> None:
    store = _open(backend, where, user, password)
    barrier.wait()
    try:
        outcome = store.book(meeting(start=start), key)
        results.put(type(outcome).__name__)
    except Exception as exc:  # noqa: BLE001 - the test says what went wrong
        results.put(repr(exc))
    store.close()


def test_two_processes_racing_for_one_slot_end_with_exactly_one_booking(
        backend: str, place: str | dict[str, str], request: pytest.FixtureRequest) -> None:
    """Two processes (gateways) open the store and book the same room and time at once, round after round."""
    user = password = ""
    if backend == "caldav":
        radicale: RadicaleServer = request.getfixturevalue("radicale")
        user, password = radicale.username, radicale.password
    else:
        SqliteStore(Path(str(place))).close()
    ctx = multiprocessing.get_context("spawn")
    rounds = 6
    for round_ in range(rounds):
        start = NINE + timedelta(hours=2 * round_)
        barrier, results = ctx.Barrier(2), ctx.Queue()
        procs = [ctx.Process(target=_race, args=(backend, place, user, password, start, f"r{round_}-{i}",
                                                 barrier, results)) for i in range(2)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        assert sorted(results.get(timeout=5) for _ in procs) == ["Booked", "Conflict"], f"round {round_}"
    check = _open(backend, place, user, password)
    booked = check.bookings(NINE, NINE + timedelta(days=1))
    check.close()
    assert len(booked) == rounds  # one booking per round, nothing left behind by the loser
