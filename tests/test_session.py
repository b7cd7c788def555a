"""A session's concurrency contract: model work runs in worker threads, never on the event loop."""

from __future__ import annotations

import asyncio
import time
import wave
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from assistant.config import Settings
from assistant.events import ServerEvent, Start, Transcript
from assistant.nlu.loader import build_text_pipeline
from assistant.server.batcher import BatchPolicy
from assistant.server.session import Engines, Session, Turn

DATA = Path(__file__).resolve().parent / "data"


class OneByOne:
    """A stand-in recognizer's batch call: its single decodes one after another, as a CPU does."""

    def transcribe(self, pcm16k: bytes) -> str:
        raise NotImplementedError

    def transcribe_batch(self, pcms: list[bytes]) -> list[str]:
        return [self.transcribe(pcm) for pcm in pcms]


class SlowRecognizer(OneByOne):
    """Stands in for faster-whisper (a collaborator here): a decode that holds its thread for a second."""

    model_name, device, compute_type = "slow", "cpu", "none"

    def transcribe(self, pcm16k: bytes) -> str:
        time.sleep(1.0)
        return ""


def test_the_event_loop_keeps_running_while_a_decode_runs() -> None:
    with wave.open(str(DATA / "book_everest_tomorrow_9.wav"), "rb") as wav:
        rate, pcm = wav.getframerate(), wav.readframes(wav.getnframes())

    async def scenario() -> tuple[int, list[ServerEvent]]:
        events: list[ServerEvent] = []

        async def send(event: ServerEvent) -> None:
            events.append(event)

        engines = Engines(SlowRecognizer(), pipeline=None, partial_interval_ms=0)  # type: ignore[arg-type]
        session = Session(Start(rate, timezone="Europe/Berlin"), engines, send)
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        tick_task = asyncio.create_task(ticker())
        await session.audio(pcm + b"\x00\x00" * rate)  # speech, then a second of silence
        await session.stop()  # waits for the one-second decode
        tick_task.cancel()
        engines.close()
        return ticks, events

    ticks, events = asyncio.run(scenario())
    assert any(isinstance(e, Transcript) for e in events)
    assert ticks >= 20  # had the decode run on the loop, the ticker could not have run during that second


class RecordingRecognizer(OneByOne):
    """Stands in for faster-whisper: notes how much audio each decode was given."""

    model_name, device, compute_type = "recording", "cpu", "none"

    def __init__(self) -> None:
        self.lengths: list[int] = []

    def transcribe(self, pcm16k: bytes) -> str:
        self.lengths.append(len(pcm16k))
        return ""


def test_partials_start_only_on_voiced_audio_never_in_the_final_pause() -> None:
    # A partial started in the pause that ends speech would hold the recognizer when the final decode needs it.
    with wave.open(str(DATA / "book_everest_tomorrow_9.wav"), "rb") as wav:
        rate, pcm = wav.getframerate(), wav.readframes(wav.getnframes())
    recognizer = RecordingRecognizer()

    async def scenario() -> None:
        async def send(event: ServerEvent) -> None:
            pass

        engines = Engines(recognizer, pipeline=None, partial_interval_ms=100)  # type: ignore[arg-type]
        session = Session(Start(rate, timezone="Europe/Berlin"), engines, send)
        audio = pcm + b"\x00\x00" * rate
        step = 2 * rate // 50  # 20 ms at the WAV's rate
        for offset in range(0, len(audio), step):
            await session.audio(audio[offset : offset + step])
            if session._tasks:  # audio comes faster than real time here: let each decode finish, as it would
                await asyncio.gather(*session._tasks)
        await session.stop()
        engines.close()

    asyncio.run(scenario())
    *partials, final = recognizer.lengths
    hangover_bytes = 2 * 16_000 * 300 // 1000
    assert len(partials) >= 5
    assert max(partials) <= final - hangover_bytes + 2 * 640, (partials, final)  # nothing started in the pause


class CpuSpeedRecognizer(OneByOne):
    """Stands in for faster-whisper on a CPU: every decode holds the recognizer for 150 ms."""

    model_name, device, compute_type = "cpu-speed", "cpu", "none"

    def transcribe(self, pcm16k: bytes) -> str:
        time.sleep(0.15)
        return ""


def _partials_while_another_speaks(budget_ms: int) -> tuple[float, float]:
    """Session A is mid-utterance; session B says a whole request. B's partial decodes and its partials shed
    because A was speaking."""
    with wave.open(str(DATA / "book_everest_tomorrow_9.wav"), "rb") as wav:
        rate, pcm = wav.getframerate(), wav.readframes(wav.getnframes())

    async def scenario() -> tuple[float, float]:
        async def send(event: ServerEvent) -> None:
            pass

        engines = Engines(CpuSpeedRecognizer(), pipeline=None,  # type: ignore[arg-type]
                          partial_interval_ms=200, partial_budget_ms=budget_ms)
        engines.decode_s = 0.15  # what earlier decodes measured
        a = Session(Start(rate, timezone="Europe/Berlin"), engines, send)
        b = Session(Start(rate, timezone="Europe/Berlin"), engines, send)
        registry = engines.metrics.registry

        def partials() -> float:
            return registry.get_sample_value("voice_compute_seconds_count", {"work": "asr_partial"}) or 0.0

        await a.audio(pcm[: len(pcm) // 2])
        await asyncio.gather(*a._tasks)  # A's own partials (B was not speaking then)
        assert a.endpointer.in_speech
        before = partials()
        step = 2 * rate // 50
        for offset in range(0, len(pcm), step):
            await b.audio(pcm[offset : offset + step])
            await asyncio.sleep(0)
        await b.stop()
        engines.close()
        shed = registry.get_sample_value("voice_partials_shed_total", {"reason": "others_speaking"}) or 0.0
        return partials() - before, shed

    return asyncio.run(scenario())


def test_slow_partials_give_way_while_another_session_speaks() -> None:
    decoded, shed = _partials_while_another_speaks(budget_ms=100)  # 150 ms decodes: over budget
    assert decoded == 0 and shed >= 3
    decoded, shed = _partials_while_another_speaks(budget_ms=1000)  # within budget: partials run
    assert decoded >= 1 and shed == 0


def test_utterances_from_many_sessions_are_understood_in_one_model_call(tmp_path: Path, settings: Settings
                                                                        ) -> None:
    """Five sessions' utterances waiting together go through the real parser in one backend call; each acts on
    its own conversation; a turn whose dialogue step fails gets its own error while the others are booked."""
    pipeline = build_text_pipeline(settings, tmp_path / "bookings.sqlite")
    calls: list[int] = []
    real_run = pipeline.parser.backend.run

    def counting_run(ids, mask):  # type: ignore[no-untyped-def]
        calls.append(len(ids))
        return real_run(ids, mask)

    pipeline.parser.backend.run = counting_run  # type: ignore[method-assign]
    real_turn = pipeline.dialogue.turn

    def turn(conversation: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        if conversation == "c-bad":
            raise RuntimeError("store went away")
        return real_turn(conversation, *args, **kwargs)

    pipeline.dialogue.turn = turn  # type: ignore[method-assign]
    now = datetime(2026, 12, 2, 10, 0, tzinfo=ZoneInfo("Europe/Berlin"))
    rooms = ["Everest", "Kilimanjaro", "Denali", "Everest"]

    async def scenario() -> list[object]:
        engines = Engines(RecordingRecognizer(), pipeline, partial_interval_ms=0,  # type: ignore[arg-type]
                          nlu_policy=BatchPolicy(max_batch=16, max_delay_us=200_000))
        turns = [Turn(f"book {room} tomorrow at {9 + i} for an hour", f"c{i}", now) for i, room in enumerate(rooms)]
        turns.append(Turn("book Everest tomorrow at 3 pm", "c-bad", now))
        results = await asyncio.gather(*(engines.understand(t) for t in turns), return_exceptions=True)
        engines.close()
        return results

    *booked, failed = asyncio.run(scenario())
    assert calls == [5]  # one backend call for all five texts
    assert [r["result"]["committed"] for r in booked] == [True] * 4  # type: ignore[index]
    assert [r["slots"][0]["text"] for r in booked] == rooms  # type: ignore[index]
    assert isinstance(failed, RuntimeError) and "store went away" in str(failed)
