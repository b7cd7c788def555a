"""The spoken corpus through the real server: 30 booking requests in varied wording, said by each voice of
tests/data/corpus/voices.json (hibari and piper's joe, tuned on; espeak-ng's American, Scottish, Caribbean and
Klatt voices, kept out of all tuning and of the model's training data), and real recorded speech that is not a
command, each against its expected result."""

from __future__ import annotations

import asyncio
import json
import wave
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from assistant.bench.voice import corpus_voices, judge_request
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


def _outcome(item: dict[str, Any], events: list[dict[str, Any]]) -> str:
    """The bench's verdict (assistant/bench/voice.py): exact, asked, wrong or wrong_booking."""
    intents = {e["utterance"]: e["intent"] for e in events if e["type"] == "intent"}
    results = [e for e in events if e["type"] == "result"]
    for result in results:
        assert_valid_result(result["result"])
    return judge_request(item, [(intents.get(r["utterance"]), r["result"]) for r in results])


# What each voice must reach of the 30: (exact at least, wrong bookings at most), measured with this test and
# `assistant bench voice` on the CPU default (tiny.en int8, 2026-12-07, AMD EPYC): hibari 30/30, joe 27/30 (the
# voices everything was tuned on), and the four voices kept out of all tuning and of the heard corpus: espeak
# 20/30, scotland 16/30, caribbean 15/30, klatt 21/30. The exact bars sit below the measured counts because int8
# decoding differs between processors (testing.md). The wrong bookings allowed are the recognizer's own: tiny.en
# wrote "Please reserve, Matterhorn, December 15" for "... Everest on December fifteenth" (espeak), a room name
# said exactly, which no rule after the recognizer can tell from speech; the others misheard an end ("from one to
# two door": Caribbean) or a length the words no longer show ("free for the regular": Scottish).
BARS = {"hibari": (29, 0), "joe": (25, 0), "espeak": (17, 1), "scotland": (13, 1), "caribbean": (12, 1),
        "klatt": (18, 1)}


@pytest.mark.accuracy
@pytest.mark.parametrize("voice", [v.name for v in corpus_voices(CORPUS)])
def test_spoken_requests_give_their_expected_results(own_server: str, voice: str) -> None:
    folder = next(v.folder for v in corpus_voices(CORPUS) if v.name == voice)
    items = json.loads((CORPUS / "requests.json").read_text())
    missed = {}
    for item in items:  # in order: the cancels and moves act on what the bookings before them made
        events = asyncio.run(_utterances(own_server, folder / item["file"]))
        outcome = _outcome(item, events)
        if outcome != "exact":
            transcript = " | ".join(e["text"] for e in events if e["type"] == "transcript")
            missed[item["file"]] = (outcome, f"{item['text']!r} heard as {transcript!r}")
    report = "\n".join(f"{k}: {v[0]}: {v[1]}" for k, v in missed.items())
    print(f"{voice}: {len(items) - len(missed)}/{len(items)} spoken requests exact\n{report}")
    least, most_wrong = BARS[voice]
    assert len([k for k, (outcome, _) in missed.items() if outcome == "wrong_booking"]) <= most_wrong, report
    assert len(items) - len(missed) >= least, report


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
