"""Plain HTTP on the websocket port of a real server: /metrics (per-stage latency histograms, audio and compute
counters, sessions, errors by code, the models in use), /healthz, the demo page and its files, /api/day."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import connect

from assistant.bench.e2e.report import metrics_url

DATA = Path(__file__).resolve().parent / "data"



def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(metrics_url(url), timeout=5) as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=")
        text = response.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_metrics_count_what_happened(own_server: str) -> None:
    server = own_server  # it books
    before = scrape(server)
    subprocess.run([sys.executable, "-m", "assistant", "send", str(DATA / "book_everest_tomorrow_9.wav"), "--url",
                    server, "--fast", "--now", "2026-12-02T10:00:00", "--tz", "Europe/Berlin"],
                   capture_output=True, timeout=120, check=True)

    async def bad_start() -> None:
        async with connect(server) as ws:
            await ws.send(json.dumps({"type": "start", "sample_rate": 12345}))
            assert json.loads(await ws.recv())["code"] == "unsupported_audio"

    asyncio.run(bad_start())
    after = scrape(server)

    def grew(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0.0) - before.get(key, 0.0)

    for stage in ("speech_end_decided", "transcript", "intent", "result"):
        assert grew("voice_stage_latency_seconds_count", stage=stage) == 1
    # The turn was read at its pause (a decode and a dry run), found complete, and acted on without decoding
    # again: no final decode, two NLU calls (the read's dry run and the commit).
    assert grew("voice_compute_seconds_count", work="asr_read") == 1
    assert grew("voice_compute_seconds_count", work="asr_final") == 0
    assert grew("voice_turn_verdicts_total", verdict="complete") == 1
    assert grew("voice_finals_reused_total") == 1
    # plus at most one preview per partial (none for a partial decoded after its utterance ended)
    partials = grew("voice_compute_seconds_count", work="asr_partial")
    assert 2 <= grew("voice_compute_seconds_count", work="nlu") <= 2 + partials
    assert 2.0 < grew("voice_audio_seconds_total") < 5.0  # the 2.4 s request and its trailing silence
    assert grew("voice_utterances_total", intent="book_meeting") == 1
    assert grew("voice_errors_total", code="unsupported_audio") == 1
    info = next(dict(labels) for (name, labels) in after if name == "voice_models_info")
    assert info["asr_model"] == "tiny.en" and info["nlu_backend"] == "onnxruntime"
    turn = next(dict(labels) for (name, labels) in after if name == "voice_turn_info")
    assert (turn["model"], turn["complete_ms"], turn["hold_ms"]) == ("reading", "150", "1300")
    assert after[("voice_queue_depth", (("worker", "asr"),))] == 0
    deadline = time.monotonic() + 5  # the server notices closed connections a moment after the clients
    while scrape(server)[("voice_active_sessions", ())] != 0:
        assert time.monotonic() < deadline, "sessions still counted after their connections closed"
        time.sleep(0.1)


def test_plain_http_on_the_websocket_port(server: str) -> None:
    base = server.replace("ws://", "http://")

    def get(path: str) -> tuple[int, str, bytes]:
        try:
            with urllib.request.urlopen(base + path, timeout=5) as response:
                return response.status, response.headers["Content-Type"], response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers["Content-Type"], exc.read()

    assert get("/healthz")[::2] == (200, b"ok\n")
    status, kind, page = get("/")
    assert (status, kind) == (200, "text/html; charset=utf-8") and b"Start talking" in page
    assert get("/static/app.js")[:2] == (200, "text/javascript; charset=utf-8")
    for missing in ("/nope", "/static/../web.py", "/static/nope.js", "/static/"):
        assert get(missing)[0] == 404, missing
    status, _, body = get("/api/day?date=2026-12-03&tz=Europe/Berlin")
    day = json.loads(body)
    assert status == 200 and day["date"] == "2026-12-03" and "everest" in {r["key"] for r in day["rooms"]}
    assert get("/api/day?tz=Mars/Base")[0] == 400
