"""Rooms as a request names them, spoken, through the real server: a misheard word tagged as a room beside the
named one never books another room, and a room corrected inside the request books the corrected one (issue 29).
The WAVs are piper's joe voice (tests/data/rooms, made by tests/data/make_corpus.py --rooms)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from tests.test_spoken_corpus import _utterances

ROOMS = Path(__file__).resolve().parent / "data" / "rooms"


def _booked(store: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT room, start_text FROM bookings WHERE cancelled_utc IS NULL")
        return [(room, start) for room, start in rows]


def _said(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """Events of one kind. joe pauses after "buck,": the turn may end there ("Can you buck?", not a request) and
    reopen when the speaker goes on, so the last intent and result are the whole request's."""
    return [e for e in events if e["type"] == kind]


def test_a_misheard_word_tagged_as_a_room_never_books_another_room(own_server: str, tmp_path: Path) -> None:
    events = asyncio.run(_utterances(own_server, ROOMS / "buck_denali.wav"))
    intent, result = _said(events, "intent")[-1], _said(events, "result")[-1]["result"]  # the request as a whole
    # tiny.en writes "Can you buck, Denali for tomorrow at 9?": "buck" sounds like Olympus's alias "big room" (BK).
    # tiny.en int8 on a Xeon writes "buck" and the model tags it as a second room; another processor may write
    # other words, so the words are not asserted (test_dialogue and test_rooms hold the two-span rule itself).
    # With the verb misheard, what is asked is the model's guess: a booking (the model trained on typed text alone)
    # or Denali's free time (the model trained with recognizer text too). Either way it is about Denali at 9.
    assert intent["intent"] in ("book_meeting", "check_availability"), intent
    about = result["command"] if result["type"] == "command" else result
    assert (about["room"], about["start"]) == ("denali", "2026-12-03T09:00:00+01:00"), result
    booked = _booked(tmp_path / "bookings.sqlite")
    assert booked == ([("denali", "2026-12-03T09:00:00+01:00")] if result.get("committed") else []), result


def test_a_room_corrected_inside_the_request_books_the_corrected_room(own_server: str, tmp_path: Path) -> None:
    events = asyncio.run(_utterances(own_server, ROOMS / "olympus_no_denali.wav"))
    intent, result = _said(events, "intent")[-1], _said(events, "result")[-1]["result"]  # the request as a whole
    assert "denali" in [s["text"].lower() for s in intent["slots"] if s["name"] == "room"], intent
    assert result["type"] == "command" and result["command"]["room"] == "denali", result
    assert _booked(tmp_path / "bookings.sqlite") == [("denali", "2026-12-03T09:00:00+01:00")]
