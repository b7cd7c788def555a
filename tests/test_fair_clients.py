"""Issue 31's findings, each against a real `assistant serve` (real models, real websockets on loopback, a real
SQLite file): fairness per client identity however many sessions it opens, tokens checked at the handshake with
unauthenticated connections kept apart and short-lived, wrong tokens backed off, no secret in any error, clients
that say in one line why they were refused, a `speech_end` for every `speech_start`, one date range for booking
and showing, and a clear error for a config file that is not there (docs/reliability.md)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import time
import wave
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

from assistant.clients.send import Received, stream_audio
from assistant.events import _START_TYPES, Latency, ResultEvent
from assistant.nlu.model_folder import NLUModel
from assistant.server.access import token_subprotocol
from assistant.server.spawn import spawn_server
from tests.test_reliability import START, _events, _http, _set, _speech_16k

DATA = Path(__file__).resolve().parent / "data"
CORPUS = DATA / "corpus"
TOKENS = {"alice": "alice-token-0123456789", "flood": "flood-token-0123456789"}
ENGLISH = ["--set", 'nlu.languages=["en"]']
# Small pools and back-off, so that each is reached in a second or two; everything else is the default.
GUARD_LIMITS = {"max_unauthenticated_per_address": 4, "max_unauthenticated": 6,
                "wrong_tokens_before_backoff": 3, "max_backoff_s": 2.0}


def _token_server(folder: Path, limits: dict[str, object], log: list[str] | None = None
                  ) -> tuple[subprocess.Popen[str], str]:
    tokens = folder / "tokens"
    tokens.write_text("".join(f"{name} {token}\n" for name, token in TOKENS.items()))
    env = {k: v for k, v in os.environ.items() if k != "ASSISTANT_TOKEN"}
    return spawn_server(folder / "b.sqlite", [*ENGLISH, *_set("access", {"tokens_file": str(tokens)}),
                                              *_set("limits", limits)], env=env, log=log)


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory, meeting_model: NLUModel) -> Iterator[tuple[str, list[str]]]:
    log: list[str] = []
    proc, url = _token_server(tmp_path_factory.mktemp("tokens"), GUARD_LIMITS, log)
    yield url, log
    proc.terminate()
    proc.wait(30)


def _bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[name]}"}


def _ready(ws: ClientConnection, start: dict[str, Any] | None = None) -> dict[str, Any]:
    ws.send(json.dumps(start or START))
    event: dict[str, Any] = json.loads(ws.recv(timeout=10))
    return event


# ---- finding 1: a fair share per client, however many sessions it opens --------------------------------------
# One identity streams the spoken corpus from FLOOD_SESSIONS sessions at once, each at FLOOD_SPEED times real time:
# inside every per-session limit (audio_speed 4), and together inside the client's (client_audio_speed 32). Another
# identity then speaks one booking in real time. Before, every session was served in turn, so the real-time user
# waited behind a decode of each flooding session (9.74 s beside these 16 on a 2-core Xeon, 0.51 s alone; the probe
# measured 15-17.5 s beside 24); now clients are served in turn, and it waits for about one decode of the flood's
# besides its own (0.66 s there). The bound is in this machine's own decodes, measured by the server during the
# flood, over what the same request took on the quiet server: a slower processor's decodes are slower for both.
FLOOD_SESSIONS, FLOOD_SPEED = 16, 1.9
EXTRA_DECODES_AT_MOST = 4


def _r02() -> tuple[bytes, int]:
    with wave.open(str(CORPUS / "r02.wav"), "rb") as wav:
        return wav.readframes(wav.getnframes()), wav.getframerate()


def _result_wait(events: list[Received]) -> tuple[float, dict[str, Any]]:
    """Seconds from the arrival of the audio where speech ended to the result (the server's `latency` event: the
    end of turn's wait included), and the result."""
    (latency,) = [r.event for r in events if isinstance(r.event, Latency)]
    result = next(r.event for r in events if isinstance(r.event, ResultEvent))
    assert isinstance(latency, Latency) and isinstance(result, ResultEvent)
    return latency.stages_ms["result"] / 1000, result.result


async def _alone(url: str, now: str) -> list[Received]:
    pcm, rate = _r02()
    got: list[Received] = []
    await stream_audio(url, pcm, rate, 1, got.append, now=now, tz=START["timezone"], token=TOKENS["alice"])
    return got


async def _many_sessions_beside_a_real_time_user(url: str) -> tuple[list[list[Received]], list[Received]]:
    flood_pcm = _speech_16k(leave_out="r02.wav")  # only the real-time user's request books Kilimanjaro
    floods: list[list[Received]] = [[] for _ in range(FLOOD_SESSIONS)]
    flooding = [asyncio.create_task(stream_audio(url, flood_pcm[i * 64000:], 16000, 1, floods[i].append,
                                                 now=START["now"], tz=START["timezone"], token=TOKENS["flood"],
                                                 speed=FLOOD_SPEED))
                for i in range(FLOOD_SESSIONS)]
    await asyncio.sleep(4.0)  # the flood's utterances are queued first
    real = await _alone(url, START["now"])
    for task in flooding:
        task.cancel()
    await asyncio.gather(*flooding, return_exceptions=True)
    return floods, real


def _final_decode_s(url: str) -> float:
    """The server's mean final decode so far, in seconds (its /metrics)."""
    samples = _http(url, "GET", "/metrics", _bearer("alice")).body.decode()  # type: ignore[attr-defined]
    values = {(s.name, s.labels.get("work")): s.value for family in text_string_to_metric_families(samples)
              for s in family.samples}
    return values[("voice_compute_seconds_sum", "asr_final")] / values[("voice_compute_seconds_count", "asr_final")]


def test_many_sessions_of_one_client_do_not_starve_another_client(tmp_path: Path, meeting_model: NLUModel) -> None:
    proc, url = _token_server(tmp_path, {})
    try:
        quiet, _ = _result_wait(asyncio.run(_alone(url, "2026-12-09T10:00:00")))  # another day: no conflict
        floods, real = asyncio.run(_many_sessions_beside_a_real_time_user(url))
        decode_s = _final_decode_s(url)
    finally:
        proc.terminate()
        proc.wait(30)
    waited, result = _result_wait(real)
    print(f"the real-time user's result came {waited:.2f} s after its speech beside {FLOOD_SESSIONS} sessions of "
          f"another client ({quiet:.2f} s alone; a final decode took {decode_s:.2f} s on average)")
    assert result["command"]["room"] == "kilimanjaro"
    assert waited < quiet + EXTRA_DECODES_AT_MOST * decode_s  # before: about one decode per flooding session
    flood_results = sum(isinstance(r.event, ResultEvent) for flood in floods for r in flood)
    assert flood_results > 0  # the flood was served too, only in turn


def test_a_trusted_proxy_names_the_client_and_anyone_else_s_forwarded_for_is_ignored(
        tmp_path: Path, meeting_model: NLUModel) -> None:
    """Without tokens a client is its address; behind a trusted proxy, the address it forwarded."""
    limits = _set("limits", {"max_connections_per_client": 2})
    proxied, url = spawn_server(tmp_path / "a.sqlite", [*ENGLISH, *limits,
                                                         *_set("access", {"trusted_proxies": ["127.0.0.1"]})])
    plain, plain_url = spawn_server(tmp_path / "b.sqlite", [*ENGLISH, *limits])
    try:
        def fill(server: str, forwarded: str) -> int:
            """How many connections from `forwarded` the server took before refusing one (at most 3)."""
            with ExitStack() as open_:
                for taken in range(3):
                    try:
                        open_.enter_context(connect(server, additional_headers={"X-Forwarded-For": forwarded}))
                    except InvalidStatus as refused:
                        assert refused.response.status_code == 503
                        return taken
                return 3

        with ExitStack() as held:  # 10.0.0.1 fills its share behind the proxy; 10.0.0.2 still gets its own
            for _ in range(2):
                held.enter_context(connect(url, additional_headers={"X-Forwarded-For": "198.51.100.7, 10.0.0.1"}))
            assert fill(url, "10.0.0.1") == 0
            assert fill(url, "10.0.0.2") == 2
        with ExitStack() as held:  # not a trusted proxy: the header is only a claim, every client is 127.0.0.1
            for _ in range(2):
                held.enter_context(connect(plain_url, additional_headers={"X-Forwarded-For": "10.0.0.1"}))
            assert fill(plain_url, "10.0.0.2") == 0
    finally:
        for server in (proxied, plain):
            server.terminate()
            server.wait(30)


# ---- finding 2: no slot held without a token -----------------------------------------------------------------
def test_tokenless_handshakes_wait_apart_and_briefly_and_never_lock_out_a_client_with_a_token(
        token_server: tuple[str, list[str]]) -> None:
    url, _ = token_server
    with ExitStack() as open_:
        opened_at = time.monotonic()
        tokenless = []
        refused = 0
        for _ in range(32):  # the probe's 32 handshakes that never send a token
            try:
                tokenless.append(open_.enter_context(connect(url)))
            except InvalidStatus as exc:
                assert exc.response.status_code == 503 and b"waiting to authenticate" in exc.response.body
                refused += 1
        assert len(tokenless) == GUARD_LIMITS["max_unauthenticated_per_address"] and refused == 28
        # an authorized client at the same address is served at once: by header, and by subprotocol (browsers)
        with connect(url, additional_headers=_bearer("alice")) as ws:
            assert _ready(ws)["type"] == "ready"
        with connect(url, subprotocols=["voice-assistant", token_subprotocol(TOKENS["alice"])]) as ws:
            assert ws.subprotocol == "voice-assistant"
            assert _ready(ws)["type"] == "ready"
        for ws in tokenless:  # each closed at its deadline, with its reason
            events = _events(ws, timeout=3.0)
            held = time.monotonic() - opened_at
            assert [e["code"] for e in events] == ["unauthorized"] and ws.close_code == 1008
            assert held < 1.0, f"an unauthenticated connection was held {held:.2f} s"
    with connect(url) as ws:  # the start field still authenticates, from the pool that has room again
        assert _ready(ws, {**START, "token": TOKENS["alice"]})["type"] == "ready"


def test_a_wrong_token_in_the_subprotocol_is_refused_at_the_handshake(token_server: tuple[str, list[str]]) -> None:
    url, _ = token_server
    with pytest.raises(InvalidStatus) as refused:
        connect(url, subprotocols=["voice-assistant", token_subprotocol("not-the-token-at-all")])
    assert refused.value.response.status_code == 401


# ---- finding 5: wrong tokens back off ------------------------------------------------------------------------
def _guess(url: str, token: str) -> int:
    """The handshake's HTTP status for `token` (101: let in)."""
    try:
        with connect(url, additional_headers={"Authorization": f"Bearer {token}"}):
            return 101
    except InvalidStatus as exc:
        return exc.response.status_code


def test_wrong_tokens_from_one_address_are_backed_off_with_retry_after(tmp_path: Path,
                                                                       meeting_model: NLUModel) -> None:
    proc, url = _token_server(tmp_path, GUARD_LIMITS)
    try:
        statuses = [_guess(url, f"wrong-guess-{i:012d}") for i in range(8)]
        assert statuses == [401, 401, 401] + [429] * 5, statuses  # before: 401 for ever, 1,500 guesses a second
        try:
            connect(url, additional_headers={"Authorization": "Bearer wrong-guess-again-0000"})
        except InvalidStatus as exc:
            wait = int(exc.response.headers["Retry-After"])
        assert 1 <= wait <= GUARD_LIMITS["max_backoff_s"]
        assert _guess(url, TOKENS["alice"]) == 429  # a right token new to this address waits too: not told apart
        with connect(url) as ws:  # and in start: the same address, the same wait
            ws.send(json.dumps({**START, "token": TOKENS["alice"]}))
            assert [e["code"] for e in _events(ws)] == ["backoff"]
        time.sleep(wait + 0.2)
        assert _guess(url, TOKENS["alice"]) == 101  # after Retry-After the right token works
        assert [_guess(url, f"wrong-guess-more-{i:08d}") for i in range(2)] == [401, 429]  # waits again, longer
        assert _guess(url, TOKENS["alice"]) == 101  # a client already known at this address is not locked out
        assert _guess(url, TOKENS["flood"]) == 429  # one that is not waits like any new token
    finally:
        proc.terminate()
        proc.wait(30)


# ---- finding 3: no secret in any error -----------------------------------------------------------------------
SECRET = "s3cret-VALUE-never-echoed"


def _wrong_types(secret: str) -> list[object]:
    return [[secret], {"value": secret}, [[secret, 1]], {secret: secret}]


def test_no_start_field_of_a_wrong_type_comes_back_in_an_event(token_server: tuple[str, list[str]]) -> None:
    url, log = token_server
    seen: list[str] = []
    for field in _START_TYPES:
        for value in _wrong_types(SECRET):
            with connect(url, additional_headers=_bearer("alice")) as ws:
                ws.send(json.dumps({**START, "token": SECRET, field: value}))
                event = json.loads(ws.recv(timeout=5))
                assert event["code"] == "bad_start", (field, event)
                seen.append(json.dumps(event))
    for start in ({**START, "token": [SECRET]}, {**START, "token": SECRET * 20}, {**START, "token": SECRET}):
        with connect(url) as ws:  # not yet authenticated: a token of the wrong type, too long, or wrong
            ws.send(json.dumps(start))
            seen += [json.dumps(e) for e in _events(ws, timeout=3.0)]
    assert len(seen) > 4 * len(_START_TYPES) and not [event for event in seen if "s3cret" in event]
    assert not [line for line in log if "s3cret" in line]


# ---- finding 4: clients say what happened in one line, and wait out a busy server -----------------------------
def _send(url: str, token: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assistant", "send", str(CORPUS / "r01.wav"), "--url", url,
                           "--fast", "--now", START["now"], "--tz", START["timezone"], "--token", token],
                          capture_output=True, text=True, timeout=timeout, check=False)


def test_send_says_why_it_was_refused_in_one_line(token_server: tuple[str, list[str]]) -> None:
    url, _ = token_server
    refused = _send(url, "an-entirely-wrong-token")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines() == [
        "assistant: error: the server refused the connection: HTTP 401, the token is not valid (give the server's "
        "token: --token or $ASSISTANT_TOKEN)"]


def test_send_waits_out_a_busy_server_after_retry_after(tmp_path: Path, meeting_model: NLUModel) -> None:
    proc, url = spawn_server(tmp_path / "b.sqlite", [*ENGLISH, *_set("limits", {"max_connections": 1})])
    try:
        with connect(url) as holder:  # the one connection the server takes
            sender = subprocess.Popen([sys.executable, "-m", "assistant", "send", str(CORPUS / "r01.wav"), "--url",
                                       url, "--fast", "--now", START["now"], "--tz", START["timezone"]],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            assert sender.stderr is not None
            line = sender.stderr.readline()
            assert line.startswith("assistant send: the server is busy (too many connections: the server has 1 "
                                   "connections, its limit; try again later); trying again in 5 s (try 2 of 4)"), line
            holder.close()
        out, err = sender.communicate(timeout=120)
        assert sender.returncode == 0 and "Traceback" not in err
        results = [json.loads(x)["result"] for x in out.splitlines() if json.loads(x)["type"] == "result"]
        assert results and results[0]["command"]["room"] == "everest"
    finally:
        proc.terminate()
        proc.wait(30)


# ---- finding 6: a speech_end for every speech_start ----------------------------------------------------------
def _a_cough() -> bytes:
    """120 ms of the loudest speech of a request, between silences: it starts an utterance, too short to keep."""
    with wave.open(str(CORPUS / "r01.wav"), "rb") as wav:
        rate = wav.getframerate()
        pcm = np.frombuffer(wav.readframes(wav.getnframes()), dtype=np.int16)
    assert rate == 16000
    frame = rate // 50
    energy = [np.abs(pcm[i:i + frame].astype(float)).mean() for i in range(0, len(pcm) - frame, frame)]
    peak = int(np.argmax(energy)) * frame
    burst = pcm[peak - 960:peak + 960]
    return np.concatenate([np.zeros(rate // 2, np.int16), burst, np.zeros(rate, np.int16)]).tobytes()


def test_a_discarded_utterance_ends_with_speech_end_discarded(token_server: tuple[str, list[str]]) -> None:
    url, _ = token_server
    events: list[Received] = []
    asyncio.run(stream_audio(url, _a_cough(), 16000, 1, events.append, now=START["now"], tz=START["timezone"],
                             token=TOKENS["alice"], fast=True))
    kinds = [(r.event.type, r.event.to_dict().get("discarded")) for r in events
             if r.event.type in ("speech_start", "speech_end", "transcript")]
    assert kinds == [("speech_start", None), ("speech_end", True)]


# ---- finding 7: one date range for booking and showing -------------------------------------------------------
async def _say_typed_edge(url: str, wav: Path) -> list[Received]:
    with wave.open(str(wav), "rb") as w:
        pcm, rate = w.readframes(w.getnframes()), w.getframerate()
    got: list[Received] = []
    await stream_audio(url, pcm, rate, 1, got.append, now="2199-12-31T10:00:00", tz="UTC", fast=True,
                       token=TOKENS["alice"])
    return got


def test_tomorrow_on_the_last_supported_day_is_asked_about_not_booked(token_server: tuple[str, list[str]]) -> None:
    url, _ = token_server
    got = asyncio.run(_say_typed_edge(url, CORPUS / "r01.wav"))  # "Book Everest tomorrow at nine for an hour."
    (result,) = [r.event.result for r in got if isinstance(r.event, ResultEvent)]
    assert result["type"] == "clarify" and result["doubt"]["check"] == "out_of_range", result
    assert "2199-12-31" in result["question"] and "2200-01-01" in result["question"]
    day = _http(url, "GET", "/api/day?date=2199-12-31&tz=UTC", _bearer("alice"))
    assert day.status == 200 and json.loads(day.body)["bookings"] == []  # type: ignore[attr-defined]
    assert _http(url, "GET", "/api/day?date=2200-01-01&tz=UTC", _bearer("alice")).status == 400


# ---- finding 8: a config file that is not there --------------------------------------------------------------
def test_a_config_file_that_does_not_exist_is_named_as_such(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "assistant.toml"
    proc = subprocess.run([sys.executable, "-m", "assistant", "serve", "--port", "0", "--config", str(missing),
                           "--store", str(tmp_path / "b.sqlite")], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 2 and "listening" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [f"assistant: error: --config {missing}: no such file"]


def test_the_subprotocol_token_is_base64url_of_the_token() -> None:
    """The page builds it the same way (app.js tokenProtocols): UTF-8, base64url, no padding."""
    encoded = token_subprotocol("tök/en+?=")
    assert encoded.startswith("voice-assistant.token.") and "=" not in encoded and "/" not in encoded
    tail = encoded.rsplit(".", 1)[1]
    assert base64.urlsafe_b64decode(tail + "=" * (-len(tail) % 4)).decode() == "tök/en+?="
