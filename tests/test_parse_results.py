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
