"""The guard between understanding and acting: each check has a case that trips it, a tripped check is a question
naming the doubtful part (never a command), and a reading it offers is booked by "yes". The slots are scripted
(this tests the guard, not the tagger); the store is a real SQLite file."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from assistant.booking.dialogue import Dialogue
from assistant.booking.dispatcher import Dispatcher
from assistant.booking.guard import check_booking
from assistant.booking.interval import Interval
from assistant.booking.request import normalize_request
from assistant.booking.results import Clarify, Command
from assistant.booking.rooms import RoomDirectory
from assistant.booking.sqlite_store import SqliteStore
from assistant.config import DEFAULT_CONFIG
from tests.schema import assert_valid_result

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=ZoneInfo("Europe/Berlin"))  # a Wednesday, 10:00
ROOMS = RoomDirectory.load(DEFAULT_CONFIG.parent / "rooms.toml")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    store = SqliteStore(tmp_path / "bookings.sqlite")
    yield store
    store.close()


@pytest.fixture
def dialogue(store: SqliteStore) -> Dialogue:
    return Dialogue(Dispatcher(store, ROOMS), ROOMS)


def book(dialogue: Dialogue, text: str, slots: list[tuple[str, str]], conv: str = "c") -> Clarify | Command:
    result = dialogue.turn(conv, text, "book_meeting", [("room", "Everest"), ("date", "tomorrow"), *slots], NOW,
                           commit=True)
    assert_valid_result(result.to_dict())
    assert isinstance(result, Clarify | Command)
    return result


# (check, the words, the slots a tagger gave, the words the question must name, the reading offered or None)
TRIPS = [
    ("not_a_time", "book everest tomorrow at a quarter past 3pm",
     [("start_time", "a"), ("end_time", "quarter past 3pm")], '"a" is not a time', "3:15 pm"),
    ("split", "book everest tomorrow at 15 to noon", [("start_time", "15"), ("start_time", "noon")],
     "two times", "11:45 am"),
    ("unread", "book everest tomorrow at 3 to 4 and 5", [("start_time", "3 to 4 and 5")], '"3 to 4 and 5"', None),
    ("too_long", "book everest tomorrow from 8am to 8pm", [("start_time", "8am"), ("end_time", "8pm")],
     "12 hours", None),
    ("midnight", "book everest tomorrow at 11pm for 2 hours", [("start_time", "11pm"), ("duration", "2 hours")],
     "past midnight", None),
]


@pytest.mark.parametrize(("check", "text", "slots", "named", "offered"), TRIPS, ids=[t[0] for t in TRIPS])
def test_each_check_trips_and_asks(dialogue: Dialogue, check: str, text: str, slots: list[tuple[str, str]],
                                   named: str, offered: str | None) -> None:
    result = book(dialogue, text, slots)
    assert isinstance(result, Clarify) and result.doubt is not None, result
    assert result.doubt.check == check and named in result.question, result.question
    if offered:
        assert f"Did you mean {offered}?" in result.question and len(result.options) == 1
    assert dialogue.dispatcher.store.bookings(NOW, NOW + timedelta(days=2)) == []  # never executed


def test_the_past_is_asked_and_a_bare_hour_is_offered_in_the_evening(dialogue: Dialogue) -> None:
    result = dialogue.turn("c", "book everest today at 9", "book_meeting",
                           [("room", "Everest"), ("date", "today"), ("start_time", "9")], NOW, commit=True)
    assert isinstance(result, Clarify) and result.doubt and result.doubt.check == "past"
    assert "9 am today has already passed" in result.question and "Did you mean 9 pm?" in result.question
    said_am = dialogue.turn("d", "book everest today at 9am", "book_meeting",
                            [("room", "Everest"), ("date", "today"), ("start_time", "9am")], NOW, commit=True)
    assert isinstance(said_am, Clarify) and not said_am.options  # "9am" was said: no other reading to offer


def test_the_order_check_trips_on_an_end_before_the_start() -> None:
    """The value readers roll an earlier end over to the next day, so the guard sees an end before its start
    only from an interval built another way; it still refuses it."""
    request = normalize_request("book_meeting", [("room", "Everest"), ("date", "tomorrow"), ("start_time", "3pm")],
                                NOW, ROOMS, text="book everest tomorrow at 3pm")
    assert request.interval is not None
    backwards = Interval(request.interval.start, request.interval.start - timedelta(hours=1))
    doubt = check_booking(replace(request, interval=backwards), NOW, timedelta(hours=10))
    assert doubt is not None and doubt.check == "order" and "not after the start" in doubt.question


def test_yes_books_the_reading_offered(dialogue: Dialogue) -> None:
    asked = book(dialogue, "book everest tomorrow at a quarter past 3pm",
                 [("start_time", "a"), ("end_time", "quarter past 3pm")])
    assert isinstance(asked, Clarify)
    booked = dialogue.turn("c", "yes", "out_of_scope", [], NOW, commit=True)
    assert isinstance(booked, Command) and booked.committed and booked.room == "everest"
    assert booked.start.isoformat() == "2026-12-03T15:15:00+01:00"


def test_a_doubtful_time_is_asked_again_and_the_answer_replaces_it(dialogue: Dialogue) -> None:
    asked = book(dialogue, "book everest tomorrow from 8am to 8pm", [("start_time", "8am"), ("end_time", "8pm")])
    assert isinstance(asked, Clarify)
    answered = dialogue.turn("c", "at 2 pm", "out_of_scope", [], NOW, commit=True)
    assert isinstance(answered, Command) and answered.committed
    assert (answered.start.isoformat(), answered.end.isoformat()) == ("2026-12-03T14:00:00+01:00",
                                                                      "2026-12-03T14:30:00+01:00")


def test_a_clean_request_passes_and_its_command_lists_its_spans(dialogue: Dialogue) -> None:
    result = book(dialogue, "book everest tomorrow at 9 for an hour", [("start_time", "9"), ("duration", "an hour")])
    assert isinstance(result, Command) and result.executable and result.committed
    assert result.to_dict()["command"]["spans"] == [
        {"slot": "room", "text": "Everest"}, {"slot": "date", "text": "tomorrow"}, {"slot": "start_time", "text": "9"},
        {"slot": "duration", "text": "an hour"}]


def test_max_hours_is_the_configured_limit(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "b.sqlite")
    strict = Dialogue(Dispatcher(store, ROOMS, max_length=timedelta(hours=1)), ROOMS)
    result = book(strict, "book everest tomorrow at 9 for two hours", [("start_time", "9"), ("duration", "two hours")])
    assert isinstance(result, Clarify) and result.doubt and result.doubt.check == "too_long"
    hour = [("start_time", "9"), ("duration", "an hour")]
    at_the_limit = book(strict, "book everest tomorrow at 9 for an hour", hour, conv="d")
    assert isinstance(at_the_limit, Command) and at_the_limit.committed  # the limit is the configured hour itself
    store.close()


@pytest.mark.parametrize(("room", "offered"), [("buck", "Olympus"), ("Dinally", "Denali"), ("Denally", "Denali"),
                                               ("马特红风", "Matterhorn")])
def test_the_room_check_trips_on_a_room_found_only_by_sound(dialogue: Dialogue, room: str, offered: str) -> None:
    result = dialogue.turn("c", f"book {room} tomorrow at 9 for an hour", "book_meeting",
                           [("room", room), ("date", "tomorrow"), ("start_time", "9"), ("duration", "an hour")], NOW,
                           commit=True)
    assert_valid_result(result.to_dict())
    assert isinstance(result, Clarify) and result.doubt is not None
    assert result.doubt.to_dict() == {"check": "room", "slots": ["room"], "said": room}
    assert offered in result.question and "09:00-10:00" in result.question  # (in Chinese for 马特红风)
    assert [o.to_dict() for o in result.options] == [{"room": offered.lower(), "start": "2026-12-03T09:00:00+01:00",
                                                      "end": "2026-12-03T10:00:00+01:00"}]
    assert dialogue.dispatcher.store.bookings(NOW, NOW + timedelta(days=2)) == []  # never executed


def test_a_time_doubt_never_offers_a_room_found_only_by_sound(dialogue: Dialogue) -> None:
    result = dialogue.turn("c", "book buck tomorrow at a quarter past 3pm", "book_meeting",
                           [("room", "buck"), ("date", "tomorrow"), ("start_time", "a"),
                            ("end_time", "quarter past 3pm")], NOW, commit=True)
    assert isinstance(result, Clarify) and result.doubt and result.doubt.check == "not_a_time"
    assert result.options == ()  # "yes" would have booked Olympus, which was never said


def test_a_teen_length_is_asked_and_the_ty_reading_offered(dialogue: Dialogue) -> None:
    # joe's "for ninety minutes", as tiny.en wrote it: "for 19 minutes"
    result = book(dialogue, "book everest tomorrow at 9am for 19 minutes", [("start_time", "9am"),
                                                                             ("duration", "19 minutes")])
    assert isinstance(result, Clarify) and result.doubt and result.doubt.check == "teen", result
    assert "Did you mean 90 minutes?" in result.question
    assert result.options[0].to_dict()["end"] == "2026-12-03T10:30:00+01:00"
    yes = dialogue.turn("c", "yes", "out_of_scope", [], NOW, commit=True)
    assert isinstance(yes, Command) and yes.committed and yes.end.isoformat() == "2026-12-03T10:30:00+01:00"


def test_a_teen_length_said_again_stands(dialogue: Dialogue) -> None:
    asked = book(dialogue, "book everest tomorrow at 9am for seventeen minutes",
                 [("start_time", "9am"), ("duration", "seventeen minutes")])
    assert isinstance(asked, Clarify) and "70 minutes" in asked.question
    again = dialogue.turn("c", "for seventeen minutes", "out_of_scope", [("duration", "seventeen minutes")], NOW,
                          commit=True)
    assert isinstance(again, Command) and again.committed and again.end.isoformat() == "2026-12-03T09:17:00+01:00"


@pytest.mark.parametrize("length", ["15 minutes", "fifteen minutes", "20 minutes", "90 minutes", "an hour"])
def test_other_lengths_are_not_asked_about(dialogue: Dialogue, length: str) -> None:
    result = book(dialogue, f"book everest tomorrow at 9am for {length}", [("start_time", "9am"), ("duration", length)])
    assert isinstance(result, Command) and result.committed, result


# Spoken times whose minutes nobody says: (the words heard, the time slot's words, the reading offered)
ODD_MINUTES = [
    ("book everest tomorrow at 1034 for 45 minutes", [("start_time", "1034"), ("duration", "45 minutes")], "10:30 am"),
    ("book everest tomorrow at 10:34 for an hour", [("start_time", "10:34"), ("duration", "an hour")], "10:35 am"),
    ("book everest tomorrow from 9 to 1017", [("start_time", "9"), ("end_time", "1017")], None),
]


@pytest.mark.parametrize(("text", "slots", "offered"), ODD_MINUTES, ids=["run-together", "odd", "end"])
def test_spoken_minutes_nobody_says_are_asked_typed_ones_booked(store: SqliteStore, dialogue: Dialogue, text: str,
                                                                 slots: list[tuple[str, str]],
                                                                 offered: str | None) -> None:
    said = [("room", "Everest"), ("date", "tomorrow"), *slots]
    heard = dialogue.turn("spoken", text, "book_meeting", said, NOW, commit=True, spoken=True)
    assert_valid_result(heard.to_dict())
    assert isinstance(heard, Clarify), heard
    assert heard.doubt is not None and heard.doubt.check == "odd_minutes"
    assert f'"{slots[-1][1] if offered is None else slots[0][1]}"' in heard.question
    assert store.bookings(NOW, NOW + timedelta(days=3)) == []  # never a booking
    if offered is not None:
        assert f"Did you mean {offered}?" in heard.question
        booked = dialogue.turn("spoken", "yes", "out_of_scope", [], NOW, commit=True, spoken=True)
        assert isinstance(booked, Command) and booked.committed
        assert booked.start.strftime("%H:%M") == offered[:5].rjust(5, "0")
    elsewhere = [("room", "Denali"), *said[1:]]  # (Everest is taken at that time now)
    typed = dialogue.turn("typed", text.replace("everest", "denali"), "book_meeting", elsewhere, NOW, commit=True)
    assert isinstance(typed, Command) and typed.committed, typed  # typed minutes are meant


@pytest.mark.parametrize(("text", "slots", "asks"), [
    ("We'll get Everest tomorrow at 4 pm for a hangout.", [("start_time", "4 pm")], '"for a hangout"'),
    ("Book Everest tomorrow at 3 for the budget review.", [("start_time", "3"), ("title", "budget review")], None),
    ("Book Everest tomorrow at 3 for me.", [("start_time", "3")], None),
], ids=["misheard length", "a title", "for me"])
def test_a_spoken_length_heard_but_not_read_is_asked_for(dialogue: Dialogue, text: str, slots: list[tuple[str, str]],
                                                          asks: str | None) -> None:
    """"for an hour" heard as "for a hangout": spoken, the default length is not assumed; typed, it is."""
    said = [("room", "Everest"), ("date", "tomorrow"), *slots]
    heard = dialogue.turn("spoken", text, "book_meeting", said, NOW, commit=False, spoken=True)
    typed = dialogue.turn("typed", text, "book_meeting", said, NOW, commit=False)
    assert isinstance(typed, Command), typed
    if asks is None:
        assert isinstance(heard, Command), heard
        return
    assert isinstance(heard, Clarify) and heard.doubt is not None and heard.doubt.check == "unread", heard
    assert asks in heard.question and "For how long?" in heard.question and heard.missing == ("duration",)

