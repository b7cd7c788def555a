"""One connection's state: decoder, VAD, endpointer, utterance counter. Engines are shared, sessions are not.

The event loop only moves bytes and events; decoding speech and understanding it run in the engines' worker
threads (one each), so a long decode never stalls other connections.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, Protocol, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from assistant.audio.endpointer import Endpointer, EndpointerConfig, SpeechDropped, SpeechEnded, SpeechStarted
from assistant.audio.pcm import TARGET_RATE, PcmDecoder
from assistant.audio.vad import WebRtcVad
from assistant.events import (
    ErrorEvent,
    IntentEvent,
    Latency,
    Partial,
    ProtocolError,
    Ready,
    ResultEvent,
    ServerEvent,
    SpeechEnd,
    SpeechStart,
    Start,
    Transcript,
)
from assistant.server.batcher import BatchPolicy, DynamicBatcher, ItemFailed
from assistant.server.metrics import ServerMetrics
from assistant.text_pipeline import TextPipeline

__all__ = ["Engines", "Recognizer", "Session", "Turn"]

Send = Callable[[ServerEvent], Awaitable[None]]
T = TypeVar("T")


@dataclass(frozen=True)
class Turn:
    """One understood-and-acted-on utterance for the NLU worker."""

    text: str
    conversation: str
    now: datetime


class Recognizer(Protocol):
    model_name: str
    device: str
    compute_type: str

    def transcribe_batch(self, pcms: list[bytes]) -> list[str]: ...


FINAL, PARTIAL = 0, 1  # ASR priorities: a batch holds one kind, finals first


@dataclass
class Engines:
    """Shared by every session: models load once; each model has one worker thread behind a dynamic batcher
    (on a GPU each also has its own CUDA stream, so speech recognition and understanding overlap)."""

    recognizer: Recognizer
    pipeline: TextPipeline
    endpointer: EndpointerConfig = field(default_factory=EndpointerConfig)
    vad_aggressiveness: int = 2
    partial_interval_ms: int = 600  # re-decode the growing utterance this often while speech goes on; 0: never
    # While others speak, a partial may start only if decodes take at most this long: a partial holds the one
    # recognizer, and a final due when another speaker stops would wait behind it (GPU decodes fit, CPU ones not).
    partial_budget_ms: int = 100
    asr_policy: BatchPolicy = field(default_factory=lambda: BatchPolicy(max_batch=1))
    nlu_policy: BatchPolicy = field(default_factory=lambda: BatchPolicy(max_batch=64))

    metrics: ServerMetrics = field(default_factory=ServerMetrics)

    # calls queued or running per worker ("asr", "nlu", and "asr_final", the finals among the asr ones)
    in_flight: dict[str, int] = field(default_factory=lambda: {"asr": 0, "nlu": 0, "asr_final": 0})
    decode_s: float = 0.0  # a moving average of recent decode times
    sessions: set[Session] = field(default_factory=set)  # open sessions, to see who is speaking

    def __post_init__(self) -> None:
        backend = self.pipeline.parser.backend.info() if self.pipeline is not None else None
        self.metrics.models.info({
            "asr_model": self.recognizer.model_name,
            "asr_device": f"{self.recognizer.device} {self.recognizer.compute_type}",
            "nlu_backend": backend.name if backend else "none",
            "nlu_precision": backend.precision if backend else "none",
            "nlu_device": backend.device if backend else "none",
            "asr_max_batch": str(self.asr_policy.max_batch),
            "nlu_max_batch": str(self.nlu_policy.max_batch),
        })
        self.asr: DynamicBatcher[bytes, str] = DynamicBatcher(
            "asr", self.recognizer.transcribe_batch, self.asr_policy,
            lambda priority, size, took: self._batch_done("asr_final" if priority == FINAL else "asr_partial",
                                                          size, took))
        self.nlu: DynamicBatcher[Turn | Callable[[], Any], Any] = DynamicBatcher(
            "nlu", self._nlu_batch, self.nlu_policy, lambda _, size, took: self._batch_done("nlu", size, took))

    async def run_asr(self, audio: bytes, work: str) -> str:
        """One decode, batched with others of its kind; `work` is asr_final or asr_partial."""
        final = work == "asr_final"
        self.in_flight["asr_final"] += final
        try:
            result: str = await self._run("asr", self.asr(audio, FINAL if final else PARTIAL))
        finally:
            self.in_flight["asr_final"] -= final
        return result

    async def understand(self, turn: Turn) -> dict[str, Any]:
        """Understand and act on one utterance: batched with other sessions' utterances in one model call."""
        result: dict[str, Any] = await self._run("nlu", self.nlu(turn))
        return result

    async def run_nlu(self, call: Callable[[], T]) -> T:
        """Other work for the NLU worker, which owns the booking store (one thread touches SQLite)."""
        result: T = await self._run("nlu", self.nlu(call))
        return result

    async def _run(self, worker: str, call: Awaitable[Any]) -> Any:
        self.in_flight[worker] += 1
        self.metrics.queue_depth.labels(worker).set(self.in_flight[worker])
        try:
            return await call
        finally:
            self.in_flight[worker] -= 1
            self.metrics.queue_depth.labels(worker).set(self.in_flight[worker])

    def _nlu_batch(self, items: list[Turn | Callable[[], Any]]) -> list[Any]:
        """Every turn of the batch in one model call, then the other work; a failure stays with its item."""
        out: dict[int, Any] = {}
        turns = [(i, item) for i, item in enumerate(items) if isinstance(item, Turn)]
        if turns:
            understood = self.pipeline.parser.parse_many([t.text for _, t in turns])  # one model call
            for (i, t), parsed in zip(turns, understood, strict=True):
                out[i] = self._one(partial(self.pipeline.act, parsed, t.conversation, t.now, commit=True))
        for i, item in enumerate(items):
            if not isinstance(item, Turn):
                out[i] = self._one(item)
        return [out[i] for i in range(len(items))]

    @staticmethod
    def _one(call: Callable[[], Any]) -> Any:
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - handed to this item's waiter, not the batch
            return ItemFailed(exc)

    def _batch_done(self, work: str, size: int, took: float) -> None:
        # per item, so that the compute counters still add up to the worker's busy time
        for _ in range(size):
            self.metrics.compute.labels(work).observe(took / size)
        self.metrics.batch_size.labels(work).observe(size)
        if work.startswith("asr"):
            self.decode_s = took if not self.decode_s else 0.8 * self.decode_s + 0.2 * took

    def partial_refused(self, session: Session) -> str | None:
        """Why a partial decode for `session` must not start now, or None: partials are shed first under load.
        On a CPU (batches of one) any decode in flight refuses it; on a GPU a partial may join others while no
        final is due, since a batch of partials costs about what one does."""
        if self.in_flight["asr_final"] or self.in_flight["asr"] >= self.asr_policy.max_batch:
            return "busy"  # a final is waiting or running (it goes first), or the recognizer is full
        if self.decode_s * 1e3 > self.partial_budget_ms and any(
                other.endpointer.in_speech for other in self.sessions if other is not session):
            return "others_speaking"
        return None

    def close(self) -> None:
        self.asr.close()
        self.nlu.close()


class Session:
    def __init__(self, start: Start, engines: Engines, send: Send) -> None:
        try:
            self.zone = ZoneInfo(start.timezone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ProtocolError("bad_start", f"timezone {start.timezone!r} is not an IANA zone") from exc
        self.now = self._reference(start.now)
        self.decoder = PcmDecoder(start.sample_rate, start.channels, start.format)
        self.vad = WebRtcVad(engines.vad_aggressiveness, TARGET_RATE, engines.endpointer.frame_ms)
        self.endpointer = Endpointer(engines.endpointer)
        self.engines = engines
        self.send = send
        self.id = uuid.uuid4().hex[:12]
        self.conversation = start.conversation_id or f"ws-{self.id}"
        self.utterance = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._next_partial_ms = 0
        self._audio_ms = 0
        self._arrivals: deque[tuple[int, float]] = deque(maxlen=500)  # (audio ms, monotonic arrival), 10 s
        engines.sessions.add(self)

    def close(self) -> None:
        """The connection is gone (or started over): stop counting this session as a speaker."""
        self.engines.sessions.discard(self)

    def _reference(self, now: str | None) -> datetime | None:
        if now is None:
            return None
        try:
            moment = datetime.fromisoformat(now)
        except ValueError as exc:
            raise ProtocolError("bad_start", f"now {now!r} is not ISO 8601") from exc
        return moment.replace(tzinfo=self.zone) if moment.tzinfo is None else moment.astimezone(self.zone)

    def ready(self) -> Ready:
        return Ready(self.id, TARGET_RATE)

    async def audio(self, pcm: bytes) -> None:
        await self._frames(self.decoder.feed(pcm))

    async def stop(self) -> None:
        """The client's audio ended: finish the open utterance and wait for every result."""
        await self._frames(self.decoder.flush())
        for event in self.endpointer.flush():
            await self._endpoint(event)
        if self._tasks:
            await asyncio.gather(*self._tasks)

    async def _frames(self, frames: list[bytes]) -> None:
        arrived = time.monotonic()
        self.engines.metrics.audio.inc(len(frames) * self.engines.endpointer.frame_ms / 1000)
        for frame in frames:  # webrtcvad on a 20 ms frame takes microseconds: fine on the loop
            self._audio_ms += self.engines.endpointer.frame_ms
            self._arrivals.append((self._audio_ms, arrived))
            for event in self.endpointer.push(frame, self.vad.is_voiced(frame)):
                await self._endpoint(event)
            self._maybe_partial()

    def _maybe_partial(self) -> None:
        """While speech goes on, re-decode the utterance so far, but only when the recognizer is idle: a
        partial that would wait behind another decode is shed, so lag never grows beyond real time.
        A partial starts only on a voiced frame: one started in a pause that turns out to be the end of speech
        would hold the recognizer when the final decode needs it (half a second of tiny.en on 2 cores)."""
        interval = self.engines.partial_interval_ms
        audio_ms = self.endpointer.speech_ms  # never the joined audio: that copy per frame grew with the utterance
        if not interval or not self.endpointer.in_speech or audio_ms < self._next_partial_ms:
            return
        if self.endpointer.pause_ms > 0:
            return  # due, and taken on the next voiced frame
        self._next_partial_ms = audio_ms + interval
        refused = self.engines.partial_refused(self)
        if refused:
            self.engines.metrics.partials_shed.labels(refused).inc()
            return
        self._spawn(self._partial(self.utterance, self.endpointer.current_audio()))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _partial(self, utterance: int, audio: bytes) -> None:
        text = await self.engines.run_asr(audio, "asr_partial")
        if text and utterance == self.utterance and self.endpointer.in_speech:
            await self.send(Partial(utterance, text))

    async def _endpoint(self, event: SpeechStarted | SpeechEnded | SpeechDropped) -> None:
        if isinstance(event, SpeechStarted):
            self.utterance += 1
            self._next_partial_ms = self.engines.partial_interval_ms
            await self.send(SpeechStart(self.utterance, event.start_ms))
        elif isinstance(event, SpeechEnded):
            # Stamps are measured from the arrival of the audio where speech ended (the frame at end_ms).
            received = next((t for ms, t in self._arrivals if ms >= event.end_ms), time.monotonic())
            await self.send(SpeechEnd(self.utterance, event.end_ms, event.forced))
            self._spawn(self._understand(self.utterance, event.audio, received))

    async def _understand(self, utterance: int, audio: bytes, received: float) -> None:
        """Transcribe, understand, act; stamps (ms) from the arrival of the end of speech: speech_end_decided
        (the hangover, in real time), transcript, intent, result (sent)."""
        stages: dict[str, float] = {}

        def mark(stage: str) -> None:
            elapsed = time.monotonic() - received
            stages[stage] = round(elapsed * 1e3, 1)
            self.engines.metrics.stage_latency.labels(stage).observe(elapsed)

        mark("speech_end_decided")
        try:
            text = await self.engines.run_asr(audio, "asr_final")
            mark("transcript")
            await self.send(Transcript(utterance, text))
            if not text:
                return
            now = self.now or datetime.now(self.zone)
            record = await self.engines.understand(Turn(text, self.conversation, now))
            mark("intent")
            self.engines.metrics.utterances.labels(record.get("intent", "out_of_scope")).inc()
            await self.send(IntentEvent(utterance, record.get("intent", "out_of_scope"),
                                        float(record.get("confidence", 0.0)), record.get("slots", [])))
            await self.send(ResultEvent(utterance, record["result"]))
            mark("result")
            await self.send(Latency(utterance, stages))
        except Exception as exc:  # one utterance failing must not end the session; say what happened
            await self.send(ErrorEvent("internal", f"utterance {utterance} failed: {type(exc).__name__}: {exc}"))
