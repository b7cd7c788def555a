"""Turns with pauses inside them, spoken (hibari TTS, tests/data/pauses, made by make_pause_corpus.py) and sent
to the real server at real-time pace: the end-of-turn policy must wait through the pauses of an incomplete
request, end a complete one, and book what was meant."""

from __future__ import annotations

import asyncio
import json
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from assistant.nlu.model_folder import NLUModel
from assistant.server.spawn import spawn_server
from tests.schema import assert_valid_result

PAUSES = Path(__file__).resolve().parent / "data" / "pauses"
CHUNK_MS = 100


async def _speak(url: str, wav_path: Path, conversation: str) -> list[dict[str, Any]]:
    """The WAV at real-time pace (100 ms a message, on a wall clock), then stop; every event back."""
    with wave.open(str(wav_path), "rb") as wav:
        rate, pcm = wav.getframerate(), wav.readframes(wav.getnframes())
    step = 2 * rate * CHUNK_MS // 1000
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "start", "sample_rate": rate, "timezone": "Europe/Berlin",
                                  "now": "2026-12-02T10:00:00", "conversation_id": conversation}))
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


def _books_as_meant(item: dict[str, Any], result: dict[str, Any]) -> bool:
    """The connection's last result is the intended booking: made in one go, or made and then amended."""
    if result["type"] != "command" or not result["committed"]:
        return False
    command = result["command"]
    start, end = ("new_start", "new_end") if command.get("amends") else ("start", "end")
    return (command["room"], command[start], command[end]) == (item["room"], item["start"], item["end"])


def _server(tmp: Path, changes: dict[str, str] | None = None) -> Iterator[str]:
    """A real server with a store of its own; `changes`: lines of configs/default.toml replaced."""
    args: list[str] = []
    if changes is not None:
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
def test_the_pause_corpus_books_what_was_meant(pause_server: str) -> None:
    items = json.loads((PAUSES / "pauses.json").read_text())
    wrong, amended = {}, []
    for item in items:
        events = asyncio.run(_speak(pause_server, PAUSES / item["file"], f"pause-{item['file']}"))
        results = _results(events)
        if not results or not _books_as_meant(item, results[-1]):
            heard = [e["text"] for e in events if e["type"] == "transcript"]
            wrong[item["file"]] = f"{' ... '.join(item['pieces'])!r} heard as {heard}: {results[-1:]}"
        elif results[-1]["command"].get("amends"):
            amended.append(item["file"])
    assert len(wrong) <= 0.05 * len(items), wrong  # the bar: at least 95 % of turns book what was meant
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
