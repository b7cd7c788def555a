"""Hostile and careless clients against a real `assistant serve` (real models, real websockets on loopback, a
real SQLite file): bad `start` fields and HTTP queries get codes (never 1011 or 500), only GET and HEAD are
served, the Server header names no version, connections are capped and timed out, audio faster than admitted
is refused, a flood of audio from one client does not starve a real-time one, foreign origins and missing
tokens are refused before `ready`, and bookings can only be changed by whoever made them (docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import sqlite3
import subprocess
import sys
import time
import wave
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from assistant.audio.pcm import PcmDecoder
from assistant.clients.send import Received, stream_audio
from assistant.events import ErrorEvent, ResultEvent, SpeechEnd
from assistant.nlu.model_folder import NLUModel
from assistant.server.spawn import spawn_server

DATA = Path(__file__).resolve().parent / "data"
CORPUS = DATA / "corpus"
START = {"type": "start", "sample_rate": 16000, "timezone": "Europe/Berlin", "now": "2026-12-02T10:00:00"}
# The limited server's [limits]: small, so that each limit is reached in a second or two.
LIMITS = {"start_timeout_s": 1.0, "idle_timeout_s": 2.0, "max_session_s": 5.0, "max_connections": 8,
          "max_connections_per_client": 3, "audio_speed": 2.0, "audio_burst_s": 4.0}
TOKENS = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789ab"}


def _set(section: str, values: dict[str, object]) -> list[str]:
    return [arg for key, value in values.items() for arg in ("--set", f"{section}.{key}={json.dumps(value)}")]


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory, meeting_model: NLUModel) -> Iterator[tuple[str, list[str]]]:
    """A server with tight [limits] that books nothing, and its log."""
    log: list[str] = []
    proc, url = spawn_server(tmp_path_factory.mktemp("limited") / "b.sqlite", _set("limits", LIMITS), log=log)
    yield url, log
    proc.terminate()
    proc.wait(30)


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory, meeting_model: NLUModel) -> Iterator[str]:
    """A loopback server with two tokens (alice, bob): its ws:// URL."""
    folder = tmp_path_factory.mktemp("guarded")
    tokens = folder / "tokens"
    tokens.write_text("".join(f"{name} {token}\n" for name, token in TOKENS.items()))
    env = {k: v for k, v in os.environ.items() if k != "ASSISTANT_TOKEN"}
    proc, url = spawn_server(folder / "b.sqlite", _set("access", {"tokens_file": str(tokens)}), env=env)
    yield url
    proc.terminate()
    proc.wait(30)


def _http(url: str, method: str, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    where = urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname or "", where.port, timeout=10)
    conn.request(method, path, headers=headers or {})
    response = conn.getresponse()
    response.body = response.read()  # type: ignore[attr-defined]
    conn.close()
    return response


def _events(ws: ClientConnection, timeout: float = 5.0) -> list[dict[str, Any]]:
    """Every event until the server closes the connection (or `timeout` passes)."""
    events = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            events.append(json.loads(ws.recv(timeout=max(0.01, deadline - time.monotonic()))))
    except (ConnectionClosed, TimeoutError):
        pass
    return events


def _speech_16k(leave_out: str) -> bytes:
    """The spoken corpus but one request, 95 s of requests back to back, as 16 kHz mono PCM."""
    pcm = b""
    for wav_file in sorted(CORPUS.glob("r*.wav")):
        if wav_file.name == leave_out:
            continue
        with wave.open(str(wav_file), "rb") as wav:
            decoder = PcmDecoder(wav.getframerate(), wav.getnchannels())
            pcm += b"".join(decoder.feed(wav.readframes(wav.getnframes())) + decoder.flush())
    return pcm


# ---- defect 4: every bad input gets its code, never 1011 or 500 ----------------------------------------------
@pytest.mark.parametrize(("message", "code"), [
    ({**START, "timezone": "Europe"}, "bad_start"),  # a folder of zones, not a zone
    ({**START, "timezone": "Europe/" + "x" * 300}, "bad_start"),
    ({**START, "timezone": "../../etc/passwd"}, "bad_start"),
    ({**START, "now": "9999-12-31T23:00:00", "timezone": "Pacific/Kiritimati"}, "bad_start"),
    ({**START, "now": "0001-01-01T00:00:00", "timezone": "America/New_York"}, "bad_start"),
    ('{"type": "start", "sample_rate": ' + "9" * 5001 + "}", "bad_json"),
    ("[" * 5000 + "]" * 5000, "bad_json"),
    ({**START, "sample_rate": 10**12}, "unsupported_audio"),
    ({**START, "conversation_id": "c" * 1000}, "bad_start"),
])
def test_a_bad_start_gets_its_code_and_the_connection_goes_on(limited: tuple[str, list[str]], message: object,
                                                               code: str) -> None:
    url, log = limited
    with connect(url) as ws:
        ws.send(message if isinstance(message, str) else json.dumps(message))
        reply = json.loads(ws.recv(timeout=5))
        assert (reply["type"], reply.get("code")) == ("error", code)
        assert "Error" not in reply["message"] and "Traceback" not in reply["message"]  # no internals
        ws.send(json.dumps(START))
        assert json.loads(ws.recv(timeout=5))["type"] == "ready"  # the same connection goes on
    assert not [line for line in log if "Traceback" in line]


@pytest.mark.parametrize("query", ["tz=Europe", "tz=" + "x" * 300, "date=9999-12-31", "date=0001-01-01&tz=Asia/Tokyo",
                                   "date=tomorrow", "&".join(f"k{i}=v" for i in range(50))])
def test_a_bad_day_query_is_a_400_with_a_reason(limited: tuple[str, list[str]], query: str) -> None:
    response = _http(limited[0], "GET", f"/api/day?{query}")
    assert response.status == 400
    assert json.loads(response.body)["error"] == "bad_query"  # type: ignore[attr-defined]


# ---- defect 6: GET and HEAD only -----------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW"])
def test_only_get_and_head_are_served(limited: tuple[str, list[str]], method: str) -> None:
    response = _http(limited[0], method, "/api/day")
    assert response.status == 405 and response.getheader("Allow") == "GET, HEAD"


def test_head_gives_the_headers_of_get_and_no_body(limited: tuple[str, list[str]]) -> None:
    get, head = _http(limited[0], "GET", "/"), _http(limited[0], "HEAD", "/")
    assert (head.status, head.body) == (200, b"")  # type: ignore[attr-defined]
    assert head.getheader("Content-Length") == get.getheader("Content-Length") != "0"


# ---- defect 5: no versions, no internals ---------------------------------------------------------------------
def test_the_server_header_names_no_version(limited: tuple[str, list[str]]) -> None:
    for response in (_http(limited[0], "GET", "/healthz"), _http(limited[0], "GET", "/nope")):
        assert response.getheader("Server") == "voice-assistant"
    with connect(limited[0]) as ws:
        assert ws.response is not None and ws.response.headers["Server"] == "voice-assistant"


# ---- defect 3: caps and timeouts -----------------------------------------------------------------------------
def test_connections_over_the_cap_per_client_are_refused_until_one_closes(limited: tuple[str, list[str]]) -> None:
    url = limited[0]
    with ExitStack() as open_:
        first = open_.enter_context(connect(url))
        for _ in range(int(LIMITS["max_connections_per_client"]) - 1):
            open_.enter_context(connect(url))
        with pytest.raises(InvalidStatus) as refused, connect(url):
            pass
        assert refused.value.response.status_code == 503
        assert b"address:127.0.0.1 has 3 connections, the limit per client" in refused.value.response.body
        first.close()
        deadline = time.monotonic() + 5
        while True:  # the server counts the closed one out once its socket is gone
            try:
                open_.enter_context(connect(url))
                break
            except InvalidStatus:
                assert time.monotonic() < deadline, "a closed connection still counted against the cap"
                time.sleep(0.05)


@pytest.mark.parametrize(("start", "keep_talking", "code", "after_s"), [
    (False, False, "start_timeout", LIMITS["start_timeout_s"]),
    (True, False, "idle_timeout", LIMITS["idle_timeout_s"]),
    (True, True, "session_too_long", LIMITS["max_session_s"]),
])
def test_a_connection_is_closed_with_a_reason_when_its_time_is_up(limited: tuple[str, list[str]], start: bool,
                                                                  keep_talking: bool, code: str,
                                                                  after_s: float) -> None:
    with connect(limited[0]) as ws:
        began = time.monotonic()
        if start:
            ws.send(json.dumps(START))
        events: list[dict[str, Any]] = []
        while True:
            try:
                if keep_talking:  # a quiet frame every 100 ms: never idle
                    ws.send(b"\x00\x00" * 1600)
                events.append(json.loads(ws.recv(timeout=0.1)))
            except TimeoutError:
                continue
            except ConnectionClosed:
                break
        took = time.monotonic() - began
        assert ws.close_code == 1008 and ws.close_reason == code
    assert [e.get("code") for e in events if e["type"] == "error"] == [code]
    assert after_s - 0.1 <= took <= after_s + 1.5


def test_audio_faster_than_admitted_is_refused_and_the_connection_closed(limited: tuple[str, list[str]]) -> None:
    with connect(limited[0]) as ws:
        ws.send(json.dumps(START))
        # Half a second of audio every 10 ms, 50 times real time, until the server closes: past the 4 s burst at
        # twice real time within a second of its clock, however late a busy machine lets it read the frames.
        deadline = time.monotonic() + 20
        with suppress(ConnectionClosed):
            while time.monotonic() < deadline:
                ws.send(b"\x00\x00" * 8000)
                time.sleep(0.01)
        events = _events(ws)
        assert ws.close_code == 1008 and ws.close_reason == "too_fast"
    assert [e.get("code") for e in events if e["type"] == "error"] == ["too_fast"]


# ---- defect 2: origins, hosts, tokens, owners ----------------------------------------------------------------
def test_a_foreign_origin_or_host_is_refused_before_ready_and_the_pages_own_is_served(
        limited: tuple[str, list[str]]) -> None:
    url = limited[0]
    port = urlsplit(url).port
    for headers in ({"Origin": "http://evil.example"}, {"Origin": "null"},
                    {"Origin": f"http://localhost:{port}.evil.example"}):
        with pytest.raises(InvalidStatus) as refused, connect(url, additional_headers=headers):
            pass
        assert refused.value.response.status_code == 403
        assert _http(url, "GET", "/metrics", headers).status == 403
    rebinding = _http(url, "GET", "/api/day", {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"})
    assert rebinding.status == 403  # a name that resolves to 127.0.0.1 is still another site
    for own in (f"http://127.0.0.1:{port}", None):  # the page's own origin, and a client that is no browser
        with connect(url, origin=own) as ws:  # type: ignore[arg-type]
            ws.send(json.dumps(START))
            assert json.loads(ws.recv(timeout=5))["type"] == "ready"


def test_a_server_with_tokens_refuses_clients_without_one(guarded: str) -> None:
    with connect(guarded) as ws:  # no token in the header: start must carry it
        ws.send(json.dumps(START))
        events = _events(ws)
        assert ws.close_code == 1008 and ws.close_reason == "unauthorized"
    assert [e.get("code") for e in events] == ["unauthorized"]
    with pytest.raises(InvalidStatus) as refused, \
            connect(guarded, additional_headers={"Authorization": "Bearer not-the-token-at-all"}):
        pass
    assert refused.value.response.status_code == 401
    with connect(guarded, additional_headers={"Authorization": f"Bearer {TOKENS['alice']}"}) as ws:
        ws.send(json.dumps(START))
        assert json.loads(ws.recv(timeout=5))["type"] == "ready"
    with connect(guarded) as ws:  # the browser's way: the token in start
        ws.send(json.dumps({**START, "token": TOKENS["bob"]}))
        assert json.loads(ws.recv(timeout=5))["type"] == "ready"
    for path in ("/metrics", "/api/day"):
        assert _http(guarded, "GET", path).status == 401
        assert _http(guarded, "GET", path, {"Authorization": f"Bearer {TOKENS['bob']}"}).status == 200
    assert _http(guarded, "GET", "/").status == 200  # the page itself asks for the token


def _say(url: str, wav: str, token: str) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "assistant", "send", str(CORPUS / wav), "--url", url, "--fast",
                           "--now", START["now"], "--tz", START["timezone"], "--token", token],
                          capture_output=True, text=True, timeout=120, check=True)
    (result,) = [json.loads(line)["result"] for line in proc.stdout.splitlines()
                 if json.loads(line)["type"] == "result"]
    return dict(result)


def test_only_the_token_that_booked_a_meeting_can_cancel_it(guarded: str) -> None:
    booked = _say(guarded, "r01.wav", TOKENS["alice"])  # "Book Everest tomorrow at nine for an hour."
    assert booked["committed"] and booked["command"]["room"] == "everest"
    refused = _say(guarded, "r16.wav", TOKENS["bob"])  # "Cancel my meeting in Everest tomorrow at nine."
    assert (refused["type"], refused["reason"], refused["executable"]) == ("answer", "not yours", False)
    cancelled = _say(guarded, "r16.wav", TOKENS["alice"])
    assert cancelled["committed"] and cancelled["command"]["booking_id"] == booked["command"]["booking_id"]


def test_a_bind_other_machines_can_reach_refuses_to_start_without_a_token(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ASSISTANT_TOKEN"}
    proc = subprocess.run([sys.executable, "-m", "assistant", "serve", "--host", "0.0.0.0", "--port", "0",
                           "--store", str(tmp_path / "b.sqlite")], capture_output=True, text=True, timeout=60,
                          env=env, check=False)
    assert proc.returncode == 2 and "ASSISTANT_TOKEN" in proc.stderr and "listening" not in proc.stderr


# ---- defect 1: a fair share of the recognizer ----------------------------------------------------------------
# The flood test's configuration: the server's defaults ([limits] audio_speed = 4, audio_burst_s = 30,
# max_queued_utterances = 3) and this bound on the real-time client's wait, from the end of its speech to its
# result. Served in turn, it waits at most for the flood's one decode in progress and its own. Queued first in,
# first out, it waited behind every utterance the flood had sent: 27 s behind this flood under the plain hangover
# (8.4 s behind 60 s of audio in issue 15). Reading turns at pauses slows a flood down by itself (a read holds
# the sender's stream), so the hangover is the harder case; both are held to the bound.
REAL_TIME_RESULT_WITHIN_S = 5.0


async def _flood_beside_a_real_time_client(url: str) -> tuple[list[Received], list[Received]]:
    flood_pcm = _speech_16k(leave_out="r02.wav")  # the real-time client's request: only it books Kilimanjaro
    flood: list[Received] = []
    real: list[Received] = []
    with wave.open(str(CORPUS / "r02.wav"), "rb") as wav:
        rate, pcm = wav.getframerate(), wav.readframes(wav.getnframes())
    flooding = asyncio.create_task(stream_audio(url, flood_pcm, 16000, 1, flood.append, now=START["now"],
                                                tz=START["timezone"], fast=True))
    await asyncio.sleep(0.5)  # the flood is queued first
    await stream_audio(url, pcm, rate, 1, real.append, now=START["now"], tz=START["timezone"])
    with suppress(ConnectionClosed):
        await asyncio.wait_for(flooding, 60)
    return flood, real


@pytest.mark.parametrize("turn_model", ["hangover", "reading"])
def test_a_flood_of_audio_does_not_starve_a_real_time_client(tmp_path: Path, meeting_model: NLUModel,
                                                             turn_model: str) -> None:
    log: list[str] = []
    proc, url = spawn_server(tmp_path / "b.sqlite", ["--set", f"turn.model={turn_model}"], log=log)
    try:
        flood, real = asyncio.run(_flood_beside_a_real_time_client(url))
        (end,) = [r for r in real if isinstance(r.event, SpeechEnd)]
        (result,) = [r for r in real if isinstance(r.event, ResultEvent)]
        assert result.event.result["committed"] and result.event.result["command"]["room"] == "kilimanjaro"
        waited = result.t - end.event.audio_ms / 1000  # sent in real time: audio time is the client's clock
        print(f"{turn_model}: the real-time client's result came {waited:.2f} s after its speech, beside the flood")
        assert waited <= REAL_TIME_RESULT_WITHIN_S
        codes = [r.event.code for r in flood if isinstance(r.event, ErrorEvent)]
        assert "too_fast" in codes  # the flood was stopped, with its reason
        # ... and its queued work left with it: the recognizer is idle again soon after
        deadline = time.monotonic() + 10
        while _queue_depth(url) > 0:
            assert time.monotonic() < deadline, "work of a closed connection kept the recognizer busy"
            time.sleep(0.2)
        # the flood's cancelled utterances leave no "Task exception was never retrieved", no traceback
        assert not [line for line in log if "Traceback" in line or "never retrieved" in line], "".join(log)
    finally:
        proc.terminate()
        proc.wait(30)


def _queue_depth(url: str) -> float:
    body = _http(url, "GET", "/metrics").body  # type: ignore[attr-defined]
    lines = [line for line in body.decode().splitlines() if line.startswith('voice_queue_depth{worker="asr"}')]
    return float(lines[0].split()[-1]) if lines else 0.0


# ---- faults: kill -9 in the middle of a burst of bookings, then a restart on the same file ---------------------
BURST = ["r01.wav", "r02.wav", "r03.wav", "r04.wav", "r05.wav", "r07.wav"]  # six bookings of different slots


async def _burst(url: str, files: list[str]) -> list[list[Received]]:
    async def one(name: str) -> list[Received]:
        with wave.open(str(CORPUS / name), "rb") as wav:
            rate, pcm = wav.getframerate(), wav.readframes(wav.getnframes())
        got: list[Received] = []
        with suppress(ConnectionClosed, OSError):
            await stream_audio(url, pcm, rate, 1, got.append, now=START["now"], tz=START["timezone"], fast=True)
        return got

    return list(await asyncio.gather(*(one(name) for name in files)))


def test_kill_9_mid_burst_loses_no_committed_booking_and_a_replay_never_doubles(tmp_path: Path,
                                                                                 meeting_model: NLUModel) -> None:
    store = tmp_path / "b.sqlite"
    proc, url = spawn_server(store)

    async def burst_then_kill() -> list[list[Received]]:
        running = asyncio.ensure_future(_burst(url, BURST))
        await asyncio.sleep(3.0)  # some bookings are committed, others are still being recognized
        proc.kill()  # SIGKILL: no clean shutdown of anything
        return await running

    seen = asyncio.run(burst_then_kill())
    proc.wait(30)
    confirmed = {r.event.result["command"]["booking_id"] for got in seen for r in got
                 if isinstance(r.event, ResultEvent) and r.event.result.get("committed")}
    with sqlite3.connect(store) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = {row[0] for row in db.execute("SELECT id FROM bookings WHERE cancelled_utc IS NULL")}
    assert confirmed <= stored  # every booking a client was told about survived the kill

    proc, url = spawn_server(store)  # restart on the same file, and every request is sent again
    try:
        replayed = asyncio.run(_burst(url, BURST))
    finally:
        proc.terminate()
        proc.wait(30)
    results = [r.event.result for got in replayed for r in got if isinstance(r.event, ResultEvent)]
    assert len(results) == len(BURST)
    assert sum(r.get("committed", False) for r in results) == len(BURST) - len(stored)  # the rest: conflicts
    with sqlite3.connect(store) as db:
        slots = db.execute("SELECT room, start_utc, count(*) FROM bookings WHERE cancelled_utc IS NULL "
                           "GROUP BY room, start_utc").fetchall()
    assert len(slots) == len(BURST) and all(count == 1 for *_, count in slots)  # each request booked once
