"""`assistant parse` with results: the real model, a real SQLite file, every result checked against the schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assistant.config import Settings
from assistant.nlu.model_folder import NLUModel
from tests.schema import assert_valid_result

NOW = ["--now", "2026-12-02T10:00:00", "--tz", "Europe/Berlin"]


def parse(store: Path, *args: str, stdin: bytes | None = None) -> list[dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "assistant", "parse", "--store", str(store), *NOW, *args],
                          input=stdin, capture_output=True, timeout=300, check=False)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr.decode()
    records = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    for record in records:
        assert_valid_result(record["result"])
    return records


@pytest.mark.usefixtures("meeting_model")
def test_the_issue_example(tmp_path: Path) -> None:
    (record,) = parse(tmp_path / "b.sqlite", "book Fuji next Monday at 9 am for two hours")
    result = record["result"]
    assert result["type"] == "command" and result["executable"] is True and result["committed"] is False
    command = result["command"]
    assert (command["action"], command["room"], command["start"], command["end"]) == (
        "book_meeting", "fuji", "2026-12-07T09:00:00+01:00", "2026-12-07T11:00:00+01:00")


@pytest.mark.usefixtures("meeting_model")
def test_dry_run_writes_nothing_and_commit_books(tmp_path: Path) -> None:
    store = tmp_path / "b.sqlite"
    text = "book everest tomorrow at 9 for an hour"
    parse(store, text)
    parse(store, text)
    assert not store.exists()  # a dry run does not even create the file
    (booked,) = parse(store, "--commit", text)
    assert booked["result"]["committed"] is True and booked["result"]["command"]["booking_id"]
    assert "start time '9' taken as 09:00 (no am/pm said)" in booked["result"]["command"]["assumptions"]
    (again,) = parse(store, text)  # a dry run now sees the room taken
    assert again["result"]["executable"] is False and again["result"]["reason"] == "room taken"
    (listing,) = parse(store, "what's booked tomorrow")
    assert [b["room"] for b in listing["result"]["bookings"]] == ["everest"]


@pytest.mark.usefixtures("meeting_model")
def test_lines_of_a_file_are_one_conversation(tmp_path: Path) -> None:
    turns = b"book kilimanjaro tomorrow\nat 3 pm\nundo\n"
    records = parse(tmp_path / "b.sqlite", "--commit", "--file", "-", stdin=turns)
    assert [r["result"]["type"] for r in records] == ["clarify", "command", "command"]
    assert records[0]["result"]["missing"] == ["start_time"]
    assert records[1]["result"]["command"]["start"] == "2026-12-03T15:00:00+01:00"
    assert records[2]["result"]["command"]["action"] == "cancel_meeting"


@pytest.mark.parametrize(("typed", "recognized"), [
    ("book denali on december 21 at 9:30 am for one hour", "Book Denali on December 21 at 9.30 a.m. for one hour."),
    ("book matterhorn tomorrow from 10 to 11", "Book the Matterhorn room tomorrow, 10-11."),
    ("reserve everest on friday at half past two for 45 minutes",
     "Reserve Everest on Friday at half past two for 45 minutes."),
    ("book olympus next tuesday at 3:45 pm for half an hour", "Book Olympus next Tuesday at 3.45pm for half an hour."),
])
def test_recognizer_writing_works_like_typing(settings: Settings, meeting_model: NLUModel, tmp_path: Path,
                                              typed: str, recognized: str) -> None:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from assistant.booking.results import Command
    from assistant.text_pipeline import Turn
    from assistant.wiring import build_text_pipeline

    pipeline = build_text_pipeline(settings, tmp_path / "b.sqlite", commit=False)
    now = datetime(2026, 12, 2, 10, 0, tzinfo=ZoneInfo("Europe/Berlin"))
    a, b = (pipeline.act_many([Turn(t, f"conv-{i}", now)], commit=False)[0].result
            for i, t in enumerate([typed, recognized]))
    assert isinstance(a, Command) and isinstance(b, Command)
    assert (a.action, a.room, a.start, a.end) == (b.action, b.room, b.start, b.end)


@pytest.fixture(scope="module")
def dry_pipeline(settings: Settings, parser: Any) -> Any:
    from assistant.wiring import build_text_pipeline

    return build_text_pipeline(settings, Path(":memory:"), commit=False, parser=parser)


def _result(pipeline: Any, text: str, conversation: str) -> dict[str, Any]:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from assistant.text_pipeline import Turn

    now = datetime(2026, 12, 2, 10, 0, tzinfo=ZoneInfo("Europe/Berlin"))
    outcome = pipeline.act_many([Turn(text, conversation, now)], commit=False)[0]
    result: dict[str, Any] = outcome.result.to_dict()
    assert_valid_result(result)
    return result


@pytest.mark.parametrize(("text", "missing"), [
    ("book Denali", ["date", "start_time"]), ("reserve a room tomorrow", ["start_time"]),
    ("reserve a room for tomorrow", ["start_time"]), ("book Everest", ["date", "start_time"]),
])
def test_short_requests_are_bookings_that_ask(dry_pipeline: Any, text: str, missing: list[str]) -> None:
    result = _result(dry_pipeline, text, f"short-{text}")
    assert result["type"] == "clarify" and result["missing"] == missing, result


# The examples the issue found (each: the right command, or a question; never a command for another time).
ISSUE_EXAMPLES = {
    "book Everest tomorrow at a quarter past 3pm": "2026-12-03T15:15:00+01:00",
    "book Everest tomorrow at 20 minutes to 2pm": "2026-12-03T13:40:00+01:00",
    "book Everest tomorrow at 15 to noon": "2026-12-03T11:45:00+01:00",
    "book Everest on Fri, Sep 20 at 10am": None,  # the 20th of September 2027 is a Monday: asked
    "book Everest 9 tomorrow": "2026-12-03T09:00:00+01:00",
    "book Everest tomorrow for 9am": "2026-12-03T09:00:00+01:00",
    "book Everest tomorrow at 3p": "2026-12-03T15:00:00+01:00",
    "book Everest tomorrow at 3:15p": "2026-12-03T15:15:00+01:00",
    "book Everest tomorrow 9a to 11a": "2026-12-03T09:00:00+01:00",
    "book Everest tomorrow at half three": "2026-12-03T15:30:00+01:00",
    "book Everest tomorrow at 16h": "2026-12-03T16:00:00+01:00",
    "book Everest tomorrow 15h30-18h": "2026-12-03T15:30:00+01:00",
    "book Everest tomorrow at 4 in the PM": "2026-12-03T16:00:00+01:00",
    "book Everest wednesday of this week at 3pm": "2026-12-02T15:00:00+01:00",
    "book Everest the 20th of next month at 10am": "2027-01-20T10:00:00+01:00",
    "book Everest tomorrow at 07:00 PM": "2026-12-03T19:00:00+01:00",
    "book Everest last friday of october at 10am": "2027-10-29T10:00:00+02:00",
    "book Everest in one hour": "2026-12-02T11:00:00+01:00",
    "book Everest in 7 days at 5pm": "2026-12-09T17:00:00+01:00",
    "book Everest a week from tomorrow at 9am": "2026-12-10T09:00:00+01:00",
}


@pytest.mark.parametrize("text", list(ISSUE_EXAMPLES))
def test_the_issues_time_examples_are_right_or_asked(dry_pipeline: Any, text: str) -> None:
    result = _result(dry_pipeline, text, f"issue-{text}")
    expected = ISSUE_EXAMPLES[text]
    if result["type"] == "command":
        assert result["executable"] and result["command"]["room"] == "everest", result
        assert expected is not None and result["command"]["start"] == expected, result
    else:
        assert result["type"] == "clarify", result


@pytest.fixture(scope="module")
def table_judged(dry_pipeline: Any) -> list[Any]:
    """The time-expression table through the model and the text path: (row, verdict, result) per row."""
    from assistant.bench.expression_table import expressions
    from assistant.bench.expressions import table_outcomes

    return table_outcomes(dry_pipeline, expressions())


def test_the_expression_table_through_the_model_books_no_wrong_time(table_judged: list[Any]) -> None:
    """No command for a wrong time, ever, on any processor: what is not exactly right is asked."""
    wrong = [(row.request, result.to_dict() if result else None) for row, verdict, result in table_judged
             if verdict in ("wrong", "rejected")]
    assert not wrong, wrong


@pytest.mark.accuracy
def test_the_expression_table_through_the_model_is_nearly_all_exact(table_judged: list[Any]) -> None:
    """Nearly all of the table exactly right, the rest asked. (The aim is 97 %; `assistant bench expressions`
    measured 97.0 % on an AMD EPYC, 2026-12-03. The bar leaves one point for other processors, whose int8 kernels
    round differently.)"""
    from collections import Counter

    counts = Counter(verdict for _, verdict, _ in table_judged)
    assert counts["exact"] >= 0.96 * len(table_judged), counts


def test_speech_right_after_a_turn_replaces_it_through_the_real_model(settings: Settings, parser: Any,
                                                                      tmp_path: Path) -> None:
    """What the voice server does when speech goes on right after a turn ended: the whole request, heard again,
    is read by the real model (and the new words alone beside it), and the booking just made changes: given an
    attendee, stretched, then corrected; one booking throughout."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from assistant.text_pipeline import spoken_turn
    from assistant.wiring import build_text_pipeline

    pipeline = build_text_pipeline(settings, tmp_path / "b.sqlite", parser=parser)
    now = datetime(2026, 12, 2, 10, 0, tzinfo=ZoneInfo("Europe/Berlin"))
    said = ""

    def say(text: str) -> dict[str, Any]:
        nonlocal said
        outcome = pipeline.act_many([spoken_turn(text, "c1", now, said or None)], commit=True)[0]
        assert outcome.result is not None, outcome.failure
        said = text
        return outcome.result.to_dict()

    made = say("Schedule a design sync in Fuji tomorrow at 4pm with Priya.")
    booking = made["command"]["booking_id"]
    assert made["committed"] and made["command"]["attendees"] == ["Priya"]
    added = say("Schedule a design sync in Fuji tomorrow at 4pm with Priya. And Tom.")
    assert added["committed"] and added["command"]["amends"] == booking
    assert added["command"]["attendees"] == ["Priya", "Tom"]
    longer = say("Schedule a design sync in Fuji tomorrow at 4pm with Priya. And Tom. For two hours.")
    assert longer["command"]["amends"] == booking
    assert (longer["command"]["new_start"], longer["command"]["new_end"]) == (
        "2026-12-03T16:00:00+01:00", "2026-12-03T18:00:00+01:00")
    moved = say("Schedule a design sync in Fuji tomorrow at 4pm with Priya. And Tom. For two hours. "
                "Actually make it five.")
    assert moved["command"]["new_start"] == "2026-12-03T17:00:00+01:00"  # the length kept
    assert moved["command"]["new_end"] == "2026-12-03T19:00:00+01:00"
    stored = pipeline.store.get(booking)
    assert stored is not None and stored.attendees == ("Priya", "Tom") and len(
        pipeline.store.bookings(now, now.replace(day=9))) == 1
