"""`bench turns`' driver of the utterance runner (assistant/turn/runner.py): the server's runner on timed ports,
in audio time. Every model call's cost is measured here and charged to the decision that waited for it: a read
to the pause it answers, a final decode and the acting to the turn's end."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from assistant.language.profile import Language
from assistant.language.registry import Spoken
from assistant.text_pipeline import TextPipeline, Turn, TurnOutcome
from assistant.turn.models import Reading
from assistant.turn.runner import RunnerHooks, TurnRunner
from assistant.turn.taker import ReadDue, TurnEnded, TurnTaker, Verdict

__all__ = ["Timed", "TimedRun", "drive"]


class Timed:
    """A model call cached per input, with the time it took the first time (every policy pays that cost)."""

    def __init__(self, call: Callable[[bytes], Any]) -> None:
        self._call, self._seen = call, dict[str, tuple[Any, float]]()

    def __call__(self, audio: bytes) -> tuple[Any, float]:
        key = hashlib.sha1(audio).hexdigest()
        if key not in self._seen:
            started = time.perf_counter()
            out = self._call(audio)
            self._seen[key] = (out, (time.perf_counter() - started) * 1e3)
        return self._seen[key]


class _Ledger:
    """Compute spent since it was last taken (ms)."""

    def __init__(self) -> None:
        self.spent = 0.0

    def take(self) -> float:
        spent, self.spent = self.spent, 0.0
        return spent


class _TimedHearing:
    def __init__(self, recognize: Timed, smart_turn: Timed | None, ledger: _Ledger, language: Language) -> None:
        self.recognize, self.smart_turn, self.ledger, self.language = recognize, smart_turn, ledger, language

    def partial_refused(self) -> str | None:
        return None  # one client, in audio time: nothing to shed

    def read_refused(self) -> str | None:
        return None

    async def hear(self, audio: bytes, *, final: bool, read: bool, language: Spoken) -> tuple[str, Language]:
        text, cost = self.recognize(audio)  # the recognizer's text: its n-best along
        self.ledger.spent += cost
        return text, self.language  # the recognizer of the turn's language

    async def turn_probability(self, audio: bytes) -> float:
        assert self.smart_turn is not None, "a sound-reading policy needs Smart Turn"
        probability, cost = self.smart_turn(audio)
        self.ledger.spent += cost
        return float(probability)


class _TimedActing:
    def __init__(self, pipeline: TextPipeline, ledger: _Ledger) -> None:
        self.pipeline, self.ledger = pipeline, ledger

    async def act(self, turn: Turn) -> TurnOutcome:
        started = time.perf_counter()
        outcome = self.pipeline.act_many([turn], commit=not turn.preview)[0]
        self.ledger.spent += (time.perf_counter() - started) * 1e3
        return outcome


@dataclass
class TimedRun:
    """What one turn's audio did: reads, each utterance's end and words, and when the last one's result was
    ready (audio time, ms)."""

    reads: int = 0
    verdicts: list[Verdict] = field(default_factory=list)
    ended: list[TurnEnded] = field(default_factory=list)
    heard: list[str] = field(default_factory=list)  # what each utterance was acted on as
    done_ms: list[float] = field(default_factory=list)  # per utterance: when its result was ready


class _Hooks(RunnerHooks):
    def __init__(self, ledger: _Ledger) -> None:
        self.ledger, self.out = ledger, TimedRun()
        self._read_ready: dict[int, float] = {}  # utterance -> audio time its last read was ready
        self._ready = 0.0  # the ending turn: when its words were known

    def read(self, due: ReadDue, reading: Reading | None) -> None:
        self.out.reads += 1
        self._read_ready[due.utterance] = due.at_ms + self.ledger.take()

    async def verdict(self, verdict: Verdict) -> None:
        self.out.verdicts.append(verdict)

    async def ended(self, ended: TurnEnded) -> bool:
        self.out.ended.append(ended)
        self.ledger.take()
        # the decision waited for the read at the last pause
        self._ready = max(float(ended.decided_ms), self._read_ready.pop(ended.utterance, 0.0))
        return True

    def recognized(self, utterance: int, reused: bool) -> None:
        self._ready += self.ledger.take()

    async def transcript(self, utterance: int, text: str, language: Spoken) -> None:
        self.out.heard.append(str(text))
        if not text:
            self.out.done_ms.append(self._ready)

    async def result(self, utterance: int, outcome: TurnOutcome) -> None:
        self.out.done_ms.append(self._ready + self.ledger.take())

    async def failed(self, utterance: int, error: Exception | None) -> None:
        self.out.done_ms.append(self._ready + self.ledger.take())


def drive(taker: TurnTaker, pcm: bytes, recognize: Timed, smart_turn: Timed | None, pipeline: TextPipeline,
          language: Language, now: datetime) -> TimedRun:
    """The audio fed whole to the turn taker, its decisions run by the server's runner, in audio time."""
    ledger = _Ledger()
    hooks = _Hooks(ledger)
    hearing = _TimedHearing(recognize, smart_turn, ledger, language)
    runner = TurnRunner(taker, hearing, _TimedActing(pipeline, ledger), hooks, language=language,
                        conversation="bench", now=lambda: now)

    async def run() -> None:
        await runner.run(taker.feed(pcm))
        await runner.run(taker.finish())

    asyncio.run(run())
    return hooks.out
