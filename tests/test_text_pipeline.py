"""The one path from text to outcome (`act_many`), shared by `assistant parse` and the voice server: typed
outcomes in order, one model call for a batch, a failing turn failing alone. The NLU backend is scripted
(tests/fakes.py); tokenizer, parser, dialogue and the SQLite store are real."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from assistant.booking.results import Clarify, Command, Rejected
from assistant.config import Settings
from assistant.nlu.parser import IntentSlotParser, ParseFailure
from assistant.text_pipeline import Turn
from tests.fakes import FakeNLUBackend, break_dialogue, fake_pipeline

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 12, 2, 10, 0, tzinfo=BERLIN)


def test_turns_become_typed_outcomes_in_one_model_call(settings: Settings, tmp_path: Path) -> None:
    backend = FakeNLUBackend("book_meeting")
    pipeline = fake_pipeline(settings, tmp_path / "b.sqlite", backend)
    outcomes = pipeline.act_many([Turn("book a room", "c1", NOW), Turn("   ", "c1", NOW),
                                  Turn("book it please", "c2", NOW)], commit=True)
    assert backend.calls == [2]  # the empty text never reaches the model
    first, empty, third = outcomes
    assert (first.intent, first.turn.text) == ("book_meeting", "book a room") and first.confidence > 0.9
    assert isinstance(first.result, Clarify) and set(first.result.missing) >= {"date"}
    assert isinstance(empty.understood, ParseFailure) and isinstance(empty.result, Rejected)
    assert (empty.intent, empty.confidence, empty.slots) == ("out_of_scope", 0.0, ())
    assert empty.to_dict()["error"]["code"] == "empty_text"
    assert isinstance(third.result, Clarify)
    assert first.to_dict()["result"]["type"] == "clarify"


def test_a_turn_whose_dialogue_step_fails_fails_alone(settings: Settings, tmp_path: Path) -> None:
    pipeline = fake_pipeline(settings, tmp_path / "b.sqlite")
    break_dialogue(pipeline, lambda conversation: conversation == "broken")
    ok, failed, after = pipeline.act_many([Turn("book a room", "c1", NOW), Turn("book a room", "broken", NOW),
                                           Turn("book a room", "c3", NOW)], commit=True)
    assert ok.result is not None and after.result is not None
    assert failed.result is None and isinstance(failed.failure, RuntimeError)
    assert failed.to_dict()["error"] == {"code": "internal", "message": "RuntimeError: store went away"}
    assert "result" not in failed.to_dict()


def test_the_day_view_reads_the_store_and_the_room_directory(settings: Settings, tmp_path: Path) -> None:
    pipeline = fake_pipeline(settings, tmp_path / "b.sqlite")
    view = pipeline.day(date(2026, 12, 3), BERLIN)
    assert view.bookings == () and "everest" in {room.key for room in view.rooms}
    assert (view.day, view.zone) == (date(2026, 12, 3), BERLIN)


def test_a_weak_booking_reading_is_asked_about_not_rejected(settings: Settings, tmp_path: Path) -> None:
    """The model below its confidence threshold, guessing a booking of a room: a question, not "not a request"."""
    pipeline = fake_pipeline(settings, tmp_path / "b.sqlite", FakeNLUBackend(weak=True, slot="B-room"))
    (outcome,) = pipeline.act_many([Turn("Denali", "c", NOW)], commit=True)
    assert outcome.intent == "out_of_scope" and isinstance(outcome.result, Clarify), outcome.result
    assert outcome.result.missing == ("date", "start_time")


def test_a_booking_said_over_the_assistant_s_reply_is_proposed_not_made(settings: Settings, parser: IntentSlotParser,
                                                                       tmp_path: Path) -> None:
    """Speech that cut in on a spoken reply was heard under its echo: what it would book is asked about first (a
    misheard question once booked Fuji that way); the same words said in quiet book at once."""
    from assistant.wiring import build_text_pipeline

    pipeline = build_text_pipeline(settings, tmp_path / "b.sqlite", parser=parser)
    said = "book fuji on friday at ten for half an hour"
    cut_in, quiet = pipeline.act_many([Turn(said, "c1", NOW, spoken=True, cut_in=True),
                                       Turn(said.replace("fuji", "denali"), "c2", NOW, spoken=True)], commit=True)
    assert isinstance(cut_in.result, Clarify) and "confirmation" in cut_in.result.missing
    assert pipeline.store.bookings(NOW, NOW + timedelta(days=7), "fuji") == []
    assert isinstance(quiet.result, Command) and quiet.result.committed and quiet.result.room == "denali"
