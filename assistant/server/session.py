"""One connection's session: a thin adapter between the sans-I/O voice stream and the shared workers.

The turn taker (assistant/turn/taker.py, over the voice stream) decides what is due in audio time; the session
adds what needs a clock and a loop: when each piece of audio arrived, tasks for decodes and understanding (in the
workers' threads, so the event loop only moves bytes and events), the load policy's say on partials and reads,
and the events it sends.

End of turn ([turn]): at a pause inside an utterance the session reads what the turn model listens to (the words
so far and a dry-run understanding that leaves the store and the conversation as they were, or the sound) and
answers the turn taker, which sets the silence that ends this turn; the decision is taken where the pause began.
When the turn ends in that pause with no voice since, the read's transcript is acted on without decoding again.
Nothing is committed before a turn ends. Speech that starts soon after a turn ended reopens it: its audio is
decoded from the start of the request, and the whole request replaces what the turn did (`Turn.reopens`).

Fair share ([limits]): a session belongs to a client (its token's identity, else its address: `ClientShare`),
and every request names that client as its owner, so the batchers serve clients in turn however many sessions
each opens. Audio is admitted at most `audio_speed` times real time for the session and `client_audio_speed`
for all the client's sessions together (each plus a burst); at most `max_queued_utterances` of a session's
utterances, and `max_queued_utterances_per_client` of its client's, wait for the recognizer. Past an audio bound
the connection is closed (`too_fast`), past a queue bound the utterance is refused (`overloaded`). Closing the
session cancels the work it left queued.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from datetime import datetime
from typing import Any

from websockets.exceptions import ConnectionClosed

from assistant.audio.pcm import TARGET_RATE
from assistant.audio.stream import StreamConfig, VoiceStream
from assistant.booking.store import StoreUnavailable
from assistant.config import LimitsSettings
from assistant.errors import LimitExceeded, ModelServerUnavailable, ProtocolError
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
    TurnEvent,
)
from assistant.language.registry import AUTO, DEFAULT
from assistant.server.batcher import Overloaded
from assistant.server.latency import LatencyObserver
from assistant.server.limits import AudioAdmission, ClientShare
from assistant.server.workers import Workers
from assistant.text_pipeline import Turn, TurnOutcome, spoken_turn
from assistant.turn.models import SOUND, Reading
from assistant.turn.taker import (
    Decision,
    PartialDue,
    ReadDue,
    SpeechDropped,
    TurnBegan,
    TurnEnded,
    TurnTaker,
    Verdict,
)
from assistant.zones import parse_reference, parse_zone

__all__ = ["Session", "Send"]

log = logging.getLogger(__name__)

Send = Callable[[ServerEvent], Awaitable[None]]


class Session:
    def __init__(self, start: Start, workers: Workers, stream: StreamConfig, send: Send, *,
                 limits: LimitsSettings | None = None, identity: str = "", share: ClientShare | None = None
                 ) -> None:
        """Raises InputError (ProtocolError for a bad zone or time) before anything is counted. `identity`: the
        token's identity ("" without tokens): it namespaces the conversation and owns the bookings made. `share`:
        the client's, shared by all its sessions (the gate's); without one the session is a client of its own."""
        try:
            self.zone = parse_zone(start.timezone)
            self.now = parse_reference(start.now, self.zone) if start.now is not None else None
        except ValueError as exc:
            raise ProtocolError("bad_start", str(exc)) from None
        self.language = start.language or DEFAULT.code
        if not workers.hears(self.language):
            raise ProtocolError("language_unavailable", workers.unavailable(self.language))
        self.stream = VoiceStream(start.sample_rate, start.channels, start.format, stream)
        self.turns = TurnTaker(self.stream, workers.turn_model, workers.turn)
        self.workers = workers
        self.send = send
        self.limits = limits or LimitsSettings()
        self._admission = AudioAdmission(self.limits.audio_speed, self.limits.audio_burst_s)
        self._began = time.monotonic()
        self.id = uuid.uuid4().hex[:12]
        self.share = share or ClientShare.of(f"session:{self.id}", self.limits)
        self.client = self.share.key  # the owner the batchers serve in turn
        conversation = start.conversation_id or f"ws-{self.id}"
        # One identity's conversation ids are its own: another token cannot answer its questions or undo its turns.
        self.conversation = f"{identity}/{conversation}" if identity else conversation
        self.owner = f"token:{identity}" if identity else f"conversation:{conversation}"
        self._queued: set[int] = set()  # utterances ended and not yet heard (counted in the client's share too)
        self.latency = LatencyObserver(workers.metrics)
        self._speaking = False  # counted among the workers' speakers
        self._tasks: set[asyncio.Task[None]] = set()
        self._arrivals: deque[tuple[int, float]] = deque(maxlen=500)  # (audio ms fed, monotonic arrival)
        self._said: dict[int, str] = {}  # utterance -> the words its turn was acted on (what a reopening one adds to)
        self._last_turn: asyncio.Task[None] | None = None  # turns act in the order they were spoken
        self._told_unavailable: set[int] = set()  # utterances whose client heard that the model server is away
        # "auto" sessions: the language identified in each utterance's read or final, and the last one identified
        # (a partial, only a display, is decoded in it rather than paying for identification)
        self._heard_in: dict[int, str] = {}
        self._spoken: str | None = None

    def close(self) -> None:
        """The connection is gone (or started over): stop counting this session as a speaker, and cancel the
        work it left: decodes not yet started leave the queue (a batch already running finishes)."""
        self._set_speaking(False)
        for task in list(self._tasks):
            task.cancel()
        for utterance in list(self._queued):  # a task cancelled before it ran never reaches its own `finally`
            self._unqueue(utterance)

    def ready(self) -> Ready:
        return Ready(self.id, TARGET_RATE, self.language)

    async def audio(self, pcm: bytes) -> None:
        """Raises LimitExceeded ("too_fast") when audio comes faster than [limits] admits."""
        arrived = time.monotonic()
        frame_s = self.stream.duration_s(len(pcm))
        if self._admission.refused(self.stream.audio_ms / 1000 + frame_s, arrived - self._began):
            raise LimitExceeded("too_fast", f"audio arrives faster than {self.limits.audio_speed:g} times real time "
                                f"(after the first {self.limits.audio_burst_s:g} s); send it in real time")
        if self.share.audio.refused(frame_s):
            raise LimitExceeded("too_fast", f"your sessions together send audio faster than "
                                f"{self.limits.client_audio_speed:g} times real time; send it in real time")
        await self._handle(self.turns.feed(pcm), arrived)

    async def stop(self) -> None:
        """The client's audio ended: finish the open utterance and wait for every result."""
        await self._handle(self.turns.finish(), time.monotonic())
        if self._tasks:
            await asyncio.gather(*self._tasks)

    async def _handle(self, decisions: list[Decision], arrived: float) -> None:
        fed_ms = self.stream.audio_ms - (self._arrivals[-1][0] if self._arrivals else 0)
        if fed_ms:
            self._arrivals.append((self.stream.audio_ms, arrived))
            self.workers.metrics.audio.inc(fed_ms / 1000)
        pending = deque(decisions)
        while pending:
            decision = pending.popleft()
            if isinstance(decision, TurnBegan):
                self._set_speaking(True)
                await self.send(SpeechStart(decision.utterance, decision.start_ms))
            elif isinstance(decision, PartialDue):
                self._partial(decision)
            elif isinstance(decision, ReadDue):
                reading = await self._at_pause(decision)  # the turn taker waits for it: decided where it began
                pending.extend(self.turns.answer(reading))
            elif isinstance(decision, Verdict):
                verdict = decision.verdict
                self.workers.metrics.turn_verdicts.labels(verdict.kind).inc()
                await self.send(TurnEvent(decision.utterance, decision.at_ms, verdict.kind, verdict.hangover_ms,
                                          verdict.reason, list(verdict.waiting_for)))
            elif isinstance(decision, TurnEnded):
                self._set_speaking(False)
                self.latency.speech_ended(decision.utterance, self._arrival(decision.end_ms))
                await self._emit(SpeechEnd(decision.utterance, decision.end_ms, decision.forced))
                self._ended(decision)
            elif isinstance(decision, SpeechDropped):
                self._set_speaking(False)
                # only an utterance that began is dropped (its speech_start was sent): a client showing
                # "listening..." hears that it is over
                await self.send(SpeechEnd(decision.utterance, self.stream.audio_ms, discarded=True))

    def _ended(self, ended: TurnEnded) -> None:
        """The turn is over: act on it (with the last read's transcript when the turn ended in that pause)."""
        full = self._queue_full()
        if full is not None:
            reason, waiting = full
            self.latency.forget(ended.utterance)
            self.workers.metrics.refused.labels(reason).inc()
            self._spawn(self._say(ErrorEvent(
                "overloaded", f"utterance {ended.utterance} was not processed: {waiting} of yours are still "
                              "waiting for the recognizer; send audio in real time")))
            return
        self._queue(ended.utterance)
        previous = self._last_turn
        self._last_turn = self._spawn(self._understand(ended, previous))

    def _queue_full(self) -> tuple[str, int] | None:
        """(why, how many wait) when this session's or its client's utterances already fill their bound."""
        if len(self._queued) >= self.limits.max_queued_utterances:
            return "session_queue_full", len(self._queued)
        if self.share.waiting >= self.limits.max_queued_utterances_per_client:
            return "client_queue_full", self.share.waiting
        return None

    def _queue(self, utterance: int) -> None:
        self._queued.add(utterance)
        self.share.waiting += 1

    def _unqueue(self, utterance: int) -> None:
        """No longer waiting for the recognizer (once per utterance, whether it was heard or cancelled)."""
        if utterance in self._queued:
            self._queued.discard(utterance)
            self.share.waiting -= 1

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

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[None]) -> None:
        """Every task's end is looked at: a client that vanished mid-reply is no error worth a traceback."""
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if isinstance(exc, ConnectionClosed):
            log.debug("session %s: the client left before its reply", self.id)
        elif exc is not None:
            log.error("session %s: a task failed", self.id, exc_info=exc)

    async def _say(self, event: ServerEvent) -> None:
        await self.send(event)

    async def _emit(self, event: ServerEvent) -> None:
        """Send, and let the latency observer stamp it; after the result, the utterance's latency follows."""
        await self.send(event)
        latency = self.latency.seen(event, time.monotonic())
        if latency is not None:
            await self.send(latency)

    def _turn(self, text: str, *, preview: bool = False, reopens: int | None = None) -> Turn:
        """A turn of this conversation; one that reopens an earlier turn whose words are known carries the words
        it adds to them (`tail`)."""
        earlier = self._said.get(reopens) if reopens is not None else None
        return spoken_turn(text, self.conversation, self.now or datetime.now(self.zone), earlier, preview=preview,
                           owner=self.owner)

    async def _decode_partial(self, utterance: int, audio: bytes) -> None:
        try:
            text = await self._hear(utterance, audio, final=False)
            if not text or utterance != self.stream.utterance or not self.stream.in_speech:
                return
            turn = self._turn(text, preview=True, reopens=self.turns.reopened(utterance))
            outcome = await self.workers.act(turn, self.client)  # the command forming
        except (Overloaded, ModelServerUnavailable):
            return  # a partial is only a display: shed
        if utterance == self.stream.utterance and self.stream.in_speech:
            await self.send(self._partial_event(utterance, text, outcome))

    @staticmethod
    def _partial_event(utterance: int, text: str, outcome: TurnOutcome | None) -> Partial:
        if outcome is None or outcome.result is None:
            return Partial(utterance, text)
        return Partial(utterance, text, outcome.intent, outcome.result.to_dict())

    async def _at_pause(self, due: ReadDue) -> Reading | None:
        """Read what the turn model listens to at this pause (None: nothing read, the plain hangover)."""
        metrics = self.workers.metrics
        refused = self.workers.read_refused(self.client)
        if refused:
            metrics.turn_verdicts.labels("shed").inc()
            return None
        try:
            if self.turns.model.listens == SOUND:
                return Reading(probability=await self.workers.turn_probability(due.audio, self.client))
            text = await self._hear(due.utterance, due.audio, final=False, read=True)
            if not text.strip():
                return Reading(text)
            outcome = await self.workers.act(self._turn(text, preview=True, reopens=due.reopens), self.client)
            await self.send(self._partial_event(due.utterance, text, outcome))
            return Reading(text, outcome.result, outcome.confidence)
        except (Overloaded, ModelServerUnavailable):  # a read is shed like a partial: the plain hangover
            metrics.turn_verdicts.labels("shed").inc()
            return None
        except ConnectionClosed:
            raise  # the client is gone (or stopped answering pings): nothing failed here
        except Exception:  # a failed read costs the turn its early end, never the utterance
            log.exception("read at a pause failed")
            metrics.turn_verdicts.labels("failed").inc()
            return None

    async def _understand(self, ended: TurnEnded, previous: asyncio.Task[None] | None) -> None:
        """Transcribe (unless the read at the turn's last pause heard it all), understand, act: after the turn
        before it, so a turn that reopens it finds what it did."""
        utterance = ended.utterance
        try:
            text = await self._recognized(utterance, ended.audio, ended.heard)
            if previous is not None:
                await asyncio.wait([previous])
            await self._emit(Transcript(utterance, text, self._heard_in.pop(utterance, self.language)))
            if not text:
                self.latency.forget(utterance)
                return
            turn = self._turn(text, reopens=ended.reopens)
            self._said = {**{u: t for u, t in self._said.items() if u > utterance - 4}, utterance: text}
            outcome = await self.workers.retrying(lambda: self.workers.act(turn, self.client),
                                                  self._model_waiting(utterance))
            if outcome.result is None:
                await self._failed(utterance, outcome.failure)
                return
            self.workers.metrics.utterances.labels(outcome.intent).inc()
            await self._emit(IntentEvent(utterance, outcome.intent, outcome.confidence,
                                         [s.to_dict() for s in outcome.slots], outcome.turn.text))
            await self._emit(ResultEvent(utterance, outcome.result.to_dict()))
        except ConnectionClosed:
            raise  # the client is gone: no one to tell, nothing failed
        except Exception as exc:  # one utterance failing must not end the session; say what happened
            await self._failed(utterance, exc)

    async def _recognized(self, utterance: int, audio: bytes, heard: str | None) -> str:
        """The turn's transcript: the read's, or a final decode. Either way it no longer waits for the
        recognizer afterwards (the session's queue bound counts utterances until here)."""
        try:
            if heard is not None:
                self.workers.metrics.finals_reused.inc()
                return heard
            return await self.workers.retrying(lambda: self._hear(utterance, audio, final=True),
                                               self._model_waiting(utterance))
        finally:
            self._unqueue(utterance)

    async def _hear(self, utterance: int, audio: bytes, *, final: bool, read: bool = False) -> str:
        """The text of this audio in the session's language; in an "auto" session, in the language identified
        in it (a partial: in the one identified last, when there is one)."""
        language = self.language
        if language == AUTO and not (final or read) and self._spoken is not None:
            language = self._spoken
        text, heard_in = await self.workers.hear(audio, final=final, read=read, owner=self.client, language=language)
        if final or read:
            self._heard_in[utterance] = heard_in
            if self.language == AUTO:
                self._spoken = heard_in
        return text

    def _model_waiting(self, utterance: int) -> Callable[[float], Awaitable[None]]:
        """What the client hears when its utterance waits for the model server to come back: the answer follows
        when it does (an `error` with code model_unavailable and "retrying"; a result or a final error after)."""
        async def waiting(left_s: float) -> None:
            if utterance not in self._told_unavailable:  # once per utterance (its decode, then its reading)
                self._told_unavailable.add(utterance)
                await self.send(ErrorEvent("model_unavailable", f"utterance {utterance}: the model server is "
                                           f"unavailable; retrying for up to {left_s:.0f} s"))
        return waiting

    async def _failed(self, utterance: int, exc: Exception | None) -> None:
        """The client hears a code and plain words; what went wrong inside goes to the log only."""
        self.latency.forget(utterance)
        if isinstance(exc, Overloaded):
            await self.send(ErrorEvent("overloaded", f"utterance {utterance} was not processed: the server is "
                                                     "busy; please say it again"))
            return
        if isinstance(exc, ModelServerUnavailable):
            log.warning("session %s: utterance %d: %s", self.id, utterance, exc)
            await self.send(ErrorEvent("model_unavailable", f"utterance {utterance} was not processed: the model "
                                                            "server did not come back in time; please say it again"))
            return
        if isinstance(exc, StoreUnavailable):  # said plainly: nothing was booked, and it is safe to say it again
            log.warning("session %s: utterance %d: %s", self.id, utterance, exc)
            await self.send(ErrorEvent("store_unavailable", f"utterance {utterance} was not carried out: the "
                                       "calendar server is not answering, so nothing was booked or changed; "
                                       "please try again in a moment"))
            return
        log.error("session %s: utterance %d failed", self.id, utterance, exc_info=exc)
        await self.send(ErrorEvent("internal", f"utterance {utterance} could not be processed; please say it "
                                               "again"))
