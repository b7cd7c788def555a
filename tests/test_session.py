"""A session and the shared workers, over a real event loop: model work runs in worker threads, never on the loop;
the events of an utterance come in order with their latency; partials give way under load; many sessions'
utterances share one model call. The recognizer and NLU backend are fakes with scripted answers and costs
(tests/fakes.py); the text pipeline, store and batchers are real."""

from __future__ import annotations

import asyncio
import wave
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from assistant.audio.stream import StreamConfig
from assistant.batching import BatchPolicy
from assistant.config import LimitsSettings, Settings
from assistant.errors import ProtocolError
from assistant.events import (
    ErrorEvent,
    IntentEvent,
    Latency,
    Partial,
    Ready,
    ResultEvent,
    ServerEvent,
    SpeechEnd,
    SpeechStart,
    Start,
    Transcript,
)
from assistant.language.registry import AUTO, DEFAULT, get
from assistant.server.session import Session
from assistant.server.workers import LoadPolicy, Workers
from assistant.text_pipeline import Turn
from assistant.turn.policy import TurnSettings
from tests.fakes import FakeIdentifier, FakeNLUBackend, FakeRecognizer, break_dialogue, fake_pipeline

DATA = Path(__file__).resolve().parent / "data"
NOW = "2026-12-02T10:00:00"


def _wav(name: str = "book_everest_tomorrow_9.wav") -> tuple[int, bytes]:
    with wave.open(str(DATA / name), "rb") as wav:
        return wav.getframerate(), wav.readframes(wav.getnframes())


class Collect:
    def __init__(self) -> None:
        self.events: list[ServerEvent] = []

    async def __call__(self, event: ServerEvent) -> None:
        self.events.append(event)

    def kinds(self) -> list[str]:
        return [e.type for e in self.events]


async def _speak(session: Session, pcm: bytes, rate: int, *, real_time_steps: bool = False) -> None:
    """The request, then a second of silence, in 20 ms messages; optionally yielding after each one."""
    audio = pcm + b"\x00\x00" * rate
    step = 2 * rate // 50
    for offset in range(0, len(audio), step):
        await session.audio(audio[offset : offset + step])
        if real_time_steps:
            await asyncio.sleep(0)


def test_an_utterance_gives_its_events_in_order_and_its_latency(settings: Settings, tmp_path: Path) -> None:
    rate, pcm = _wav()
    backend = FakeNLUBackend("book_meeting")
    workers = Workers(FakeRecognizer("book everest"), fake_pipeline(settings, tmp_path / "b.sqlite", backend))
    sent = Collect()

    async def scenario() -> None:
        session = Session(Start(rate, timezone="Europe/Berlin", now=NOW), workers, StreamConfig(), sent)
        await sent(session.ready())
        await _speak(session, pcm, rate)
        await session.stop()
        session.close()

    asyncio.run(scenario())
    workers.close()
    assert [k for k in sent.kinds() if k != "partial"] == [
        "ready", "speech_start", "speech_end", "transcript", "intent", "result", "latency"]
    ready, start, end, transcript, intent, result, latency = (e for e in sent.events if not isinstance(e, Partial))
    assert isinstance(ready, Ready) and isinstance(start, SpeechStart) and isinstance(end, SpeechEnd)
    assert isinstance(transcript, Transcript) and transcript.text == "book everest"
    assert isinstance(intent, IntentEvent) and intent.intent == "book_meeting" and intent.confidence > 0.9
    assert isinstance(result, ResultEvent) and result.result["type"] == "clarify"  # no slot said: it asks
    assert isinstance(latency, Latency) and list(latency.stages_ms) == [
        "speech_end_decided", "transcript", "intent", "result"]
    stamps = list(latency.stages_ms.values())
    assert stamps == sorted(stamps) and stamps[0] >= 0
    assert backend.calls == [1]
    metrics = workers.metrics.registry
    assert metrics.get_sample_value("voice_stage_latency_seconds_count", {"stage": "result"}) == 1
    assert metrics.get_sample_value("voice_utterances_total", {"intent": "book_meeting"}) == 1
    assert workers.speakers == 0


def test_a_failing_turn_is_an_error_event_and_the_session_goes_on(settings: Settings, tmp_path: Path) -> None:
    rate, pcm = _wav()
    pipeline = fake_pipeline(settings, tmp_path / "b.sqlite")
    workers = Workers(FakeRecognizer("book everest"), pipeline)
    sent = Collect()
    first_turn = iter([True])
    break_dialogue(pipeline, lambda _conversation: next(first_turn, False))  # the first utterance's turn fails

    async def scenario() -> None:
        session = Session(Start(rate, timezone="Europe/Berlin", now=NOW), workers, StreamConfig(), sent)
        await _speak(session, pcm, rate)
        await _speak(session, pcm, rate)
        await session.stop()

    asyncio.run(scenario())
    workers.close()
    errors = [e for e in sent.events if isinstance(e, ErrorEvent)]
    # the client hears a code and plain words; what went wrong inside is for the log only
    assert [(e.code, e.message) for e in errors] == [
        ("internal", "utterance 1 could not be processed; please say it again")]
    assert [e.utterance for e in sent.events if isinstance(e, ResultEvent)] == [2]
    assert [e.utterance for e in sent.events if isinstance(e, Latency)] == [2]


def test_the_event_loop_keeps_running_while_a_decode_runs(settings: Settings, tmp_path: Path) -> None:
    rate, pcm = _wav()
    workers = Workers(FakeRecognizer("", seconds=1.0), fake_pipeline(settings, tmp_path / "b.sqlite"))
    sent = Collect()

    async def scenario() -> int:
        session = Session(Start(rate, timezone="Europe/Berlin"), workers, StreamConfig(partial_interval_ms=0), sent)
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
        return ticks

    ticks = asyncio.run(scenario())
    workers.close()
    assert "transcript" in sent.kinds()
    assert ticks >= 20  # had the decode run on the loop, the ticker could not have run during that second


def test_partials_start_only_on_voiced_audio_never_in_the_final_pause(settings: Settings, tmp_path: Path) -> None:
    # A partial started in the pause that ends speech would hold the recognizer when the final decode needs it.
    rate, pcm = _wav()
    recognizer = FakeRecognizer("book")
    workers = Workers(recognizer, fake_pipeline(settings, tmp_path / "b.sqlite"))

    async def scenario() -> None:
        session = Session(Start(rate, timezone="Europe/Berlin"), workers, StreamConfig(partial_interval_ms=100),
                          Collect())
        audio = pcm + b"\x00\x00" * rate
        step = 2 * rate // 50  # 20 ms at the WAV's rate
        for offset in range(0, len(audio), step):
            await session.audio(audio[offset : offset + step])
            if session.tasks.running:  # audio comes faster than real time here: let each decode finish, as it would
                await asyncio.gather(*session.tasks.running)
        await session.stop()

    asyncio.run(scenario())
    workers.close()
    *partials, final = recognizer.lengths
    hangover_bytes = 2 * 16_000 * 300 // 1000
    assert len(partials) >= 5
    assert max(partials) <= final - hangover_bytes + 2 * 640, (partials, final)  # nothing started in the pause


def _partials_while_another_speaks(settings: Settings, store: Path, budget_ms: int) -> tuple[float, float]:
    """Session A is mid-utterance; session B says a whole request. B's partial decodes and its partials shed
    because A was speaking."""
    rate, pcm = _wav()
    workers = Workers(FakeRecognizer("", seconds=0.15), fake_pipeline(settings, store),
                      LoadPolicy(partial_budget_ms=budget_ms), turn=TurnSettings(model="hangover"))
    workers.decode_s = 0.15  # what earlier decodes measured
    registry = workers.metrics.registry

    def partials() -> float:
        return registry.get_sample_value("voice_compute_seconds_count", {"work": "asr_partial"}) or 0.0

    async def scenario() -> float:
        stream = StreamConfig(partial_interval_ms=200)
        a = Session(Start(rate, timezone="Europe/Berlin"), workers, stream, Collect())
        b = Session(Start(rate, timezone="Europe/Berlin"), workers, stream, Collect())
        await a.audio(pcm[: len(pcm) // 2])
        await asyncio.gather(*a.tasks.running)  # A's own partials (B was not speaking then)
        assert a.stream.in_speech and workers.speakers == 1
        before = partials()
        await _speak(b, pcm, rate, real_time_steps=True)
        await b.stop()
        a.close()  # A's connection goes away mid-utterance: no longer a speaker
        assert workers.speakers == 0
        return partials() - before

    decoded = asyncio.run(scenario())
    workers.close()
    return decoded, registry.get_sample_value("voice_partials_shed_total", {"reason": "others_speaking"}) or 0.0


def test_slow_partials_give_way_to_reads_at_pauses(settings: Settings, tmp_path: Path) -> None:
    """Where decodes are slow and turns are read at pauses, a partial would hold the recognizer when the pause
    comes: partials are refused, the reads show the command forming."""
    workers = Workers(FakeRecognizer(""), fake_pipeline(settings, tmp_path / "a.sqlite"), LoadPolicy(),
                      turn=TurnSettings(model="reading"))
    assert workers.partial_refused() is None  # nothing measured yet
    workers.decode_s = 0.5
    assert workers.partial_refused() == "reads_first"
    workers.decode_s = 0.02  # a GPU's decodes: partials and reads both fit
    assert workers.partial_refused() is None
    workers.close()


def test_reads_at_pauses_start_only_on_an_idle_slow_recognizer(settings: Settings, tmp_path: Path) -> None:
    workers = Workers(FakeRecognizer(""), fake_pipeline(settings, tmp_path / "a.sqlite"), LoadPolicy())
    workers.decode_s = 1.0  # a 2-core CPU's tiny.en decode
    assert workers.read_refused("me") is None  # idle: read
    workers.in_flight["asr"] = 1
    workers.decode_s = 0.02  # a GPU's: a read joins the batchers at its priority
    assert workers.read_refused("me") is None
    workers.in_flight["asr"] = 0
    workers.close()


async def _read_refusals_while_decoding(workers: Workers, owners: list[str]) -> tuple[str | None, str | None]:
    """Why a read by "me" and by "you" is refused while `owners` each have a decode running or queued."""
    decodes = [asyncio.create_task(workers.transcribe(b"\0" * 320, final=True, owner=owner)) for owner in owners]
    await asyncio.sleep(0.05)  # submitted, the first one running
    refused = workers.read_refused("me"), workers.read_refused("you")
    await asyncio.gather(*decodes)
    return refused


def test_a_read_waits_for_one_other_clients_decode_but_never_behind_its_own(settings: Settings,
                                                                          tmp_path: Path) -> None:
    """On a slow recognizer a read starts only when it would wait for one decode at most: none of its own client's
    in the recognizer (the plain hangover is sooner than waiting behind them), and one other client's at most
    (clients take turns, so a flooding client costs the others one call, not their reads)."""
    workers = Workers(FakeRecognizer("", seconds=0.3), fake_pipeline(settings, tmp_path / "a.sqlite"), LoadPolicy())
    workers.decode_s = 1.0  # a 2-core CPU's tiny.en decode
    assert asyncio.run(_read_refusals_while_decoding(workers, ["flood", "flood", "flood"])) == (None, None)
    assert asyncio.run(_read_refusals_while_decoding(workers, ["me", "flood"])) == ("busy", "busy")
    assert asyncio.run(_read_refusals_while_decoding(workers, ["flood", "crowd"])) == ("busy", "busy")
    assert asyncio.run(_read_refusals_while_decoding(workers, ["me"])) == ("busy", None)
    workers.close()


def test_slow_partials_give_way_while_another_session_speaks(settings: Settings, tmp_path: Path) -> None:
    decoded, shed = _partials_while_another_speaks(settings, tmp_path / "a.sqlite", budget_ms=100)  # over budget
    assert decoded == 0 and shed >= 3
    decoded, shed = _partials_while_another_speaks(settings, tmp_path / "b.sqlite", budget_ms=1000)  # within it
    assert decoded >= 1 and shed == 0


def test_utterances_from_many_sessions_are_understood_in_one_model_call(settings: Settings, tmp_path: Path
                                                                        ) -> None:
    """Five sessions' utterances waiting together go through the real parser and the real model in one backend
    call; each acts on its own conversation; a turn whose dialogue step fails gets its own failure while the
    others are booked."""
    from assistant.wiring import build_text_pipeline

    pipeline = build_text_pipeline(settings, tmp_path / "bookings.sqlite")
    calls: list[int] = []
    real_run = pipeline.parser.backend.run

    def counting_run(ids, mask):  # type: ignore[no-untyped-def]
        calls.append(len(ids))
        return real_run(ids, mask)

    pipeline.parser.backend.run = counting_run  # type: ignore[method-assign]
    break_dialogue(pipeline, lambda conversation: conversation == "c-bad")
    now = datetime(2026, 12, 2, 10, 0, tzinfo=ZoneInfo("Europe/Berlin"))
    rooms = ["Everest", "Kilimanjaro", "Denali", "Everest"]
    workers = Workers(FakeRecognizer(), pipeline, LoadPolicy(nlu=BatchPolicy(max_batch=16, max_delay_us=200_000)))

    async def scenario() -> list[object]:
        turns = [Turn(f"book {room} tomorrow at {9 + i} for an hour", f"c{i}", now) for i, room in enumerate(rooms)]
        turns.append(Turn("book Everest tomorrow at 3 pm", "c-bad", now))
        return list(await asyncio.gather(*(workers.act(t) for t in turns)))

    *booked, failed = asyncio.run(scenario())
    workers.close()
    assert calls == [5]  # one backend call for all five texts
    assert [o.result.committed for o in booked] == [True] * 4  # type: ignore[attr-defined]
    assert [o.slots[0].text for o in booked] == rooms  # type: ignore[attr-defined]
    assert failed.result is None and "store went away" in str(failed.failure)  # type: ignore[attr-defined]


def test_utterances_past_the_sessions_queue_bound_are_refused_with_overloaded(settings: Settings,
                                                                              tmp_path: Path) -> None:
    """Five requests arriving at once, a slow recognizer, room for two: two are served, three refused clearly."""
    rate, pcm = _wav()
    workers = Workers(FakeRecognizer("book everest tomorrow at 9", seconds=0.3),
                      fake_pipeline(settings, tmp_path / "b.sqlite"))
    sent = Collect()

    async def scenario() -> None:
        session = Session(Start(rate, timezone="Europe/Berlin", now=NOW), workers, StreamConfig(), sent,
                          limits=LimitsSettings(max_queued_utterances=2))
        for _ in range(5):
            await _speak(session, pcm, rate)
        await session.stop()

    asyncio.run(scenario())
    workers.close()
    refused = [e for e in sent.events if isinstance(e, ErrorEvent)]
    assert [e.code for e in refused] == ["overloaded"] * 3
    assert all("send audio in real time" in e.message for e in refused)
    assert len([e for e in sent.events if isinstance(e, Transcript)]) == 2


def test_closing_a_session_cancels_its_queued_decodes(settings: Settings, tmp_path: Path) -> None:
    rate, pcm = _wav()
    recognizer = FakeRecognizer("book everest tomorrow at 9", seconds=0.3)
    workers = Workers(recognizer, fake_pipeline(settings, tmp_path / "b.sqlite"))

    async def scenario() -> None:
        session = Session(Start(rate, timezone="Europe/Berlin", now=NOW), workers, StreamConfig(), Collect())
        for _ in range(3):  # three utterances queued; the first one's decode starts at once
            await _speak(session, pcm, rate)
        await asyncio.sleep(0.05)
        session.close()  # the client vanished
        await asyncio.sleep(1.0)  # long enough for two more decodes, had they stayed queued

    asyncio.run(scenario())
    workers.close()
    assert len(recognizer.lengths) == 1  # only the decode already running finished


def test_a_call_is_retried_while_the_model_server_is_away_and_the_client_told_once(settings: Settings,
                                                                                   tmp_path: Path) -> None:
    from assistant.errors import ModelServerUnavailable

    workers = Workers(FakeRecognizer(""), fake_pipeline(settings, tmp_path / "b.sqlite"), LoadPolicy(retry_s=5.0))
    attempts, told = [], []

    async def call() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise ModelServerUnavailable("down")
        return "back"

    async def waiting(left: float) -> None:
        told.append(left)

    async def gives_up() -> None:
        quick = Workers(FakeRecognizer(""), workers.pipeline, LoadPolicy(retry_s=0.3))
        try:
            async def never() -> str:
                raise ModelServerUnavailable("down")
            await quick.retrying(never, waiting)
        finally:
            quick.close()

    try:
        assert asyncio.run(workers.retrying(call, waiting)) == "back"
        assert len(attempts) == 3 and len(told) == 1 and 0 < told[0] <= 5.0
        with pytest.raises(ModelServerUnavailable):
            asyncio.run(gives_up())
    finally:
        workers.close()


def test_an_auto_session_is_heard_in_the_language_identified_in_each_utterance(settings: Settings,
                                                                               tmp_path: Path) -> None:
    """"language": "auto": the multilingual recognizer tells each utterance's language; Chinese is heard by it in
    the same call, English then by the English recognizer; each transcript says which. Workers that hear one
    language, or have no identifier, refuse "auto"."""
    rate, pcm = _wav()
    english = FakeRecognizer("book everest")
    chinese = FakeIdentifier("zh", "帮我订珠峰", spoken="zh")
    pipeline = fake_pipeline(settings, tmp_path / "b.sqlite", FakeNLUBackend("book_meeting"))
    workers = Workers(english, pipeline, others={get("zh"): chinese}, identifier=chinese)
    sent = Collect()

    async def scenario() -> None:
        session = Session(Start(rate, timezone="Asia/Shanghai", now=NOW, language="auto"), workers, StreamConfig(),
                          sent)
        await sent(session.ready())
        await _speak(session, pcm, rate)  # identified as Chinese
        async with asyncio.timeout(10):
            while not any(isinstance(e, Transcript) for e in sent.events):
                await asyncio.sleep(0.01)
        chinese.spoken = "en"
        await _speak(session, pcm, rate)  # then as English
        await session.stop()
        session.close()

    try:
        asyncio.run(scenario())
    finally:
        workers.close()
    ready = sent.events[0]
    transcripts = [(e.text, e.language) for e in sent.events if isinstance(e, Transcript)]
    assert isinstance(ready, Ready) and ready.language == "auto"
    assert transcripts == [("帮我订珠峰", "zh"), ("book everest", "en")]
    assert chinese.identified[0] == "zh" and "en" in chinese.identified
    assert english.lengths  # the English utterance was decoded by the English recognizer
    assert workers.hears(AUTO) and [each.code for each in workers.languages] == ["en", "zh"]
    for unable in (Workers(FakeRecognizer(), pipeline),  # one language
                   # two, and none to tell them apart
                   Workers(FakeRecognizer(), pipeline, others={get("zh"): FakeRecognizer()})):
        with pytest.raises(ProtocolError) as refused:
            Session(Start(rate, language="auto"), unable, StreamConfig(), sent)
        assert refused.value.code == "language_unavailable"
        unable.close()


def test_a_session_is_heard_by_the_recognizer_of_its_language(settings: Settings, tmp_path: Path) -> None:
    """"language": "zh" in start: its speech goes to the Chinese recognizer (its own batcher), its events say so;
    a language the workers do not hear is refused with its code before anything is counted."""
    rate, pcm = _wav()
    english, chinese = FakeRecognizer("book everest"), FakeRecognizer("帮我订珠峰")
    backend = FakeNLUBackend("book_meeting")
    workers = Workers(english, fake_pipeline(settings, tmp_path / "b.sqlite", backend), others={get("zh"): chinese})
    alone = Workers(FakeRecognizer(), fake_pipeline(settings, tmp_path / "c.sqlite"))
    sent = Collect()

    async def scenario() -> None:
        session = Session(Start(rate, timezone="Asia/Shanghai", now=NOW, language="zh"), workers, StreamConfig(), sent)
        await sent(session.ready())
        await _speak(session, pcm, rate)
        await session.stop()
        session.close()

    asyncio.run(scenario())
    workers.close()
    ready = sent.events[0]
    transcript = next(e for e in sent.events if isinstance(e, Transcript))
    assert isinstance(ready, Ready) and ready.language == "zh"
    assert (transcript.text, transcript.language) == ("帮我订珠峰", "zh")
    assert chinese.lengths and not english.lengths
    assert [each.code for each in workers.languages] == ["en", "zh"] and alone.languages == (DEFAULT,)
    with pytest.raises(ProtocolError) as refused:
        Session(Start(rate, language="zh"), alone, StreamConfig(), sent)
    assert refused.value.code == "language_unavailable"
    alone.close()
