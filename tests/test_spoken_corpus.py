"""The spoken corpus through the real server: 30 booking requests in varied wording (hibari TTS) and real
recorded speech that is not a command, each against its expected result."""

from __future__ import annotations

import asyncio
import json
import wave
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from tests.schema import assert_valid_result
from tests.transcripts import normalized

CORPUS = Path(__file__).resolve().parent / "data" / "corpus"


async def _utterances(url: str, wav_path: Path) -> list[dict[str, Any]]:
    with wave.open(str(wav_path), "rb") as wav:
        rate, pcm = wav.getframerate(), wav.readframes(wav.getnframes())
    pcm += b"\x00\x00" * rate  # a second of silence after speaking
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "start", "sample_rate": rate, "timezone": "Europe/Berlin",
                                  "now": "2026-12-02T10:00:00"}))
        for offset in range(0, len(pcm), 8000):
            await ws.send(pcm[offset : offset + 8000])
        await ws.send(json.dumps({"type": "stop"}))
        return [json.loads(m) for m in [msg async for msg in ws]]


def _check(item: dict[str, Any], events: list[dict[str, Any]]) -> list[str]:
    """What differs from the expected result, in words (empty: all right)."""
    intents = [e for e in events if e["type"] == "intent"]
    results = [e["result"] for e in events if e["type"] == "result"]
    if len(intents) != 1 or len(results) != 1:
        return [f"{len(intents)} utterances understood"]
    assert_valid_result(results[0])
    problems = []
    if intents[0]["intent"] != item["intent"]:
        problems.append(f"intent {intents[0]['intent']}")
    command = results[0].get("command", {})
    for key in ("room", "start", "end"):
        if key in item and command.get(key) != item[key]:
            problems.append(f"{key} {command.get(key)!r}")
    return problems


def test_spoken_requests_give_their_expected_results(own_server: str) -> None:
    items = json.loads((CORPUS / "requests.json").read_text())
    wrong = {}
    for item in items:  # in order: the cancels and moves act on what the bookings before them made
        events = asyncio.run(_utterances(own_server, CORPUS / item["file"]))
        problems = _check(item, events)
        if problems:
            transcript = next((e["text"] for e in events if e["type"] == "transcript"), "")
            wrong[item["file"]] = f"{item['text']!r} heard as {transcript!r}: {', '.join(problems)}"
    # Without [asr] hotwords tiny.en misheard one of the 30 (r15: "Book Denali" -> "Booked in Ollie"); with the room
    # names as hotwords it hears all 30 here (2026-12-03). One miss is allowed, as int8 kernels differ by processor.
    report = "\n".join(f"{k}: {v}" for k, v in wrong.items())
    assert len(wrong) <= 1, report
    print(f"{len(items) - len(wrong)}/{len(items)} spoken requests right\n{report}")


def _words(text: str) -> set[str]:
    return set(normalized(text).split())


# Two readings of a novel (LibriVox) and a two-speaker phone call (pyannote's sample): ordinary speech, no command.
@pytest.mark.parametrize("clip", ["librivox_0880", "librivox_0930", "pyannote_sample"])
def test_real_speech_that_is_no_command_is_rejected(server: str, clip: str) -> None:
    recorded = CORPUS.parent / "recorded"
    events = asyncio.run(_utterances(server, recorded / f"{clip}.wav"))
    transcripts = " ".join(e["text"] for e in events if e["type"] == "transcript")
    expected, heard = _words((recorded / f"{clip}.txt").read_text()), _words(transcripts)
    assert len(expected & heard) >= 0.6 * len(expected), transcripts
    results = [e["result"] for e in events if e["type"] == "result"]
    assert results and all(r["type"] == "rejected" for r in results), results
