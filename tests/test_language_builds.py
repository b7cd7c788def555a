"""Serve first, build the rest behind: a server whose cache has no Chinese model serves English at once, tells a
Chinese (or "auto") session that Chinese is still being built and how far along, and serves Chinese once built.

The server, its models and the websocket sessions are real (in this process, on loopback). The one stand-in is
the collaborator that builds the missing model: training it takes ten minutes, so `build_missing` here reports
progress, waits for the test to let it finish, then puts the already trained model (the session's cache) where
the training would have written it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assistant.clients.send import read_wav, stream_audio
from assistant.config import Settings, load_settings
from assistant.language.profile import Language
from assistant.nlu.model_folder import NLUModel
from assistant.server.access import Access
from assistant.server.app import ServerOptions, serve_forever
from assistant.server.spawn import free_ports
from assistant.wiring import VoiceServer, build_voice_server

DATA = Path(__file__).resolve().parent / "data"
NOW, TZ = "2026-12-02T10:00:00", "Asia/Shanghai"


def _cache_without_chinese(real: Path, english: NLUModel, tmp: Path) -> Path:
    """A cache that holds what the real one does (speech models, encoders, the English model), but no Chinese
    model (and the settings name an empty folder for the shipped ones)."""
    cache = tmp / "cache"
    (cache / "nlu").mkdir(parents=True)
    for entry in real.iterdir():
        if entry.name != "nlu":
            (cache / entry.name).symlink_to(entry)
    for entry in english.folder.parent.glob(f"{english.folder.name}*"):
        (cache / "nlu" / entry.name).symlink_to(entry)
    return cache


class HeldBuild:
    """Stands in for training: says it is half way, then waits to be let go, then puts the trained model in."""

    def __init__(self, trained: NLUModel, cache: Path) -> None:
        self.trained, self.cache = trained, cache
        self.go = threading.Event()
        self.started = threading.Event()

    def __call__(self, language: Language, progress: Any) -> None:
        assert language.code == "zh"
        progress("training", 0.5)
        self.started.set()
        assert self.go.wait(300), "the test never let the build finish"
        for entry in self.trained.folder.parent.glob(f"{self.trained.folder.name}*"):
            (self.cache / "nlu" / entry.name).symlink_to(entry)


class _Serving:
    """serve_forever on a loop of its own, in a thread, until stopped."""

    def __init__(self, server: VoiceServer, settings: Settings, port: int) -> None:
        options = ServerOptions("127.0.0.1", port, settings.limits,
                                Access.configure(settings.access, "127.0.0.1", {}))
        self.loop = asyncio.new_event_loop()
        self.task = self.loop.create_task(serve_forever(server.workers, server.stream, options))
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            self.loop.run_until_complete(self.task)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.task.cancel)
        self.thread.join(30)


@pytest.fixture()
def building(tmp_path: Path, settings: Settings, meeting_model: NLUModel, chinese_model: NLUModel
             ) -> Iterator[tuple[str, HeldBuild, VoiceServer]]:
    cache = _cache_without_chinese(settings.cache_dir, meeting_model, tmp_path)
    tmp_settings = load_settings(None, os.environ, [f"paths.cache_dir={json.dumps(str(cache))}",
                                                    f"paths.models={json.dumps(str(tmp_path / 'none'))}"])
    held = HeldBuild(chinese_model, cache)
    server = build_voice_server(tmp_settings, tmp_path / "bookings.sqlite", build_missing=held)
    port = free_ports(1)[0]
    serving = _Serving(server, tmp_settings, port)
    url = f"ws://127.0.0.1:{port}"
    assert held.started.wait(60)
    _wait_until(lambda: _get(url, "/healthz") != "", 30)
    yield url, held, server
    held.go.set()
    server.workers.builds.join(120)
    serving.stop()
    server.workers.close()


def _get(url: str, path: str) -> str:
    try:
        with urllib.request.urlopen(url.replace("ws://", "http://") + path, timeout=10) as response:
            return str(response.read().decode())
    except OSError:
        return ""


def _wait_until(condition: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def _session(url: str, wav: Path, language: str | None) -> list[dict[str, Any]]:
    pcm, rate, channels = read_wav(wav)
    events: list[dict[str, Any]] = []
    asyncio.run(asyncio.wait_for(stream_audio(url, pcm, rate, channels,
                                              lambda r: events.append(json.loads(r.to_line())),
                                              now=NOW, tz=TZ, fast=True, language=language), 120))
    return events


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def test_english_is_served_while_chinese_is_built_and_chinese_sessions_are_told_how_far(
        building: tuple[str, HeldBuild, VoiceServer]) -> None:
    url, held, _ = building
    english = _session(url, DATA / "book_everest_tomorrow_9.wav", None)
    command = _of(english, "result")[0]["result"]["command"]
    assert (command["action"], command["room"]) == ("book_meeting", "everest")

    for language in ("zh", "auto"):
        refused = _session(url, DATA / "corpus_zh" / "z01.wav", language)
        errors = _of(refused, "error")
        assert [e["code"] for e in errors] == ["language_unavailable"], refused
        assert errors[0]["message"] == ("Chinese is still being built (training, 50% done). English is served "
                                        "meanwhile; try again later")
        assert not _of(refused, "result")

    health = _get(url, "/healthz")
    assert health.startswith("ok\n") and "zh: Chinese is still being built (training, 50% done)" in health
    metrics = _get(url, "/metrics")
    assert 'voice_language_ready{language="zh"} 0.0' in metrics
    assert 'voice_language_build_fraction{language="zh",state="building"} 0.5' in metrics
    assert held.started.is_set() and not held.go.is_set()


def test_chinese_is_served_once_built(building: tuple[str, HeldBuild, VoiceServer]) -> None:
    url, held, server = building
    held.go.set()
    server.workers.builds.join(180)
    assert _get(url, "/healthz") == "ok\n"
    assert 'voice_language_ready{language="zh"} 1.0' in _get(url, "/metrics")

    events = _session(url, DATA / "corpus_zh" / "z01.wav", "zh")  # the founding example
    assert not _of(events, "error"), events
    result = _of(events, "result")[-1]["result"]
    assert "command" in result, (_of(events, "transcript"), result)
    command = result["command"]
    assert (command["action"], command["room"], command["start"]) == (
        "book_meeting", "fuji", "2026-12-03T09:00:00+08:00")
    models = _get(url, "/metrics")
    assert 'zh_nlu_backend="onnxruntime"' in models and 'zh_nlu_precision="int8"' in models


def test_a_build_that_fails_is_reported_without_its_internals_and_english_goes_on(
        tmp_path: Path, settings: Settings, meeting_model: NLUModel) -> None:
    cache = _cache_without_chinese(settings.cache_dir, meeting_model, tmp_path)
    tmp_settings = load_settings(None, os.environ, [f"paths.cache_dir={json.dumps(str(cache))}",
                                                    f"paths.models={json.dumps(str(tmp_path / 'none'))}"])

    def broken(language: Language, progress: Any) -> None:
        progress("training", 0.25)
        raise RuntimeError(f"building the model failed (exit 1); see {cache}/nlu/zh-build.log")

    server = build_voice_server(tmp_settings, tmp_path / "bookings.sqlite", build_missing=broken)
    server.workers.builds.join(60)
    port = free_ports(1)[0]
    serving = _Serving(server, tmp_settings, port)
    url = f"ws://127.0.0.1:{port}"
    try:
        _wait_until(lambda: _get(url, "/healthz") != "", 30)
        assert _get(url, "/healthz") == "ok\nzh: Chinese could not be made ready (the server's log says why)\n"
        refused = _session(url, DATA / "corpus_zh" / "z01.wav", "zh")
        message = _of(refused, "error")[0]["message"]
        assert message.startswith("Chinese could not be made ready") and str(cache) not in message
        english = _session(url, DATA / "book_everest_tomorrow_9.wav", None)
        assert _of(english, "result")[0]["result"]["command"]["room"] == "everest"
    finally:
        serving.stop()
        server.workers.close()
