"""The load benchmark's harness: what it measures from server events, its verdicts, a real sweep against a real
server on a short corpus (structure and correctness, never speed), and a server that never answers, which must
end in a verdict instead of a hang."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from assistant.bench.e2e.corpus import CorpusItem
from assistant.bench.e2e.judge import Measurement, judge, measure_request
from assistant.bench.layouts import parse_layouts, triton_batching_between
from assistant.clients.send import Received
from assistant.errors import ConfigError

CORPUS = Path(__file__).resolve().parent / "data" / "corpus"
EVEREST = CorpusItem("r01.wav", b"", 16_000, 1, "book_meeting",
                     {"room": "everest", "start": "2026-12-03T09:00:00+01:00", "end": "2026-12-03T10:00:00+01:00"})


def _received(lines: list[dict[str, Any]]) -> list[Received]:
    """Events as `assistant send` prints them, read back through the codec."""
    return [Received.from_line(json.dumps(line)) for line in lines]


def _events(intent: str = "book_meeting", room: str = "everest", start: str = "2026-12-03T09:00:00+01:00",
            committed: bool = True) -> list[Received]:
    result = {"type": "command", "committed": committed, "executable": True,
              "command": {"action": intent, "room": room, "start": start, "end": "2026-12-03T10:00:00+01:00"}}
    return _received([
        {"type": "ready", "session_id": "s1", "sample_rate": 16000, "t": 0.0},
        {"type": "speech_start", "utterance": 1, "audio_ms": 300, "t": 0.31},
        {"type": "speech_end", "utterance": 1, "audio_ms": 2400, "forced": False, "t": 2.70},
        {"type": "transcript", "utterance": 1, "text": "book everest tomorrow at 9", "t": 3.30},
        {"type": "intent", "utterance": 1, "intent": intent, "confidence": 0.99, "t": 3.32,
         "slots": [{"name": "room", "text": room.capitalize()}]},
        {"type": "result", "utterance": 1, "result": result, "t": 3.33},
        {"type": "latency", "utterance": 1, "t": 3.34,
         "stages_ms": {"speech_end_decided": 300.0, "transcript": 900.0, "intent": 920.0, "result": 925.0}},
    ])


def test_stages_are_measured_from_the_end_of_speech_in_the_audio() -> None:
    (m,) = measure_request(0, EVEREST, 1.5, _events(), finished=True)
    assert m.stages_s == {"speech_end": 0.3, "transcript": 0.9, "intent": 0.92, "result": 0.93}
    assert m.voice_to_action_s == 0.93
    assert m.server_ms["transcript"] == 900.0
    assert (m.intent, m.right, m.lost) == ("book_meeting", True, False)


def test_a_wrong_intent_room_or_time_is_not_right() -> None:
    assert not measure_request(0, EVEREST, 0, _events(intent="cancel_meeting"), True)[0].right
    assert not measure_request(0, EVEREST, 0, _events(room="fuji"), True)[0].right
    assert not measure_request(0, EVEREST, 0, _events(start="2026-12-03T21:00:00+01:00"), True)[0].right
    # an uncommitted command (a dry run, or a conflict) is judged on intent and room alone
    assert measure_request(0, EVEREST, 0, _events(start="2026-12-03T21:00:00+01:00", committed=False), True)[0].right


def test_missing_results_are_lost_only_when_the_server_did_not_finish() -> None:
    cut = _events()[:4]  # speech ended, transcript came, then nothing
    assert measure_request(0, EVEREST, 0, cut, finished=False)[0].lost
    assert measure_request(0, EVEREST, 0, [], finished=False)[0].lost
    nothing_said = _events()[:3] + _received([{"type": "transcript", "utterance": 1, "text": "", "t": 3.0}])
    assert not measure_request(0, EVEREST, 0, nothing_said, finished=True)[0].lost
    assert not measure_request(0, EVEREST, 0, _events()[:1], finished=True)[0].lost


def _timed(points: list[tuple[float, float]]) -> list[Measurement]:
    return [Measurement(0, "r01.wav", sent, stages_s={"result": latency}) for sent, latency in points]


def test_the_verdict_tells_keeping_up_from_falling_behind() -> None:
    steady = _timed([(t, 1.0 + 0.1 * (t % 3)) for t in range(0, 60, 5)])
    assert judge(steady, 60).keeps_up
    growing = _timed([(t, 1.0 + 0.05 * t) for t in range(0, 60, 5)])  # +50 ms per second: a queue that grows
    verdict = judge(growing, 60)
    assert not verdict.keeps_up and "grows 50 ms per second" in verdict.reason
    lost = steady + [Measurement(1, "r02.wav", 30.0, lost=True)]
    assert judge(lost, 60).reason.startswith("cannot keep up: 1 of 13 requests")


@pytest.fixture()
def short_corpus(tmp_path: Path) -> Path:
    items = [i for i in json.loads((CORPUS / "requests.json").read_text()) if i["file"] in ("r01.wav", "r25.wav")]
    for item in items:
        shutil.copy(CORPUS / item["file"], tmp_path / item["file"])
    (tmp_path / "requests.json").write_text(json.dumps(items))
    return tmp_path


def _bench(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assistant", "bench", "e2e", *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_a_sweep_against_a_real_server(short_corpus: Path, tmp_path: Path, meeting_model: object) -> None:
    report, plot = tmp_path / "e2e.json", tmp_path / "e2e.png"
    # --client-procs 2: the 2-client point runs one client in each of two processes (1 client: in this one)
    run = _bench("--spawn", "--clients", "1,2", "--client-procs", "2", "--corpus", str(short_corpus),
                 "--duration", "6", "--json", str(report), "--plot", str(plot), timeout=600)
    assert "Traceback" not in run.stderr, run.stderr
    data = json.loads(report.read_text())
    assert [p["clients"] for p in data["points"]] == [1, 2] and data["options"]["client_procs"] == 2
    assert data["models"]["asr_model"] == "tiny.en"
    for point in data["points"]:
        assert point["requests"] >= point["clients"]  # every client got at least one request in
        assert point["lost"] == 0 and point["keeps_up"], point["verdict"]
        assert point["right"] == point["requests"], [m for m in point["measurements"] if not m["right"]]
        assert {m["file"] for m in point["measurements"]} <= {"r01.wav", "r25.wav"}
        for m in point["measurements"]:
            s = m["stages_s"]
            # replies are spoken (not played): their first audio comes after the result
            assert 0 < s["speech_end"] <= s["transcript"] <= s["intent"] <= s["result"] <= s["first_reply_audio"]
            assert list(m["server_ms"]) == ["speech_end_decided", "transcript", "intent", "result", "reply_audio"]
        assert point["voice_to_action"]["n"] == point["requests"]
        assert point["server"]["compute_per_audio_second"] > 0
        assert {m["client"] for m in point["measurements"]} == set(range(point["clients"]))
        load = point["load"]
        assert load["layout"] == "single" and load["model_server_cores"] is None and load["triton_batching"] is None
        assert len(load["gateway_cores"]) == 1 and load["gateway_cores"][0] > 0 and load["client_cores"] > 0
        assert load["frames_per_s_per_gateway"] > 0
    assert "| clients |" in run.stdout and run.returncode == 0
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_one_run_compares_the_single_process_with_gateways_on_triton(short_corpus: Path, tmp_path: Path,
                                                                      meeting_model: object) -> None:
    """`--layouts single,triton:2`: the same sweep against the single process, then against a model server
    (Triton, its own environment) and two gateways on one port, each started and stopped in turn."""
    report, plot = tmp_path / "e2e.json", tmp_path / "e2e.png"
    run = _bench("--layouts", "single,triton:2", "--clients", "1,2", "--corpus", str(short_corpus),
                 "--duration", "6", "--json", str(report), "--plot", str(plot), timeout=900)
    assert "Traceback" not in run.stderr, run.stderr
    data = json.loads(report.read_text())
    assert data["layouts"] == ["single", "triton:2"]
    assert [(p["load"]["layout"], p["clients"]) for p in data["points"]] == [
        ("single", 1), ("single", 2), ("triton:2", 1), ("triton:2", 2)]
    for point in data["points"]:
        assert point["lost"] == 0 and point["keeps_up"], point["verdict"]
        assert point["right"] == point["requests"] >= point["clients"]
    for point in data["points"][2:]:
        load = point["load"]
        assert load["gateways"] == 2 and len(load["gateway_cores"]) == 2 and load["model_server_cores"] > 0
        batching = load["triton_batching"]  # every request went through Triton's two models
        assert batching["asr"]["requests"] >= point["requests"] and batching["nlu"]["requests"] >= point["requests"]
        assert all(b["requests_per_execution"] >= 1 for b in batching.values())
        assert point["server"] is None  # one gateway's /metrics would speak for half the connections
    assert "triton:2" in run.stdout and run.returncode == 0
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _misbehaving_server(handler: Callable[[ServerConnection], Awaitable[None]]) -> Iterator[str]:
    ready = threading.Event()
    url: list[str] = []
    stop: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    async def main() -> None:
        stop.append((asyncio.get_running_loop(), asyncio.Event()))
        async with serve(handler, "127.0.0.1", 0) as server:
            url.append(f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}")
            ready.set()
            await stop[0][1].wait()

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    assert ready.wait(10)
    yield url[0]
    loop, stopped = stop[0]
    loop.call_soon_threadsafe(stopped.set)
    thread.join(10)


@pytest.fixture()
def silent_server() -> Iterator[str]:
    """A websocket server that takes audio and never answers: the harness's collaborator gone wrong."""

    async def swallow(connection: ServerConnection) -> None:
        async for _ in connection:
            pass

    yield from _misbehaving_server(swallow)


@pytest.fixture()
def crashing_server() -> Iterator[str]:
    """A websocket server whose handler fails on the first message: the connection closes with 1011."""

    async def crash(connection: ServerConnection) -> None:
        await connection.recv()
        raise RuntimeError("the server fell over")

    yield from _misbehaving_server(crash)


def test_a_server_that_never_answers_gets_a_verdict_not_a_hang(short_corpus: Path, tmp_path: Path,
                                                              silent_server: str) -> None:
    report = tmp_path / "e2e.json"
    run = _bench("--url", silent_server, "--clients", "1,2", "--corpus", str(short_corpus), "--duration", "2",
                 "--max-wait", "1", "--json", str(report), timeout=120)
    assert run.returncode == 3, run.stderr
    (point,) = json.loads(report.read_text())["points"]  # the sweep stopped: 2 clients were not run
    assert point["clients"] == 1 and not point["keeps_up"]
    assert point["verdict"].startswith("cannot keep up") and point["lost"] == point["requests"] >= 1
    assert "2 client(s) not run" in run.stderr


def test_a_server_that_drops_connections_counts_them_as_lost(short_corpus: Path, tmp_path: Path,
                                                            crashing_server: str) -> None:
    report = tmp_path / "e2e.json"
    run = _bench("--url", crashing_server, "--clients", "1", "--corpus", str(short_corpus), "--duration", "2",
                 "--max-wait", "1", "--json", str(report), timeout=120)
    assert run.returncode == 3 and "Traceback" not in run.stderr, run.stderr
    (point,) = json.loads(report.read_text())["points"]
    assert not point["keeps_up"] and point["lost"] == point["requests"] >= 1


@pytest.fixture()
def hanging_up_server() -> Iterator[str]:
    """A TCP server that accepts and hangs up before the websocket handshake is answered (a busy box at its
    limits): the client sees an invalid handshake, not a closed websocket."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def hang_up() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            connection.close()

    thread = threading.Thread(target=hang_up, daemon=True)
    thread.start()
    yield f"ws://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join(5)
    listener.close()


def test_a_refused_handshake_counts_as_lost_not_as_a_crash(short_corpus: Path, tmp_path: Path,
                                                           hanging_up_server: str) -> None:
    report = tmp_path / "e2e.json"
    run = _bench("--url", hanging_up_server, "--clients", "2", "--client-procs", "2", "--corpus", str(short_corpus),
                 "--duration", "2", "--max-wait", "1", "--json", str(report), timeout=120)
    assert run.returncode == 3 and "Traceback" not in run.stderr, run.stderr
    (point,) = json.loads(report.read_text())["points"]
    assert not point["keeps_up"] and point["lost"] == point["requests"] >= 2


def test_a_short_soak_reports_requests_errors_and_memory(short_corpus: Path, tmp_path: Path,
                                                         meeting_model: object) -> None:
    """`bench soak` at a smaller scale: one client for 12 s (structure and correctness, never speed)."""
    report, plot = tmp_path / "soak.json", tmp_path / "soak.png"
    run = subprocess.run([sys.executable, "-m", "assistant", "bench", "soak", "--clients", "1", "--minutes", "0.2",
                          "--corpus", str(short_corpus), "--json", str(report), "--plot", str(plot)],
                         capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    data = json.loads(report.read_text())
    assert data["requests"] >= 1 and data["results"] == data["requests"] and data["lost"] == 0
    assert data["errors_by_code"] == {} and data["server_alive_at_end"]
    assert 50 < data["rss_mb"]["start"] <= data["rss_mb"]["max"]
    assert len(data["rss_samples"]) >= 3 and plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_layouts_are_read_from_the_command_line_and_bad_ones_are_refused() -> None:
    assert [layout.name for layout in parse_layouts("single, triton:4")] == ["single", "triton:4"]
    assert [layout.gateways for layout in parse_layouts("triton:1,single")] == [1, 0]
    two_servers = parse_layouts("triton:4x2,triton:4x1")
    assert [(layout.gateways, layout.model_servers, layout.name) for layout in two_servers] == [
        (4, 2, "triton:4x2"), (4, 1, "triton:4")]
    for bad in ("", "triton", "triton:0", "triton:x", "gateways:2", "single;triton:2", "triton:4x0", "triton:4x",
                "triton:x2", "triton:4x2x2"):
        with pytest.raises(ConfigError, match="--layouts"):
            parse_layouts(bad)


def test_batching_is_read_from_the_difference_of_tritons_counters() -> None:
    before = {"asr": {"nv_inference_request_success": 10.0, "nv_inference_exec_count": 10.0,
                      "nv_inference_queue_duration_us": 1000.0, "nv_inference_compute_infer_duration_us": 5000.0}}
    after = {"asr": {"nv_inference_request_success": 50.0, "nv_inference_exec_count": 20.0,
                     "nv_inference_queue_duration_us": 81000.0, "nv_inference_compute_infer_duration_us": 105000.0},
             "nlu": {"nv_inference_request_success": 0.0, "nv_inference_exec_count": 0.0,
                     "nv_inference_queue_duration_us": 0.0, "nv_inference_compute_infer_duration_us": 0.0}}
    # 10 executions of 4 requests, 2.5 ms each: Triton counts each execution's 2.5 ms once per request (100 ms)
    assert triton_batching_between(before, after) == {
        "asr": {"requests": 40, "executions": 10, "requests_per_execution": 4.0, "queue_ms_mean": 2.0,
                "execution_ms_mean": 2.5}}
    assert triton_batching_between(None, after) is None
