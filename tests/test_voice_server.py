"""End to end over a real websocket on an ephemeral port: `assistant serve` and `assistant send` as processes,
the real tiny.en recognizer and the real NLU model, a throwaway SQLite store (one per test that books)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.client import connect

from tests.schema import assert_valid_result
from tests.transcripts import normalized

DATA = Path(__file__).resolve().parent / "data"
NOW = ["--now", "2026-12-02T10:00:00", "--tz", "Europe/Berlin"]



def send(url: str, wav: Path, *extra: str) -> list[dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-m", "assistant", "send", str(wav), "--url", url, *NOW, *extra],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def test_spoken_booking_gives_the_command(own_server: str) -> None:
    events = send(own_server, DATA / "book_everest_tomorrow_9.wav", "--fast")
    # The pause after the request is read: a complete command, so the turn ends after the short silence and the
    # read's transcript is acted on.
    assert [e["type"] for e in events if e["type"] != "partial"] == [
        "ready", "speech_start", "turn", "speech_end", "transcript", "intent", "result", "latency"]
    assert of(events, "turn")[0]["verdict"] == "complete"
    assert normalized(of(events, "transcript")[0]["text"]).startswith("book everest tomorrow at 9")
    result = of(events, "result")[0]["result"]
    assert_valid_result(result)
    command = result["command"]
    assert (command["action"], command["room"], command["start"], command["end"]) == (
        "book_meeting", "everest", "2026-12-03T09:00:00+01:00", "2026-12-03T10:00:00+01:00")
    stages = of(events, "latency")[0]["stages_ms"]
    assert list(stages) == ["speech_end_decided", "transcript", "intent", "result"]
    assert 0 <= stages["speech_end_decided"] <= stages["transcript"] <= stages["intent"] <= stages["result"]
    assert all(e["protocol"] == 1 for e in events)


def test_partials_grow_while_speaking_in_real_time(server: str) -> None:
    events = send(server, DATA / "cancel_denali_friday.wav")  # real-time pace
    kinds = [e["type"] for e in events]
    partials = of(events, "partial")
    assert partials, "no partial transcript while speaking"
    assert kinds.index("speech_start") < kinds.index("partial") < kinds.index("speech_end")
    assert len(partials[-1]["text"]) >= len(partials[0]["text"])
    assert all(p["t"] < of(events, "speech_end")[0]["t"] for p in partials)


def test_silence_gives_no_utterance(server: str) -> None:
    events = send(server, DATA / "silence_3s.wav", "--fast")
    assert [e["type"] for e in events] == ["ready"]


def test_two_clients_at_once_get_their_own_results(own_server: str) -> None:
    with_everest = subprocess.Popen(
        [sys.executable, "-m", "assistant", "send", str(DATA / "book_everest_tomorrow_9.wav"), "--url", own_server,
         *NOW], stdout=subprocess.PIPE, text=True)
    denali = send(own_server, DATA / "cancel_denali_friday.wav")
    everest_out, _ = with_everest.communicate(timeout=120)
    everest = [json.loads(line) for line in everest_out.splitlines()]
    assert of(denali, "intent")[0]["intent"] == "cancel_meeting"
    assert of(everest, "intent")[0]["intent"] == "book_meeting"
    assert of(everest, "ready")[0]["session_id"] != of(denali, "ready")[0]["session_id"]


async def _raw(url: str, messages: list[str | bytes], expect: int = 8) -> list[dict[str, Any]]:
    async with connect(url) as ws:
        for message in messages:
            await ws.send(message)
        replies = []
        for _ in range(expect):
            replies.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
        return replies


def test_bad_input_gets_error_events_and_the_server_keeps_serving(server: str) -> None:
    replies = asyncio.run(_raw(server, [
        b"\x00\x01" * 100,  # audio before start
        "{not json",
        json.dumps({"type": "start", "sample_rate": 12345}),
        json.dumps({"type": "start", "sample_rate": 16000, "timezone": "Mars/Base"}),
        json.dumps({"type": "dance"}),
        json.dumps({"type": "start", "sample_rate": 16000}),
        b"\x00" * (300 * 1024),  # an oversized audio frame
        "this text is where audio belongs",
        b"\x00\x00" * 320,  # the session goes on: ordinary audio after the errors gets no error (nothing to say)
    ]))
    assert [r.get("code", r["type"]) for r in replies[:8]] == [
        "no_start", "bad_json", "unsupported_audio", "bad_start", "unknown_type", "ready", "frame_too_large",
        "bad_json"]
    # a client that vanishes mid-stream does not hurt the next one
    asyncio.run(_vanish(server))
    assert of(send(server, DATA / "cancel_denali_friday.wav", "--fast"), "result")  # nothing to cancel: no booking


async def _vanish(url: str) -> None:
    with wave.open(str(DATA / "book_everest_tomorrow_9.wav"), "rb") as wav:
        rate, pcm = wav.getframerate(), wav.readframes(wav.getnframes())
    ws = await connect(url)
    await ws.send(json.dumps({"type": "start", "sample_rate": rate}))
    await ws.send(pcm[: len(pcm) // 2])  # mid-utterance: speech has started and not ended
    await asyncio.sleep(0.3)
    ws.transport.abort()  # no close handshake: the connection just disappears


def test_microphone_client_through_an_alsa_device_that_plays_a_wav(own_server: str, tmp_path: Path) -> None:
    """The real `assistant mic` code path (sounddevice, PortAudio, ALSA) with a device that captures from a file
    and plays into one: the request is booked, and the spoken reply is played (its sound is in the file)."""
    try:
        import sounddevice  # noqa: F401
    except OSError:
        pytest.skip("the microphone client needs Debian's libportaudio2 (make test installs it)")
    from assistant.audio.pcm import PcmDecoder

    with wave.open(str(DATA / "book_everest_tomorrow_9.wav"), "rb") as wav:
        decoder = PcmDecoder(wav.getframerate(), wav.getnchannels())
        pcm16k = b"".join(decoder.feed(wav.readframes(wav.getnframes())) + decoder.flush())
    raw = tmp_path / "mic.raw"
    raw.write_bytes(b"\x00\x00" * 8000 + pcm16k + b"\x00\x00" * 16000 * 3)  # 0.5 s, speech, 3 s of silence
    (tmp_path / ".asoundrc").write_text(
        f'pcm.filemic {{\n type file\n slave.pcm "null"\n file "{tmp_path / "played.raw"}"\n infile "{raw}"\n'
        f' format "raw"\n}}\n')
    env = {**os.environ, "HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "assistant", "mic", "--device", "filemic", "--url", own_server,
                           "--seconds", "5", "--json", *NOW], capture_output=True, text=True, timeout=120,
                          env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    (intent,) = of(events, "intent")
    assert intent["intent"] == "book_meeting"
    assert {s["name"]: normalized(s["text"]) for s in intent["slots"]} == {
        "room": "everest", "date": "tomorrow", "start_time": "9", "duration": "an hour"}
    (result,) = of(events, "result")
    assert_valid_result(result["result"])
    command = result["result"]["command"]
    assert (result["result"]["committed"], command["room"], command["start"], command["end"]) == (
        True, "everest", "2026-12-03T09:00:00+01:00", "2026-12-03T10:00:00+01:00")
    assert "voice-to-action:" in proc.stderr
    (reply,) = of(events, "reply_audio")
    assert reply["text"] == "Booked Everest tomorrow, nine to ten a.m."
    played = np.frombuffer((tmp_path / "played.raw").read_bytes(), np.int16)
    assert np.abs(played).max() > 3000, "the reply was not played"


def test_a_spoken_short_request_then_its_time_books_the_named_room(own_server: str) -> None:
    """"Book Denali." ... "Tomorrow at three p.m. for an hour.": the first turn asks, the second fills it, and
    the room booked is the one named in the first turn (not the smallest free one)."""
    events = send(own_server, DATA / "book_denali_then_time.wav", "--fast")
    results = [e["result"] for e in of(events, "result")]
    assert len(results) == 2, [normalized(e["text"]) for e in of(events, "transcript")]
    for result in results:
        assert_valid_result(result)
    assert results[0]["type"] == "clarify" and "date" in results[0]["missing"]
    command = results[1]["command"]
    assert (command["action"], command["room"], command["start"], command["end"]) == (
        "book_meeting", "denali", "2026-12-03T15:00:00+01:00", "2026-12-03T16:00:00+01:00")
    assert results[1]["committed"] is True
