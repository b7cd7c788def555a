"""Seeded fuzzing (hypothesis, derandomized: the same examples every run, bounded in number): the protocol codec
and `start` validation raise only the protocol's own errors, and a real server fed fuzzed message sequences
answers each with a documented code, never closes with 1011, logs no traceback, and still serves a healthy client
afterwards (docs/reliability.md)."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from assistant.audio.stream import StreamConfig
from assistant.config import Settings
from assistant.errors import InputError, ProtocolError
from assistant.events import Audio, Start, Stop, decode_client
from assistant.nlu.model_folder import NLUModel
from assistant.server.session import Session
from assistant.server.spawn import spawn_server
from assistant.server.workers import Workers
from tests.fakes import FakeRecognizer, fake_pipeline

CORPUS = Path(__file__).resolve().parent / "data" / "corpus"
# Every code a client may hear for what it sent (docs/protocol.md). "internal" is not among them: it means a bug.
CLIENT_CODES = {"no_start", "bad_json", "bad_message", "unknown_type", "bad_start", "message_too_large",
                "unsupported_audio", "frame_too_large", "too_fast", "overloaded", "start_timeout", "idle_timeout",
                "session_too_long", "unauthorized"}
FUZZ = settings(derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                                       max_size=4), max_leaves=12)
start_fields = st.fixed_dictionaries({"type": st.just("start")}, optional={
    "protocol": json_values, "sample_rate": st.integers(-10, 10**7) | json_values,
    "format": st.sampled_from(["pcm_s16le", "pcm_f32le", "", "opus"]) | json_values,
    "channels": st.integers(-2, 9) | json_values,
    "timezone": st.sampled_from(["UTC", "Europe/Berlin", "Europe", "Mars/Base", "../../etc/passwd", "", "Etc/GMT+14",
                                 "Pacific/Kiritimati", "x" * 300]) | st.text(max_size=70),
    "now": st.sampled_from(["2026-12-02T10:00:00", "9999-12-31T23:59:59", "0001-01-01T00:00:00",
                            "2026-12-02T10:00:00-23:59", "tomorrow"]) | st.text(max_size=30) | json_values,
    "conversation_id": st.text(max_size=300) | json_values, "token": st.text(max_size=40) | json_values,
    "extra": json_values})
text_messages = (start_fields.map(json.dumps) | json_values.map(json.dumps) | st.text(max_size=200)
                 | st.sampled_from(['{"type": "stop"}', "[" * 3000, '{"type": "start", "sample_rate": ' + "9" * 5000
                                    + "}", "\ud800", '{"type": "start", "sample_rate": 16000}']))
messages = text_messages | st.binary(max_size=2048) | st.integers(0, 400_000).map(lambda n: b"\x01" * n)


def _utf8(message: str | bytes) -> bool:
    """A text frame carries UTF-8: a lone surrogate cannot even be sent (websockets refuses it client-side)."""
    try:
        return isinstance(message, bytes) or bool(message.encode()) or True
    except UnicodeEncodeError:
        return False


wire_messages = messages.filter(_utf8)


@FUZZ
@given(message=messages)
def test_the_codec_raises_only_protocol_errors(message: str | bytes) -> None:
    try:
        decoded = decode_client(message)
    except ProtocolError as exc:
        assert exc.code in CLIENT_CODES and len(exc.message) < 400
        return
    assert isinstance(decoded, Start | Stop | Audio)


@pytest.fixture(scope="module")
def workers(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workers]:
    made = Workers(FakeRecognizer(""), fake_pipeline(settings, tmp_path_factory.mktemp("fuzz") / "b.sqlite"))
    yield made
    made.close()


@FUZZ
@given(fields=start_fields)
def test_a_start_the_codec_accepts_makes_a_session_or_an_input_error(workers: Workers, fields: dict[str, Any]
                                                                      ) -> None:
    try:
        start = decode_client(json.dumps(fields))
    except ProtocolError:
        return
    assert isinstance(start, Start)

    async def send(_event: object) -> None:
        pass

    try:
        Session(start, workers, StreamConfig(), send)
    except InputError as exc:
        assert exc.code in CLIENT_CODES


@pytest.fixture(scope="module")
def fuzzed_server(tmp_path_factory: pytest.TempPathFactory, meeting_model: NLUModel
                  ) -> Iterator[tuple[str, list[str]]]:
    log: list[str] = []
    proc, url = spawn_server(tmp_path_factory.mktemp("fuzzed") / "b.sqlite",
                             ["--set", "limits.audio_burst_s=2", "--set", "limits.start_timeout_s=2"], log=log)
    yield url, log
    assert proc.poll() is None, "the server died under fuzzing"
    proc.terminate()
    proc.wait(30)


PROBE = json.dumps({"type": "start", "sample_rate": 16000})


@settings(FUZZ, max_examples=150)
@given(sequence=st.lists(wire_messages, min_size=1, max_size=6))
def test_the_live_server_answers_fuzzed_messages_with_codes(fuzzed_server: tuple[str, list[str]],
                                                            sequence: list[str | bytes]) -> None:
    url, log = fuzzed_server
    events: list[dict[str, Any]] = []
    with connect(url, max_size=1 << 22) as ws:
        try:
            for message in sequence:
                ws.send(message)
            ws.send(PROBE)  # then a valid start: the connection must still answer it, or be closed for a limit
            while not events or events[-1]["type"] != "ready":
                events.append(json.loads(ws.recv(timeout=10)))
        except ConnectionClosed:
            pass
        close_code = ws.close_code
    assert close_code in (None, 1000, 1008, 1009), (close_code, ws.close_reason)  # 1009: over 4 MiB, by design
    codes = {e["code"] for e in events if e["type"] == "error"}
    assert codes <= CLIENT_CODES, codes
    if close_code == 1008:
        assert ws.close_reason in CLIENT_CODES
    assert not [line for line in log if "Traceback" in line], "".join(log[-40:])


def test_after_the_fuzzing_a_healthy_client_is_served(fuzzed_server: tuple[str, list[str]]) -> None:
    url, _ = fuzzed_server
    with connect(url) as ws:  # a few malformed messages first, on this module's server whatever the order
        for junk in ("{", b"\x00" * 300_000, '{"type": "start", "sample_rate": 7}'):
            ws.send(junk)
    proc = subprocess.run([sys.executable, "-m", "assistant", "send", str(CORPUS / "r22.wav"), "--url", url,
                           "--now", "2026-12-02T10:00:00", "--tz", "Europe/Berlin"],
                          capture_output=True, text=True, timeout=120, check=True)
    results = [json.loads(line) for line in proc.stdout.splitlines() if json.loads(line)["type"] == "result"]
    assert [r["result"]["kind"] for r in results] == ["availability"]  # "Is Everest free tomorrow at three?"


@pytest.mark.parametrize("headers", [
    [("Host", "[::1")], [("Host", "")], [("Host", "x" * 4000)], [("Origin", "http://[::1")], [("Origin", "file://")],
    [("Authorization", "Bearer " + "x" * 4000)], [("Authorization", "Basic dXNlcjpwdw==")],
    [("Origin", "http://evil.example"), ("Origin", "http://127.0.0.1")],  # which one counts? neither
    [("Connection", "keep-alive")],  # a second Connection header beside the upgrade's
])
def test_junk_headers_are_refused_or_ignored_never_a_crash(fuzzed_server: tuple[str, list[str]],
                                                           headers: list[tuple[str, str]]) -> None:
    url, log = fuzzed_server
    where = urlsplit(url)
    upgrade = [("Connection", "Upgrade"), ("Upgrade", "websocket"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
               ("Sec-WebSocket-Version", "13")]
    for path, extra in (("/api/day", []), ("/", upgrade)):
        conn = http.client.HTTPConnection(where.hostname or "", where.port, timeout=10)
        conn.putrequest("GET", path, skip_host=any(name == "Host" for name, _ in headers))
        for name, value in [*extra, *headers]:
            conn.putheader(name, value)
        conn.endheaders()
        status = conn.getresponse().status
        conn.close()
        assert status in (101, 200, 400, 401, 403), (path, headers, status)
    assert not [line for line in log if "Traceback" in line], "".join(log[-40:])
