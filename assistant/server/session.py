"""One connection's session: a thin adapter between the sans-I/O voice stream and the shared workers.

The stream (assistant/audio/stream.py) decides what is due in audio time; the session adds what needs a clock
and a loop: when each piece of audio arrived, tasks for decodes and understanding (in the workers' threads, so
the event loop only moves bytes and events), the load policy's say on partials, and the events it sends.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from assistant.audio.pcm import TARGET_RATE
from assistant.audio.stream import (
    PartialDue,
    StreamConfig,
    StreamEvent,
    UtteranceDropped,
    UtteranceEnded,
    UtteranceStarted,
    VoiceStream,
)
from assistant.errors import ProtocolError
from assistant.events import (
    ErrorEvent,
    IntentEvent,
    Partial,
    Ready,
    ResultEvent,
    ServerEvent,
    SpeechEnd,
    SpeechStart,
    Start,
    Transcript,
)
from assistant.server.latency import LatencyObserver
from assistant.server.workers import Workers
from assistant.text_pipeline import Turn

__all__ = ["Session", "Send"]

Send = Callable[[ServerEvent], Awaitable[None]]


class Session:
    def __init__(self, start: Start, workers: Workers, stream: StreamConfig, send: Send) -> None:
        """Raises InputError (ProtocolError for a bad zone or time) before anything is counted."""
        try:
            self.zone = ZoneInfo(start.timezone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ProtocolError("bad_start", f"timezone {start.timezone!r} is not an IANA zone") from exc
        self.now = self._reference(start.now)
        self.stream = VoiceStream(start.sample_rate, start.channels, start.format, stream)
        self.workers = workers
        self.send = send
        self.id = uuid.uuid4().hex[:12]
        self.conversation = start.conversation_id or f"ws-{self.id}"
        self.latency = LatencyObserver(workers.metrics)
        self._speaking = False  # counted among the workers' speakers
        self._tasks: set[asyncio.Task[None]] = set()
        self._arrivals: deque[tuple[int, float]] = deque(maxlen=500)  # (audio ms fed, monotonic arrival)

    def close(self) -> None:
        """The connection is gone (or started over): stop counting this session as a speaker."""
        self._set_speaking(False)

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
        await self._handle(self.stream.feed(pcm), time.monotonic())

    async def stop(self) -> None:
        """The client's audio ended: finish the open utterance and wait for every result."""
        await self._handle(self.stream.finish(), time.monotonic())
        if self._tasks:
            await asyncio.gather(*self._tasks)

    async def _handle(self, events: list[StreamEvent], arrived: float) -> None:
        fed_ms = self.stream.audio_ms - (self._arrivals[-1][0] if self._arrivals else 0)
        if fed_ms:
            self._arrivals.append((self.stream.audio_ms, arrived))
            self.workers.metrics.audio.inc(fed_ms / 1000)
        for event in events:
            if isinstance(event, UtteranceStarted):
                self._set_speaking(True)
                await self.send(SpeechStart(event.utterance, event.start_ms))
            elif isinstance(event, PartialDue):
                self._partial(event)
            elif isinstance(event, UtteranceEnded):
                self._set_speaking(False)
                self.latency.speech_ended(event.utterance, self._arrival(event.end_ms))
                await self._emit(SpeechEnd(event.utterance, event.end_ms, event.forced))
                self._spawn(self._understand(event.utterance, event.audio))
            elif isinstance(event, UtteranceDropped):
                self._set_speaking(False)

    def _arrival(self, audio_ms: int) -> float:
        """When the audio at `audio_ms` arrived: latency is measured from there, as a person experiences it."""
        return next((t for ms, t in self._arrivals if ms >= audio_ms), time.monotonic())

    def _set_speaking(self, speaking: bool) -> None:
        if speaking != self._speaking:
            self.workers.speakers += 1 if speaking else -1
            self._speaking = speaking

    def _partial(self, due: PartialDue) -> None:
        """Only when the recognizer has room: a partial that would wait behind another decode is shed, so lag
        never grows beyond real time."""
        refused = self.workers.partial_refused(caller_speaking=self._speaking)
        if refused:
            self.workers.metrics.partials_shed.labels(refused).inc()
            return
        self._spawn(self._decode_partial(due.utterance, due.audio))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _emit(self, event: ServerEvent) -> None:
        """Send, and let the latency observer stamp it; after the result, the utterance's latency follows."""
        await self.send(event)
        latency = self.latency.seen(event, time.monotonic())
        if latency is not None:
            await self.send(latency)

    async def _decode_partial(self, utterance: int, audio: bytes) -> None:
        text = await self.workers.transcribe(audio, final=False)
        if text and utterance == self.stream.utterance and self.stream.in_speech:
            await self.send(Partial(utterance, text))

    async def _understand(self, utterance: int, audio: bytes) -> None:
        """Transcribe, understand, act."""
        try:
            text = await self.workers.transcribe(audio, final=True)
            await self._emit(Transcript(utterance, text))
            if not text:
                self.latency.forget(utterance)
                return
            outcome = await self.workers.act(Turn(text, self.conversation, self.now or datetime.now(self.zone)))
            if outcome.result is None:
                await self._failed(utterance, outcome.failure)
                return
            self.workers.metrics.utterances.labels(outcome.intent).inc()
            await self._emit(IntentEvent(utterance, outcome.intent, outcome.confidence,
                                         [s.to_dict() for s in outcome.slots]))
            await self._emit(ResultEvent(utterance, outcome.result.to_dict()))
        except Exception as exc:  # one utterance failing must not end the session; say what happened
            await self._failed(utterance, exc)

    async def _failed(self, utterance: int, exc: Exception | None) -> None:
        self.latency.forget(utterance)
        await self.send(ErrorEvent("internal", f"utterance {utterance} failed: {type(exc).__name__}: {exc}"))
