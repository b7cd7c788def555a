"""One utterance runner (assistant/turn/runner.py) for the server and `bench turns`: a pause-corpus WAV run through
the server's session (the shared workers, over a real event loop) and through the benchmark's driver (timed
calls, in audio time) gives the same verdicts at the same pauses, the same turn ends, the same words acted on and
the same booking. The real recognizer (tiny.en), the real NLU model, real SQLite files."""

from __future__ import annotations

import asyncio
import json
import wave
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from assistant.audio.stream import VoiceStream
from assistant.bench.e2e.corpus import CORPUS_NOW, CORPUS_TZ
from assistant.bench.turn_driver import Timed, drive
from assistant.config import LimitsSettings, Settings
from assistant.events import ServerEvent, SpeechEnd, Start, Transcript, TurnEvent
from assistant.language.registry import DEFAULT
from assistant.nlu.parser import IntentSlotParser
from assistant.server.session import Session
from assistant.server.workers import Workers
from assistant.turn.models import turn_model
from assistant.turn.taker import TurnTaker
from assistant.wiring import build_recognizer, build_text_pipeline, stream_config

PAUSES = Path(__file__).resolve().parent / "data" / "pauses"
EVER = (datetime(2000, 1, 1, tzinfo=ZoneInfo("UTC")), datetime(2100, 1, 1, tzinfo=ZoneInfo("UTC")))


def _item(name: str) -> tuple[dict[str, object], bytes]:
    item = next(i for i in json.loads((PAUSES / "pauses.json").read_text()) if i["file"] == name)
    with wave.open(str(PAUSES / name), "rb") as wav:
        assert wav.getframerate() == 16_000
        return item, wav.readframes(wav.getnframes())


@pytest.mark.parametrize("name", ["p01.wav", "h03-joe.wav"])  # a tuned voice; two pauses, a voice never tuned on
def test_the_session_and_bench_turns_run_a_paused_request_alike(name: str, settings: Settings,
                                                                parser: IntentSlotParser, tmp_path: Path) -> None:
    item, pcm = _item(name)
    assert item["pauses_ms"], "a request with a pause inside: the read at the pause is what is compared"
    config = replace(stream_config(settings), partial_interval_ms=0)  # the benchmark decodes no partials
    recognizer = build_recognizer(settings)
    now = datetime.fromisoformat(CORPUS_NOW).replace(tzinfo=ZoneInfo(CORPUS_TZ))

    bench_pipeline = build_text_pipeline(settings, tmp_path / "bench.sqlite", parser=parser)
    taker = TurnTaker(VoiceStream(16_000, config=config), turn_model(settings.turn), settings.turn)
    timed = drive(taker, pcm, Timed(recognizer.transcribe), None, bench_pipeline, DEFAULT, now)

    served_pipeline = build_text_pipeline(settings, tmp_path / "served.sqlite", parser=parser)
    workers = Workers(recognizer, served_pipeline, turn=settings.turn)
    sent: list[ServerEvent] = []

    async def send(event: ServerEvent) -> None:
        sent.append(event)

    async def speak() -> None:
        start = Start(16_000, timezone=CORPUS_TZ, now=CORPUS_NOW)
        session = Session(start, workers, config, send, limits=LimitsSettings(audio_burst_s=600))
        for offset in range(0, len(pcm), 640):  # 20 ms messages, as a client sends them
            await session.audio(pcm[offset:offset + 640])
        await session.stop()
        session.close()

    try:
        asyncio.run(speak())
    finally:
        workers.close()

    verdicts = [(e.utterance, e.audio_ms, e.verdict) for e in sent if isinstance(e, TurnEvent)]
    assert verdicts, "the session read the pause and the turn model gave a verdict"
    assert verdicts == [(v.utterance, v.at_ms, v.verdict.kind) for v in timed.verdicts]
    assert [(e.utterance, e.audio_ms) for e in sent if isinstance(e, SpeechEnd) and not e.discarded] == \
        [(e.utterance, e.end_ms) for e in timed.ended]
    assert [e.text for e in sent if isinstance(e, Transcript)] == timed.heard
    booked = [(b.room, b.start, b.end) for b in bench_pipeline.store.bookings(*EVER)]
    assert booked == [(b.room, b.start, b.end) for b in served_pipeline.store.bookings(*EVER)]
    assert booked == [(item["room"], datetime.fromisoformat(str(item["start"])),
                       datetime.fromisoformat(str(item["end"])))]
