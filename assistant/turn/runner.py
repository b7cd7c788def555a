"""The utterance runner: the owner's side of the turn taker, written once for the server and `bench turns`.

The turn taker (taker.py) decides in audio time what is due; the runner does it, through two ports and with
hooks that report, in the way LiveKit's audio recognition reports to its agent session:

- **Hearing** (audio -> text and the language it was heard in; the acoustic turn model's probability) and
  **Acting** (a turn -> its outcome) are the ports. The server's are its shared workers (batched across
  sessions); the benchmark's are timed calls in its own process.
- **Hooks** (`RunnerHooks`) report what the owner shows or counts: a turn began, a partial, a verdict, a turn
  ended (and whether the owner admits it), the transcript, the result, a failure, a wait for the model server.

What the runner owns: the read at a pause (the words and a dry-run understanding, or the sound) and its answer to
the taker; read reuse (a turn that ended in the pause that was read is acted on with the read's words, no second
decode); reopen tails (a turn that continues an earlier one carries the words it adds); the retry notice (told
once per utterance while the model server is away); turns acted on in the order they were spoken. It holds one
record per utterance, dropped when that turn has been acted on.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, TypeVar

from assistant.errors import ModelServerUnavailable, Overloaded
from assistant.language.profile import Language
from assistant.language.registry import Auto, Spoken
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

__all__ = ["Hearing", "Acting", "RunnerHooks", "TurnRunner", "Retry", "once", "KEPT_TURN_WORDS"]

log = logging.getLogger(__name__)

T = TypeVar("T")

KEPT_TURN_WORDS = 4  # turns whose words are kept for a reopening turn (speech reopens only the last one)

# `retry(call, waiting)`: `call()` made again while the model server is away; `waiting(seconds_left)` awaited once
Retry = Callable[[Callable[[], Awaitable[Any]], Callable[[float], Awaitable[None]]], Awaitable[Any]]


async def once(call: Callable[[], Awaitable[T]], waiting: Callable[[float], Awaitable[None]]) -> T:
    """No retry: a driver with no model server to wait for."""
    return await call()


class Hearing(Protocol):
    def partial_refused(self) -> str | None:
        """Why a partial decode now would wait behind other work (then it is shed), else None."""

    def read_refused(self) -> str | None:
        """Why a read at a pause now would wait too long (then the plain hangover ends the turn), else None."""

    async def hear(self, audio: bytes, *, final: bool, read: bool, language: Spoken) -> tuple[str, Language]:
        """(text, the language it was heard in); `language` may be AUTO."""

    async def turn_probability(self, audio: bytes) -> float:
        """The acoustic turn model's probability that the speaker is done."""


class Acting(Protocol):
    async def act(self, turn: Turn) -> TurnOutcome:
        """Understand and act on a turn (a preview turn leaves the store and the conversation as they were)."""


class RunnerHooks:
    """What the runner reports; the owner overrides what it shows or counts (each does nothing here)."""

    async def began(self, began: TurnBegan) -> None: ...

    async def verdict(self, verdict: Verdict) -> None: ...

    async def ended(self, ended: TurnEnded) -> bool:
        """The turn is over; True admits it to be acted on (False: the owner refused it and said why)."""
        return True

    async def dropped(self, dropped: SpeechDropped) -> None: ...

    def shed(self, what: str, reason: str) -> None:
        """A partial or a read was not made: `what` is "partial", or "shed"/"failed" for a read."""

    async def partial(self, utterance: int, text: str, outcome: TurnOutcome | None) -> None: ...

    def read(self, due: ReadDue, reading: Reading | None) -> None:
        """A read at a pause was answered (None: nothing read)."""

    def recognized(self, utterance: int, reused: bool) -> None:
        """The turn's words are known (`reused`: the read's, no second decode): it no longer waits for the
        recognizer."""

    async def transcript(self, utterance: int, text: str, language: Spoken) -> None:
        """`language`: the one it was heard in (the session's, unless AUTO identified another)."""

    async def result(self, utterance: int, outcome: TurnOutcome) -> None: ...

    async def failed(self, utterance: int, error: Exception | None) -> None: ...

    async def waiting(self, utterance: int, left_s: float) -> None:
        """The utterance waits for the model server to come back (said once per utterance)."""


@dataclass
class _Utterance:
    """What the runner knows of one utterance until its turn has been acted on."""

    heard_in: Language | None = None  # the language its read or final decode was heard in
    told_waiting: bool = False  # the owner heard that it waits for the model server


Spawn = Callable[[Coroutine[Any, Any, None]], "asyncio.Task[None]"]


class TurnRunner:
    def __init__(self, taker: TurnTaker, hearing: Hearing, acting: Acting, hooks: RunnerHooks, *,
                 language: Spoken, conversation: str, owner: str | None = None,
                 now: Callable[[], datetime], retry: Retry = once, spawn: Spawn | None = None) -> None:
        """`language`: the session's, or AUTO. `now`: the reference time of each turn. `spawn`: runs partials
        and the acting on a turn as tasks the owner supervises; None awaits them in place (a driver in audio
        time, whose next decision must find the turn before it done)."""
        self.taker, self.hearing, self.acting, self.hooks = taker, hearing, acting, hooks
        self.language, self.conversation, self.owner, self.now = language, conversation, owner, now
        self.retry, self.spawn = retry, spawn
        self._utterances: dict[int, _Utterance] = {}
        self._said: dict[int, str] = {}  # utterance -> the words its turn was acted on (what a reopening one adds to)
        self.cut_in: set[int] = set()  # utterances that began over the assistant's spoken reply (the owner says)
        self._last_turn: asyncio.Task[None] | None = None  # turns act in the order they were spoken
        self._spoken: Language | None = None  # AUTO: the language identified last (partials are decoded in it)

    async def run(self, decisions: list[Decision]) -> None:
        """Do what the turn taker decided, and what its answers to reads decide in turn."""
        pending = deque(decisions)
        while pending:
            decision = pending.popleft()
            if isinstance(decision, TurnBegan):
                await self.hooks.began(decision)
            elif isinstance(decision, PartialDue):
                refused = self.hearing.partial_refused()
                if refused:
                    self.hooks.shed("partial", refused)
                else:
                    await self._start(self._partial(decision.utterance, decision.audio))
            elif isinstance(decision, ReadDue):
                reading = await self._read(decision)  # the turn taker waits for it: decided where it began
                self.hooks.read(decision, reading)
                pending.extend(self.taker.answer(reading))
            elif isinstance(decision, Verdict):
                await self.hooks.verdict(decision)
            elif isinstance(decision, TurnEnded):
                if await self.hooks.ended(decision):
                    previous = self._last_turn
                    self._last_turn = await self._start(self._act_on(decision, previous))
                else:
                    self._utterances.pop(decision.utterance, None)
            elif isinstance(decision, SpeechDropped):
                self._utterances.pop(decision.utterance, None)
                await self.hooks.dropped(decision)

    async def _start(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None] | None:
        if self.spawn is not None:
            return self.spawn(work)
        await work
        return None

    def _turn(self, text: str, *, preview: bool = False, reopens: int | None = None, utterance: int = 0) -> Turn:
        """A turn of this conversation; one that reopens an earlier turn whose words are known carries the words
        it adds to them (`tail`)."""
        earlier = self._said.get(reopens) if reopens is not None else None
        return spoken_turn(text, self.conversation, self.now(), earlier, preview=preview, owner=self.owner,
                           cut_in=utterance in self.cut_in)

    def _record(self, utterance: int) -> _Utterance:
        return self._utterances.setdefault(utterance, _Utterance())

    async def _hear(self, utterance: int, audio: bytes, *, final: bool, read: bool = False) -> str:
        """The text of this audio in the session's language; with "auto", in the language identified in it (a
        partial: in the one identified last, when there is one)."""
        language = self.language
        if isinstance(language, Auto) and not (final or read) and self._spoken is not None:
            language = self._spoken
        text, heard_in = await self.hearing.hear(audio, final=final, read=read, language=language)
        if final or read:
            self._record(utterance).heard_in = heard_in
            if isinstance(self.language, Auto):
                self._spoken = heard_in
        return text

    def _current(self, utterance: int) -> bool:
        stream = self.taker.stream
        return utterance == stream.utterance and stream.in_speech

    async def _partial(self, utterance: int, audio: bytes) -> None:
        try:
            text = await self._hear(utterance, audio, final=False)
            if not text or not self._current(utterance):
                return
            outcome = await self.acting.act(self._turn(text, preview=True, reopens=self.taker.reopened(utterance)))
        except (Overloaded, ModelServerUnavailable):
            return  # a partial is only a display: shed
        if self._current(utterance):
            await self.hooks.partial(utterance, text, outcome)

    async def _read(self, due: ReadDue) -> Reading | None:
        """Read what the turn model listens to at this pause (None: nothing read, the plain hangover)."""
        refused = self.hearing.read_refused()
        if refused:
            self.hooks.shed("shed", refused)
            return None
        try:
            if self.taker.model.listens == SOUND:
                return Reading(probability=await self.hearing.turn_probability(due.audio))
            text = await self._hear(due.utterance, due.audio, final=False, read=True)
            if not str(text).strip():
                return Reading(text)
            outcome = await self.acting.act(self._turn(text, preview=True, reopens=due.reopens))
            await self.hooks.partial(due.utterance, text, outcome)
            return Reading(text, outcome.result, outcome.confidence)
        except (Overloaded, ModelServerUnavailable):  # a read is shed like a partial: the plain hangover
            self.hooks.shed("shed", "busy")
            return None
        except Exception as exc:  # a failed read costs the turn its early end, never the utterance
            if _client_gone(exc):
                raise
            log.exception("read at a pause failed")
            self.hooks.shed("failed", type(exc).__name__)
            return None

    async def _act_on(self, ended: TurnEnded, previous: asyncio.Task[None] | None) -> None:
        """Transcribe (unless the read at the turn's last pause heard it all), understand, act: after the turn
        before it, so a turn that reopens it finds what it did."""
        utterance = ended.utterance
        try:
            text = await self._recognized(utterance, ended.audio, ended.heard)
            if previous is not None:
                await asyncio.wait([previous])
            record = self._utterances.get(utterance)
            heard_in = record.heard_in if record is not None else None
            await self.hooks.transcript(utterance, text, heard_in or self.language)
            if not text:
                return
            turn = self._turn(text, reopens=ended.reopens, utterance=ended.utterance)
            self._said = {**{u: t for u, t in self._said.items() if u > utterance - KEPT_TURN_WORDS},
                          utterance: text}
            outcome = await self.retry(lambda: self.acting.act(turn), self._waiting(utterance))
            if outcome.result is None:
                await self.hooks.failed(utterance, outcome.failure)
            else:
                await self.hooks.result(utterance, outcome)
        except Exception as exc:  # one utterance failing must not end the session; say what happened
            if _client_gone(exc):
                raise
            await self.hooks.failed(utterance, exc)
        finally:
            self._utterances.pop(utterance, None)

    async def _recognized(self, utterance: int, audio: bytes, heard: str | None) -> str:
        """The turn's transcript: the read's, or a final decode."""
        try:
            if heard is not None:
                return heard
            text: str = await self.retry(lambda: self._hear(utterance, audio, final=True), self._waiting(utterance))
            return text
        finally:
            self.hooks.recognized(utterance, heard is not None)

    def _waiting(self, utterance: int) -> Callable[[float], Awaitable[None]]:
        async def waiting(left_s: float) -> None:
            record = self._record(utterance)
            if not record.told_waiting:  # once per utterance (its decode, then its acting)
                record.told_waiting = True
                await self.hooks.waiting(utterance, left_s)
        return waiting


def _client_gone(exc: BaseException) -> bool:
    """The client left (or stopped answering pings): nobody to tell, nothing failed here. Seen by name, so the
    runner needs no websockets."""
    return any(cls.__name__ == "ConnectionClosed" for cls in type(exc).__mro__)
