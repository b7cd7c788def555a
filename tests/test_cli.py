"""`assistant parse` as people run it: a real process, JSON lines out, clear errors, never a traceback."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.nlu.model_folder import NLUModel

pytestmark = pytest.mark.usefixtures("meeting_model")  # built once; the CLI then finds it in the cache


def run_cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "assistant", *args], input=stdin, capture_output=True,
                          timeout=300, check=False)


def json_lines(proc: subprocess.CompletedProcess[bytes]) -> list[dict[str, object]]:
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"Traceback" not in proc.stderr
    return [json.loads(line) for line in proc.stdout.decode().splitlines()]


def test_the_readme_request() -> None:
    (out,) = json_lines(run_cli("parse", "book everest tomorrow at 9 for an hour"))
    assert out["intent"] == "book_meeting"
    assert {s["name"]: s["text"] for s in out["slots"]} == {  # type: ignore[union-attr]
        "room": "everest", "date": "tomorrow", "start_time": "9", "duration": "an hour"}
    assert set(out) >= {"text", "intent", "confidence", "slots"}


def test_file_gives_one_object_per_line_in_order(tmp_path: Path) -> None:
    lines = ["book everest tomorrow at 9", "", "cancel the standup on friday", "play some jazz"] * 50
    path = tmp_path / "requests.txt"
    path.write_text("\n".join(lines) + "\n")
    out = json_lines(run_cli("parse", "--file", str(path)))
    assert len(out) == len(lines)
    assert [o.get("intent") for o in out[:4]] == ["book_meeting", None, "cancel_meeting", "out_of_scope"]
    assert out[1]["error"] == {"code": "empty_text", "message": "there is nothing to understand: the text is empty"}


def test_stdin_dash() -> None:
    out = json_lines(run_cli("parse", "--file", "-", stdin=b"reserve fuji at noon\nwhat's on my calendar today\n"))
    assert [o["intent"] for o in out] == ["book_meeting", "list_bookings"]


@pytest.mark.parametrize("text", [
    "😀😀😀 🎉",
    "会議室を予約してください",  # Japanese: CJK script, so the Chinese model reads it, and calls it no request
    "Ich möchte bitte einen Tisch für zwei Personen",
    "asdf qwer zxcv uiop",
    "%$#@!^&*()",
])
def test_junk_is_out_of_scope(text: str) -> None:
    (out,) = json_lines(run_cli("parse", text))
    assert out["intent"] == "out_of_scope"
    assert out["slots"] == []


def test_bad_input_gets_a_clear_result_per_line(tmp_path: Path) -> None:
    path = tmp_path / "junk.bin"
    path.write_bytes(b"   \t  \n" + b"x" * 10_000 + b"\n" + b"\x00\xff\xfe\x80\x81 binary\x07\n" + b"word " * 200
                     + b"\nbook denali at 3\n")
    out = json_lines(run_cli("parse", "--file", str(path)))
    assert len(out) == 5
    assert out[0]["error"]["code"] == "empty_text"  # type: ignore[index]
    assert out[1]["error"]["code"] == "text_too_long"  # type: ignore[index]
    assert out[2].get("intent") == "out_of_scope"
    assert out[3]["error"]["code"] == "text_too_long"  # type: ignore[index]
    assert out[4]["intent"] == "book_meeting"


@pytest.mark.parametrize(("args", "message"), [
    (["parse", "--tz", "Mars/Olympus", "hi"], "not an IANA time zone"),
    (["parse", "--tz", "Europe", "hi"], "not an IANA time zone"),  # a folder of zones: no IsADirectoryError
    (["parse", "--now", "yesterday-ish", "hi"], "not an ISO 8601"),
    (["parse", "--now", "9999-12-31T10:00", "hi"], "out of range"),
    (["parse"], "give either TEXT or --file"),
    (["parse", "--file", "/nonexistent/file.txt"], "no such file"),
    (["parse", "--backend", "warp-drive", "hi"], "unknown backend"),
    (["build-engine", "--profile", "batch=1:8"], "expected batch=MIN:OPT:MAX"),
    (["build-engine", "--profile", "width=1:2:3"], "the axis is batch or seq"),
    (["build-engine", "--profile", "batch=8:1:64"], "min <= opt <= max"),
    (["build-onnx", "--precision", "fp16,fp8"], "precision must be one of fp32, fp16, int8"),
    (["bench", "e2e", "--clients", "4,0"], "--clients '4,0': give positive whole numbers"),
    (["bench", "nlu", "--batch-sizes", "1,many"], "--batch-sizes '1,many': give positive whole numbers"),
])
def test_usage_errors_are_one_clear_line(args: list[str], message: str) -> None:
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert message in proc.stderr.decode()
    assert b"Traceback" not in proc.stderr


def test_now_and_tz_are_accepted(meeting_model: NLUModel) -> None:
    (out,) = json_lines(run_cli("parse", "--now", "2026-12-02T09:00:00+01:00", "--tz", "Europe/Berlin",
                                "book fuji tomorrow at ten"))
    assert out["intent"] == "book_meeting"


@pytest.mark.skipif(importlib.util.find_spec("tensorrt") is not None, reason="TensorRT is installed here")
def test_build_engine_without_tensorrt_says_where_to_get_it() -> None:
    proc = run_cli("build-engine", "--precision", "fp16")
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr
    assert "building an engine needs tensorrt" in proc.stderr.decode()


def test_serve_refuses_an_unknown_event_loop_before_loading_anything(tmp_path: Path) -> None:
    config = tmp_path / "serve.toml"
    config.write_text('[serving]\nevent_loop = "trio"\n')
    proc = run_cli("serve", "--config", str(config), "--port", "0")
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr
    assert "[serving].event_loop: event loop must be one of auto, uvloop, asyncio" in proc.stderr.decode()
