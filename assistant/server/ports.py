"""The utterance runner's ports (assistant/turn/runner.py) for a server session: the shared workers, as one
client's. Decodes and understanding are batched with every other session's; the load policy sheds partials and
reads that would wait."""

from __future__ import annotations

from collections.abc import Callable, Hashable

from assistant.language.profile import Language
from assistant.language.registry import Spoken
from assistant.server.workers import Workers
from assistant.text_pipeline import Turn, TurnOutcome

__all__ = ["WorkerHearing", "WorkerActing"]


class WorkerHearing:
    def __init__(self, workers: Workers, owner: Hashable, speaking: Callable[[], bool]) -> None:
        """`owner`: the client the batchers serve in turn; `speaking`: whether this session's speaker is
        talking now (a partial then gives way to others' finals)."""
        self.workers, self.owner, self.speaking = workers, owner, speaking

    def partial_refused(self) -> str | None:
        return self.workers.partial_refused(caller_speaking=self.speaking())

    def read_refused(self) -> str | None:
        return self.workers.read_refused(self.owner)

    async def hear(self, audio: bytes, *, final: bool, read: bool, language: Spoken) -> tuple[str, Language]:
        return await self.workers.hear(audio, final=final, read=read, owner=self.owner, language=language)

    async def turn_probability(self, audio: bytes) -> float:
        return await self.workers.turn_probability(audio, self.owner)


class WorkerActing:
    def __init__(self, workers: Workers, owner: Hashable) -> None:
        self.workers, self.owner = workers, owner

    async def act(self, turn: Turn) -> TurnOutcome:
        return await self.workers.act(turn, self.owner)
