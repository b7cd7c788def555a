"""One connection's session: the I/O around the utterance runner (assistant/turn/runner.py), which does what the
turn taker decides (the read at each pause, read reuse, reopened turns, the retry notice) with the shared workers
as its ports (server/ports.py: decodes and understanding batched across sessions, in the workers' threads). The
session keeps admission (server/admission.py: its audio and utterances, and its client's share, `ClientShare`,
which every request names as its owner so the batchers serve clients in turn), when each piece of audio arrived
(latency is measured from there), its tasks, the events it sends and the error codes (server/failures.py).
"""

from __future__ import annotations

import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from datetime import datetime

from assistant.audio.pcm import TARGET_RATE
from assistant.audio.stream import StreamConfig, VoiceStream
from assistant.config import LimitsSettings
from assistant.errors import ProtocolError
from assistant.events import (
    IntentEvent,
    Partial,
    Playback,
    Ready,
    ResultEvent,
    ServerEvent,
    SpeechEnd,
    SpeechStart,
    Start,
    Transcript,
    TurnEvent,
)
from assistant.language.registry import Spoken, language_of
from assistant.server.admission import SessionAdmission
from assistant.server.failures import model_waiting, queue_full, utterance_failed
from assistant.server.latency import LatencyObserver
from assistant.server.limits import ClientShare
from assistant.server.ports import WorkerActing, WorkerHearing
from assistant.server.speaker import spoken_replies
from assistant.server.tasks import SessionTasks
from assistant.server.workers import Workers
from assistant.speech.ear import reply_text
from assistant.text_pipeline import TurnOutcome
from assistant.turn.runner import RunnerHooks, TurnRunner
from assistant.turn.taker import SpeechDropped, TurnBegan, TurnEnded, TurnTaker, Verdict
from assistant.zones import parse_reference, parse_zone

__all__ = ["Session", "Send", "SendBytes"]

Send = Callable[[ServerEvent], Awaitable[None]]
SendBytes = Callable[[bytes], Awaitable[None]]


class Session(RunnerHooks):
    def __init__(self, start: Start, workers: Workers, stream: StreamConfig, send: Send, *,
                 limits: LimitsSettings | None = None, identity: str = "", share: ClientShare | None = None,
                 send_bytes: SendBytes | None = None) -> None:
        """Raises InputError (ProtocolError for a bad zone or time) before anything is counted. `identity`: the
        token's identity ("" without tokens): it namespaces the conversation and owns the bookings made. `share`:
        the client's, shared by all its sessions (the gate's); without one the session is a client of its own."""
        try:
            self.zone = parse_zone(start.timezone)
            self.now = parse_reference(start.now, self.zone) if start.now is not None else None
        except ValueError as exc:
            raise ProtocolError("bad_start", str(exc)) from None
        self.language = start.heard_in()
        if not workers.hears(self.language):
            raise ProtocolError("language_unavailable", workers.unavailable(self.language))
        self.stream = VoiceStream(start.sample_rate, start.channels, start.format, stream)
        self.turns = TurnTaker(self.stream, workers.turn_model, workers.turn)
        self.workers, self.send = workers, send
        self.limits = limits or LimitsSettings()
        self.id = uuid.uuid4().hex[:12]
        self.share = share or ClientShare.of(f"session:{self.id}", self.limits)
        self.client = self.share.key  # the owner the batchers serve in turn
        self.admission = SessionAdmission(self.limits, self.share)
        conversation = start.conversation_id or f"ws-{self.id}"
        # One identity's conversation ids are its own: another token cannot answer its questions or undo its turns.
        self.conversation = f"{identity}/{conversation}" if identity else conversation
        self.owner = f"token:{identity}" if identity else f"conversation:{conversation}"
        self.tasks = SessionTasks(self.id)
        self.speaker = spoken_replies(start, workers, self.turns, send, send_bytes, lambda: self.stream.audio_ms)
        self.latency = LatencyObserver(workers.metrics, awaits_reply=self.speaker is not None)
        self._speaking = False  # counted among the workers' speakers
        self._arrivals: deque[tuple[int, float]] = deque(maxlen=500)  # (audio ms fed, monotonic arrival)
        self.runner = TurnRunner(self.turns, WorkerHearing(workers, self.client, lambda: self._speaking),
                                 WorkerActing(workers, self.client), self, language=self.language,
                                 conversation=self.conversation, owner=self.owner,
                                 now=lambda: self.now or datetime.now(self.zone), retry=workers.retrying,
                                 spawn=self.tasks.spawn)

    def close(self) -> None:
        """The connection is gone (or started over): stop counting this session as a speaker, and cancel the
        work it left: decodes not yet started leave the queue (a batch already running finishes)."""
        self._set_speaking(False)
        self.tasks.cancel()
        self.admission.unqueue_all()  # a task cancelled before it ran never reaches its own `finally`

    def ready(self) -> Ready:
        return Ready(self.id, TARGET_RATE, self.language.code, speech=self.speaker is not None)

    async def playback(self, report: Playback) -> None:
        """Where the client began playing a reply, stopped one (the speaker cut in), or finished one."""
        if self.speaker is not None:
            self.speaker.played(report)

    async def audio(self, pcm: bytes) -> None:
        """Raises LimitExceeded ("too_fast") when audio comes faster than [limits] admits."""
        arrived = time.monotonic()
        frame_s = self.stream.duration_s(len(pcm))
        self.admission.audio(self.stream.audio_ms / 1000 + frame_s, frame_s, arrived)
        decisions = self.turns.feed(pcm)
        self._arrived(arrived)
        await self.runner.run(decisions)

    async def stop(self) -> None:
        """The client's audio ended: finish the open utterance and wait for every result."""
        decisions = self.turns.finish()
        self._arrived(time.monotonic())
        await self.runner.run(decisions)
        await self.tasks.wait()

    def _arrived(self, arrived: float) -> None:
        """Stamps the audio fed so far with when it arrived."""
        fed_ms = self.stream.audio_ms - (self._arrivals[-1][0] if self._arrivals else 0)
        if fed_ms:
            self._arrivals.append((self.stream.audio_ms, arrived))
            self.workers.metrics.audio.inc(fed_ms / 1000)

    def _arrival(self, audio_ms: int) -> float:
        """When the audio at `audio_ms` arrived: latency is measured from there, as a person experiences it."""
        return next((t for ms, t in self._arrivals if ms >= audio_ms), time.monotonic())

    def _set_speaking(self, speaking: bool) -> None:
        if speaking != self._speaking:
            self.workers.speakers += 1 if speaking else -1
            self._speaking = speaking

    async def _emit(self, event: ServerEvent) -> None:
        """Send, and let the latency observer stamp it; after the result, the utterance's latency follows."""
        await self.send(event)
        latency = self.latency.seen(event, time.monotonic())
        if latency is not None:
            await self.send(latency)

    async def _say(self, event: ServerEvent) -> None:
        await self.send(event)

    # what the runner reports (RunnerHooks)

    async def began(self, began: TurnBegan) -> None:
        self._set_speaking(True)
        await self.send(SpeechStart(began.utterance, began.start_ms))
        if self.speaker is not None and self.speaker.playing():  # barge-in: the client stops playing on
            self.runner.cut_in.add(began.utterance)  # speech_start; nothing more is sent, and what the speaker
            await self.speaker.cut()  # says was heard under the reply's echo: a booking in it is proposed

    async def verdict(self, decision: Verdict) -> None:
        verdict = decision.verdict
        self.workers.metrics.turn_verdicts.labels(verdict.kind).inc()
        await self.send(TurnEvent(decision.utterance, decision.at_ms, verdict.kind, verdict.hangover_ms,
                                  verdict.reason, list(verdict.waiting_for)))

    async def ended(self, ended: TurnEnded) -> bool:
        """Admitted unless this session's or its client's utterances already fill their bound."""
        self._set_speaking(False)
        self.latency.speech_ended(ended.utterance, self._arrival(ended.end_ms))
        await self._emit(SpeechEnd(ended.utterance, ended.end_ms, ended.forced))
        full = self.admission.queue(ended.utterance)
        if full is None:
            return True
        reason, waiting = full
        self.latency.forget(ended.utterance)
        self.workers.metrics.refused.labels(reason).inc()
        self.tasks.spawn(self._say(queue_full(ended.utterance, waiting)))
        return False

    async def dropped(self, dropped: SpeechDropped) -> None:
        self._set_speaking(False)
        # only an utterance that began is dropped (its speech_start was sent): a client showing "listening..."
        # hears that it is over
        await self.send(SpeechEnd(dropped.utterance, self.stream.audio_ms, discarded=True))

    def shed(self, what: str, reason: str) -> None:
        if what == "partial":
            self.workers.metrics.partials_shed.labels(reason).inc()
        else:
            self.workers.metrics.turn_verdicts.labels(what).inc()

    async def partial(self, utterance: int, text: str, outcome: TurnOutcome | None) -> None:
        if outcome is None or outcome.result is None:
            await self.send(Partial(utterance, text))
        else:
            await self.send(Partial(utterance, text, outcome.intent, outcome.result.to_dict()))

    def recognized(self, utterance: int, reused: bool) -> None:
        if reused:
            self.workers.metrics.finals_reused.inc()
        self.admission.unqueue(utterance)

    async def transcript(self, utterance: int, text: str, language: Spoken) -> None:
        await self._emit(Transcript(utterance, text, language.code))
        if not text:
            self.latency.forget(utterance)

    async def result(self, utterance: int, outcome: TurnOutcome) -> None:
        assert outcome.result is not None
        self.workers.metrics.utterances.labels(outcome.intent).inc()
        await self._emit(IntentEvent(utterance, outcome.intent, outcome.confidence,
                                     [s.to_dict() for s in outcome.slots], outcome.turn.text))
        await self._emit(ResultEvent(utterance, outcome.result.to_dict()))
        if self.speaker is not None:
            self.tasks.spawn(self._speak(utterance, outcome))

    async def _speak(self, utterance: int, outcome: TurnOutcome) -> None:
        assert self.speaker is not None and outcome.result is not None
        language = language_of(outcome.turn.text)
        text = reply_text(outcome.result, language, (self.now or datetime.now(self.zone)).date(),
                          self.workers.pipeline.rooms.spoken_name(language))
        said = self.speaker.speaks(language) and await self.speaker.say(utterance, text, language, self._emit)
        if not said:
            latency = self.latency.unspoken(utterance)
            if latency is not None:
                await self.send(latency)

    async def failed(self, utterance: int, error: Exception | None) -> None:
        self.latency.forget(utterance)
        await self.send(utterance_failed(self.id, utterance, error))

    async def waiting(self, utterance: int, left_s: float) -> None:
        await self.send(model_waiting(utterance, left_s))
