"""The end-of-turn policy as a pure function of a reading, and the [turn] settings that drive it."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from assistant.booking.results import Answer, Check, Clarify, Command, Doubt, Offer, Rejected
from assistant.config import load_settings
from assistant.domain import Slot
from assistant.errors import ConfigError
from assistant.turn.policy import (
    COMPLETE,
    INCOMPLETE,
    UNSURE,
    TurnSettings,
    acoustic_verdict,
    read_verdict,
    transcripts_agree,
)

SETTINGS = TurnSettings()
WHEN = datetime(2026, 12, 3, 15, tzinfo=ZoneInfo("Europe/Berlin"))
BOOKING = Command("book_meeting", "everest", WHEN, WHEN.replace(hour=16), executable=True,
                  spans=(("room", "Everest"), ("start_time", "3"), ("duration", "an hour")))  # says its length


@pytest.mark.parametrize(("text", "result", "confidence", "previous", "kind", "hangover"), [
    ("Book Everest tomorrow at 3.", BOOKING, 0.99, "Book Everest tomor", COMPLETE, 150),
    ("Is Everest free tomorrow at 3?", Answer("availability", "Everest is free."), 0.95, None, COMPLETE, 150),
    ("Book Everest tomorrow at.", Clarify(("start_time",), "At what time?"), 0.99, None, INCOMPLETE, 1300),
    ("Book Everest tomorrow at 3 for", BOOKING, 0.99, None, INCOMPLETE, 1300),  # the last word asks for more
    ("Can you book, um,", Rejected("not a meeting-room request"), 0.9, None, INCOMPLETE, 1300),
    ("I need Everest", Clarify(("date", "start_time"), "Which day? At what time?"), 0.99, None, INCOMPLETE, 1300),
    ("", None, 0.0, None, INCOMPLETE, 1300),  # voice, no words yet: a hesitation
    ("M.", Rejected("not a meeting-room request"), 0.9, None, INCOMPLETE, 1300),  # how whisper writes a lone "um"
    ("Book Everest tomorrow at 3.", BOOKING, 0.6, None, UNSURE, None),  # not confident
    ("Book Everest tomorrow at 3.", BOOKING, 0.99, "Cancel every", UNSURE, None),  # the words changed
    ("What's the weather in Paris?", Rejected("not a meeting-room request"), 0.99, None, UNSURE, None),
    ("Book Matterhorn on Monday yet.", Clarify(("date",), "Which day?", (),
                                               Doubt(Check.UNREAD, (Slot.DATE,), "Monday yet", "Which day?")),
     0.99, None, INCOMPLETE, 1300),  # words no reader can read: most often an expression still being said
    # a doubtful time or a taken room is asked about, not held for and not hurried
    ("Book Everest at 15 to noon", Clarify(("start_time", "end_time"), "21 hours?", (),
                                           Doubt(Check.TOO_LONG, (Slot.START_TIME, Slot.END_TIME), "15 to noon", "")),
     0.99, None, UNSURE, None),
    ("Book Everest tomorrow at 3", Clarify(("room", "start_time"), "Everest is taken then.",
                                           (Offer("fuji", WHEN, WHEN),)),
     0.99, None, UNSURE, None),
])
def test_a_reading_decides_how_much_silence_ends_the_turn(text: str, result: object, confidence: float,
                                                            previous: str | None, kind: str,
                                                            hangover: int | None) -> None:
    verdict = read_verdict(text, result, confidence, previous, SETTINGS)  # type: ignore[arg-type]
    assert (verdict.kind, verdict.hangover_ms) == (kind, hangover), verdict.reason
    assert verdict.to_dict()["kind"] == kind


def test_a_complete_chinese_command_ends_like_an_english_one() -> None:
    """Chinese has no spaces: its words are characters, and the ones that ask for more are its own."""
    complete = read_verdict("帮我订明天上午九点的会议室", BOOKING, 0.99, "帮我订明天上午九点", SETTINGS)
    assert (complete.kind, complete.hangover_ms) == (COMPLETE, SETTINGS.complete_ms), complete.reason
    for unfinished in ("帮我订明天下午三点到", "帮我订珠峰，然后", "帮我订明天下午三点，嗯"):
        held = read_verdict(unfinished, BOOKING, 0.99, None, SETTINGS)
        assert (held.kind, held.hangover_ms) == (INCOMPLETE, SETTINGS.hold_ms), (unfinished, held.reason)
    changed = read_verdict("帮我订明天上午九点", BOOKING, 0.99, "取消明天", SETTINGS)
    assert changed.kind == UNSURE  # the recognizer rewrote the request between two reads


def test_a_booking_that_could_still_grow_waits_complete_open_ms() -> None:
    settings = TurnSettings(complete_open_ms=450)
    open_ended = Command("book_meeting", "everest", WHEN, WHEN.replace(hour=16), executable=True,
                         spans=(("room", "Everest"), ("date", "tomorrow"), ("start_time", "3")))
    assert read_verdict("Book Everest tomorrow at 3", open_ended, 0.99, None, settings).hangover_ms == 450
    closed = Command("book_meeting", "everest", WHEN, WHEN.replace(hour=16), executable=True,
                     spans=(("room", "Everest"), ("start_time", "3"), ("end_time", "4")))
    assert read_verdict("Book Everest at 3 until 4", closed, 0.99, None, settings).hangover_ms == settings.complete_ms


def test_an_incomplete_request_says_what_it_waits_for() -> None:
    verdict = read_verdict("Book Everest tomorrow", Clarify(("start_time",), "At what time?"), 0.99, None, SETTINGS)
    assert verdict.waiting_for == ("start_time",) and "start_time" in verdict.reason


def test_transcripts_agree_when_the_earlier_read_is_a_prefix_but_for_its_last_word() -> None:
    assert transcripts_agree(None, "anything")
    assert transcripts_agree("Book Everest tomor", "book everest tomorrow at 3")
    assert not transcripts_agree("Cancel Everest tomorrow", "Book Everest tomorrow at 3")


def test_smart_turn_verdicts_end_or_hold() -> None:
    assert acoustic_verdict(0.9, SETTINGS).kind == COMPLETE
    held = acoustic_verdict(0.2, SETTINGS)
    assert (held.kind, held.hangover_ms) == (INCOMPLETE, SETTINGS.hold_ms)


def test_turn_settings_come_from_the_config_and_are_checked(tmp_path: Path) -> None:
    assert load_settings(None, {}).turn == TurnSettings()  # configs/default.toml says what the defaults are
    config = tmp_path / "c.toml"
    config.write_text('[turn]\nmodel = "smart-turn"\ncomplete_ms = 200\n')
    turn = load_settings(config, {}).turn
    assert (turn.model, turn.complete_ms, turn.hold_ms) == ("smart-turn", 200, 1300)
    for bad in ('model = "vibes"', "complete_ms = 2000", "read_after_ms = 0", "hold_ms = 100"):
        config.write_text(f"[turn]\n{bad}\n")
        with pytest.raises(ConfigError, match=r"\[turn\]"):
            load_settings(config, {})
