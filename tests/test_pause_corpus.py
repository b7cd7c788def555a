"""Turns with pauses inside them, spoken (hibari TTS, tests/data/pauses, made by make_pause_corpus.py) and sent
to the real server at real-time pace: the end-of-turn policy must wait through the pauses of an incomplete
request, end a complete one, and book what was meant."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
import wave
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from websockets.asyncio.client import connect

from assistant.nlu.model_folder import NLUModel
from assistant.server.spawn import spawn_server
from tests.schema import assert_valid_result
from tests.transcripts import normalized

DATA = Path(__file__).resolve().parent / "data"
PAUSES = DATA / "pauses"
CHUNK_MS = 100
BERLIN = ZoneInfo("Europe/Berlin")


NOW = datetime(2026, 12, 2, 10, 0)  # the corpus's reference time (Europe/Berlin), a Wednesday


async def _speak(url: str, wav_path: Path, conversation: str, language: str = "en", weeks: int = 0
                 ) -> list[dict[str, Any]]:
    """The WAV at real-time pace (100 ms a message, on a wall clock), then stop; every event back. `weeks`: the
    reference time that many weeks after the corpus's (the same weekday: "tomorrow", "on Friday" mean the same)."""
    with wave.open(str(wav_path), "rb") as wav:
        rate, pcm = wav.getframerate(), wav.readframes(wav.getnframes())
    step = 2 * rate * CHUNK_MS // 1000
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "start", "sample_rate": rate, "timezone": "Europe/Berlin",
                                  "now": (NOW + timedelta(weeks=weeks)).isoformat(),
                                  "conversation_id": conversation, "language": language}))
        events: list[dict[str, Any]] = []

        async def receive() -> None:
            async for message in ws:
                events.append(json.loads(message))

        receiver = asyncio.create_task(receive())
        started = time.monotonic()
        for n, offset in enumerate(range(0, len(pcm), step)):
            await ws.send(pcm[offset : offset + step])
            await asyncio.sleep(max(0.0, started + (n + 1) * CHUNK_MS / 1000 - time.monotonic()))
        await ws.send(json.dumps({"type": "stop"}))
        await receiver
        return events


def _results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    results = [e["result"] for e in events if e["type"] == "result"]
    for result in results:
        assert_valid_result(result)
    return results


def _books_as_meant(item: dict[str, Any], result: dict[str, Any], weeks: int = 0) -> bool:
    """The connection's last result is the intended booking: made in one go, or made and then replaced (moved or
    stretched: a reschedule that amends it; or another room booked in its stead). `weeks`: said that many weeks
    after the corpus's reference time (compared in wall-clock time: the UTC offset may change on the way)."""
    if result["type"] != "command" or not result["committed"]:
        return False
    command = result["command"]
    start, end = ("new_start", "new_end") if command["action"] == "reschedule_meeting" else ("start", "end")

    def wall(iso: str, shift: int = 0) -> datetime:
        return datetime.fromisoformat(iso).astimezone(BERLIN).replace(tzinfo=None) + timedelta(weeks=shift)

    return (command["room"], wall(command[start]), wall(command[end])) == (
        item["room"], wall(item["start"], weeks), wall(item["end"], weeks))


def _server(tmp: Path, changes: dict[str, str] | None = None) -> Iterator[str]:
    """A real server with a store of its own; `changes`: lines of configs/default.toml replaced."""
    args: list[str] = []
    if changes:
        configs = Path(__file__).resolve().parent.parent / "configs"
        text = (configs / "default.toml").read_text()
        for old, new in {'rooms = "rooms.toml"': f'rooms = "{configs / "rooms.toml"}"', **changes}.items():
            assert old in text
            text = text.replace(old, new)
        (tmp / "turn.toml").write_text(text)
        args = ["--config", str(tmp / "turn.toml")]
    proc, url = spawn_server(tmp / "bookings.sqlite", args)
    yield url
    proc.terminate()
    proc.wait(30)


@pytest.fixture(scope="module")
def pause_server(tmp_path_factory: pytest.TempPathFactory, meeting_model: NLUModel) -> Iterator[str]:
    """The default server with a store of its own; the corpus's bookings never overlap, so one store serves all."""
    yield from _server(tmp_path_factory.mktemp("pauses"))


@pytest.mark.slow
@pytest.mark.accuracy
def test_the_pause_corpus_books_what_was_meant(pause_server: str) -> None:
    """The tune split (hibari's voice; the untuned split's voices are scored by `assistant bench turns`, not held
    to a bar here: a bar on them would be tuning on them)."""
    items = [i for i in json.loads((PAUSES / "pauses.json").read_text()) if i["split"] == "tune"]
    wrong, amended = {}, []
    for n, item in enumerate(items):
        # the p-turns' bookings never overlap; each later turn is said a week later than the one before, so
        # its booking cannot be refused for one an earlier turn made
        weeks = 0 if item["file"].startswith("p") else n
        events = asyncio.run(_speak(pause_server, PAUSES / item["file"], f"pause-{item['file']}",
                                    item.get("language", "en"), weeks))
        results = _results(events)
        if not results or not _books_as_meant(item, results[-1], weeks):
            heard = [e["text"] for e in events if e["type"] == "transcript"]
            wrong[item["file"]] = f"{' ... '.join(item['pieces'])!r} heard as {heard}: {results[-1:]}"
        elif results[-1]["command"].get("amends"):
            amended.append(item["file"])
    english = [i for i in items if i.get("language", "en") == "en"]
    wrong_english = [f for f in wrong if f in {i["file"] for i in english}]
    # the bar: at least 95 % of turns book what was meant; the Chinese turns are held to half (whisper base
    # mishears Chinese far more: the spoken Chinese corpus is at 83 %, docs/multilingual.md)
    assert len(wrong_english) <= 0.05 * len(english), wrong
    assert len(wrong) - len(wrong_english) <= (len(items) - len(english)) / 2, wrong
    # "Book Everest tomorrow at three ... for two hours": complete at the pause, so the turn ends there and is
    # booked; "for two hours" comes right after and amends that booking instead of starting a question.
    assert "p10.wav" in amended or "p10.wav" in wrong


def test_speech_resuming_during_a_read_commits_nothing(tmp_path: Path, meeting_model: NLUModel) -> None:
    """'Book Fuji tomorrow at three' [300 ms] 'for two hours': the read at the pause finds a complete command,
    but the speaker goes on before the silence that would end the turn (600 ms here). Nothing is booked from
    the first half: one result, the two-hour booking, no amendment."""
    for url in _server(tmp_path, {"complete_ms = 150": "complete_ms = 600"}):
        events = asyncio.run(_speak(url, PAUSES / "p22.wav", "resume"))
        verdicts = [e["verdict"] for e in events if e["type"] == "turn"]
        assert verdicts[0] == "complete", verdicts  # the read at the pause: complete-looking
        results = _results(events)
        assert len(results) == 1, results
        command = results[0]["command"]
        assert results[0]["committed"] and command["action"] == "book_meeting" and "amends" not in command
        assert (command["room"], command["start"], command["end"]) == (
            "fuji", "2026-12-03T15:00:00+01:00", "2026-12-03T17:00:00+01:00")
        assert [e["type"] for e in events].count("speech_end") == 1


def _item(name: str) -> dict[str, Any]:
    return next(i for i in json.loads((PAUSES / "pauses.json").read_text()) if i["file"] == name)


def _one_booking_as_meant(url: str, item: dict[str, Any], conversation: str) -> list[dict[str, Any]]:
    """The turn spoken at real-time pace leaves exactly the booking meant: its last result, and nothing else in
    the store (the day view's bookings on the day meant)."""
    events = asyncio.run(_speak(url, PAUSES / item["file"], conversation))
    results = _results(events)
    heard = [e["text"] for e in events if e["type"] == "transcript"]
    assert results and _books_as_meant(item, results[-1]), (heard, results)
    day = item["start"][:10]
    with urllib.request.urlopen(url.replace("ws://", "http://") + f"/api/day?date={day}&tz=Europe/Berlin") as page:
        bookings = json.loads(page.read())["bookings"]
    assert [(b["room"], b["start"], b["end"]) for b in bookings] == [(item["room"], item["start"], item["end"])]
    return events


@pytest.mark.slow
@pytest.mark.parametrize(("file", "changes", "ended_by"), [
    # "Book Denali tomorrow at ten." is a complete booking, ended after 150 ms (configs/gpu.toml's complete_open_ms):
    # the turn ends early and books, "For an hour and a half." reopens it
    ("c02.wav", {"complete_open_ms = 800": "complete_open_ms = 150"}, "complete"),
    # the plain hangover (no reads) ends every pause: "Book Fuji on Friday at two" [700 ms] "until four."
    ("c01.wav", {'model = "reading"': 'model = "hangover"'}, "hangover"),
    # "Book Fuji" is held for what it lacks, here only 500 ms: the 800 ms pause ends it held, the rest reopens it
    ("p04.wav", {"hold_ms = 1300": "hold_ms = 500", "complete_open_ms = 800": "complete_open_ms = 500"},
     "incomplete"),
])
def test_speech_after_a_turn_ended_reopens_it_and_leaves_one_right_booking(
        tmp_path: Path, meeting_model: NLUModel, file: str, changes: dict[str, str] | None, ended_by: str) -> None:
    for url in _server(tmp_path, changes or {}):
        events = _one_booking_as_meant(url, _item(file), f"reopen-{file}")
        ends = [e for e in events if e["type"] == "speech_end"]
        assert len(ends) == 2, ends  # the first piece's turn ended, and the second reopened it
        results = _results(events)
        made = [r["command"]["booking_id"] for r in results[:-1] if r["type"] == "command" and r["committed"]]
        assert results[-1]["command"].get("amends") == (made[0] if made else None), results  # replaced, not beside
        first = [e["verdict"] for e in events if e["type"] == "turn" and e["utterance"] == 1]
        assert (first[-1] if first else "hangover") == ended_by, first  # how the first part's turn ended
        if ended_by == "complete":
            assert results[0]["type"] == "command" and results[0]["committed"]  # booked, then replaced
            assert results[-1]["command"]["amends"] == results[0]["command"]["booking_id"]


@pytest.mark.slow
def test_a_request_held_through_two_long_pauses_is_understood_whole(tmp_path: Path, meeting_model: NLUModel) -> None:
    """'Book Matterhorn next Monday' [800 ms] 'at half past two' [600 ms] 'for forty five minutes': tiny.en used
    to stop at the first long silence ("Book Matterhorn next Monday."); every part must be understood."""
    for url in _server(tmp_path):
        events = _one_booking_as_meant(url, _item("c13.wav"), "two-pauses")
        final = [e["text"] for e in events if e["type"] == "transcript"][-1]
        assert all(w in normalized(final) for w in ("matterhorn", "monday", "45")), final


@pytest.mark.slow
def test_a_new_request_right_after_a_turn_stays_a_new_turn(tmp_path: Path, meeting_model: NLUModel) -> None:
    """'Book Everest tomorrow at nine for an hour.' [700 ms] 'Is Denali free on Friday at ten?': the question is
    a request of its own, answered as one; the booking stands as made."""
    for url in _server(tmp_path):
        events = asyncio.run(_speak(url, DATA / "reopen" / "book_then_ask.wav", "new-request"))
        results = _results(events)
        assert [r["type"] for r in results] == ["command", "answer"], results
        booking = results[0]["command"]
        assert results[0]["committed"] and (booking["room"], booking["start"], booking["end"]) == (
            "everest", "2026-12-03T09:00:00+01:00", "2026-12-03T10:00:00+01:00")
        assert results[1]["room"] == "denali" and "amends" not in results[1]
        with urllib.request.urlopen(url.replace("ws://", "http://") + "/api/day?date=2026-12-03&tz=Europe/Berlin"
                                    ) as page:
            assert [b["id"] for b in json.loads(page.read())["bookings"]] == [booking["booking_id"]]
