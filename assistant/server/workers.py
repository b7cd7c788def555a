"""The model workers every session shares: a recognizer per spoken language (English; Chinese when configured)
and one text pipeline, each behind a dynamic batcher on its own thread (on a GPU each also has its own CUDA
stream, so recognition and understanding overlap), and the load policy that decides when a partial transcript
may use the recognizer.

Sessions never touch a model or the store directly: they await `transcribe`, `act` and `run_nlu`, naming
their client (a token's identity, else an address) as the `owner` of the request: the batchers serve owners
round-robin and refuse work past their queue bound (`Overloaded`). The workers keep counts (calls in flight, per
owner too, speakers mid-utterance), never references to sessions.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any, Protocol, TypeVar

from assistant.batching import BatchPolicy
from assistant.config import SpeechSettings
from assistant.errors import ModelServerUnavailable
from assistant.language.profile import Language
from assistant.language.registry import DEFAULT, Auto, Spoken, get
from assistant.server.batcher import DynamicBatcher, ItemFailed, Overloaded
from assistant.server.languages import LanguageBuilds, LanguageState
from assistant.server.metrics import ServerMetrics
from assistant.server.speech import SpeechWorker
from assistant.text_pipeline import TextPipeline, Turn, TurnOutcome
from assistant.turn.models import WORDS, turn_model
from assistant.turn.policy import TurnSettings
from engines.base import BackendInfo

__all__ = ["Recognizer", "LanguageIdentifier", "TurnDetector", "LoadPolicy", "Workers", "FINAL", "READ", "PARTIAL"]

T = TypeVar("T")

# ASR priorities: a batch holds one kind. Finals first; then reads at a pause (a turn's end waits on them);
# then partials (only a display).
FINAL, READ, PARTIAL = 0, 1, 2
_ASR_WORK = {FINAL: "asr_final", READ: "asr_read", PARTIAL: "asr_partial"}


class Recognizer(Protocol):
    model_name: str
    device: str
    compute_type: str

    def transcribe_batch(self, pcms: list[bytes], priority: int = 0) -> list[str]:
        """Texts in order; `priority` (FINAL, READ, PARTIAL) travels to a model server, which serves urgent
        work first."""
        ...


class LanguageIdentifier(Protocol):
    """A multilingual recognizer that also says which language each audio speaks (sessions that start with
    "language": "auto"), and hears it itself where that is its own language (WhisperRecognizer)."""

    language: str

    def identify_batch(self, pcms: list[bytes], choices: Sequence[str], priority: int = 0
                       ) -> list[tuple[str, str | None]]:
        ...


class TurnDetector(Protocol):
    """An acoustic end-of-turn model ([turn] model = "smart-turn"): the probability that the speaker is done."""

    name: str

    def probabilities(self, pcms: list[bytes]) -> list[float]: ...


@dataclass(frozen=True)
class LoadPolicy:
    asr: BatchPolicy = BatchPolicy(max_batch=1)
    nlu: BatchPolicy = BatchPolicy(max_batch=64)
    # While others speak, a partial may start only if decodes take at most this long: a partial holds the one
    # recognizer, and a final due when another speaker stops would wait behind it (GPU decodes fit, CPU ones not).
    partial_budget_ms: int = 100
    # Recognition calls in flight at once: 1 for a model in this process; more for a model server, which merges
    # the calls of every gateway into its own batches (a partial's call then never holds up a final's).
    asr_calls: int = 1
    # While the model server is unavailable, a final's decode and understanding are retried this long.
    retry_s: float = 0.0


class Workers:
    def __init__(self, recognizer: Recognizer, pipeline: TextPipeline, policy: LoadPolicy | None = None,
                 metrics: ServerMetrics | None = None, turn: TurnSettings | None = None,
                 turn_detector: TurnDetector | None = None, others: Mapping[Language, Recognizer] | None = None,
                 identifier: LanguageIdentifier | None = None) -> None:
        """`recognizer` hears English; `others` hear other languages ({CHINESE: a multilingual Whisper set to
        Chinese}), each behind its own batcher: a batch is decoded with one language's prompt. `identifier`
        (the multilingual one, when there are other languages) tells the languages apart for "auto" sessions."""
        self.recognizer = recognizer
        self.pipeline = pipeline
        self.policy = policy or LoadPolicy()
        self.metrics = metrics or ServerMetrics()
        self.turn = turn or TurnSettings()
        self.turn_model = turn_model(self.turn)  # what each session's turn taker asks at a pause
        self.turn_detector = turn_detector
        # calls queued or running per worker ("asr", "nlu", and "asr_final", the finals among the asr ones)
        self.in_flight = {"asr": 0, "nlu": 0, "asr_final": 0, "turn": 0}
        self.decode_s = 0.0  # a moving average of recent decode times
        self.speakers = 0  # sessions whose speaker is mid-utterance
        self.speech: SpeechWorker | None = None  # spoken replies (assistant/server/speech.py); None: shown only
        self.speech_settings = SpeechSettings()
        self._asr_owners: Counter[Hashable] = Counter()  # recognition calls queued or running, per owner
        backend = pipeline.backend
        self._models = {
            "asr_model": recognizer.model_name, "asr_device": f"{recognizer.device} {recognizer.compute_type}",
            "nlu_backend": backend.name, "nlu_precision": backend.precision, "nlu_device": backend.device,
            "asr_max_batch": str(self.policy.asr.max_batch), "nlu_max_batch": str(self.policy.nlu.max_batch),
        }
        self.metrics.models.info(self._models)
        self.metrics.turn.info({k: str(v) for k, v in asdict(self.turn).items()})
        self._asr_by_language = {DEFAULT: self._asr_batcher("asr", recognizer)}
        self._identify: DynamicBatcher[tuple[bytes, int], tuple[str, str | None]] | None = None
        for language, other in (others or {}).items():
            self.add_language(language, other, identifier)
        self.builds = LanguageBuilds()  # languages still being made ready (assistant/server/languages.py)
        self.builds.listeners.append(self._language_changed)
        self.metrics.language_ready.labels(DEFAULT.code).set(1)
        self._nlu: DynamicBatcher[Turn | Callable[[], Any], Any] = DynamicBatcher(
            "nlu", self._nlu_batch, self.policy.nlu, lambda _, size, took: self._batch_done("nlu", size, took))
        self._turn: DynamicBatcher[bytes, float] | None = None
        if turn_detector is not None:  # its own thread: about 120 ms a call on a 2-core CPU
            self._turn = DynamicBatcher("turn", turn_detector.probabilities, BatchPolicy(max_batch=8),
                                        lambda _, size, took: self._batch_done("turn", size, took))

    def add_language(self, language: Language, recognizer: Recognizer, identifier: LanguageIdentifier | None
                     ) -> None:
        """Hear `language` from now on (a language made ready while serving): its own batcher, and "auto"
        sessions once an identifier tells the languages apart. Called on any thread: each dict is replaced
        whole, never changed in place, so a session reading them sees the old set or the new one."""
        self._asr_by_language = {**self._asr_by_language,
                                 language: self._asr_batcher(f"asr_{language.code}", recognizer)}
        if identifier is not None:
            choices = tuple(each.code for each in self._asr_by_language)  # the identifier speaks Whisper's codes
            replaced, self._identify = self._identify, self._identify_batcher(identifier, choices)
            if replaced is not None:
                replaced.close()

    def note_models(self, language: Language, recognizer: Recognizer | None, backend: BackendInfo) -> None:
        """A language's models in /metrics once it is served ("zh_nlu_backend", ...)."""
        code = language.code
        more = {f"{code}_nlu_backend": backend.name, f"{code}_nlu_precision": backend.precision,
                f"{code}_nlu_device": backend.device}
        if recognizer is not None:
            more[f"{code}_asr_model"] = recognizer.model_name
        self._models = {**self._models, **more}
        self.metrics.models.info(self._models)

    def _language_changed(self, state: LanguageState) -> None:
        self.metrics.language_ready.labels(state.language.code).set(1 if state.state == "ready" else 0)
        self.metrics.language_build.clear()
        for each in self.builds.all():
            self.metrics.language_build.labels(each.language.code, each.state).set(each.done)

    def unavailable(self, language: Spoken) -> str:
        """Why sessions in `language` (AUTO included) are refused: still being built, or not heard here."""
        pending = [state for state in self.builds.pending()
                   if isinstance(language, Auto) or state.language is language]
        if pending:
            served = " and ".join(each.name for each in self.languages)
            return "; ".join(state.describe() for state in pending) + f". {served} is served meanwhile; try again later"
        return f"this server hears {', '.join(each.code for each in self.languages)} only; not {language.code!r}" + (
            " (it tells languages apart where it hears two)" if isinstance(language, Auto) else "")

    def _asr_batcher(self, name: str, recognizer: Recognizer) -> DynamicBatcher[tuple[bytes, int], str]:
        def decode(items: list[tuple[bytes, int]]) -> list[str]:
            # a batch holds one priority (the batcher's rule); the recognizer hears it (a model server uses it)
            return recognizer.transcribe_batch([audio for audio, _ in items], priority=items[0][1])

        return DynamicBatcher(name, decode, self.policy.asr,
                              lambda priority, size, took: self._batch_done(_ASR_WORK[priority], size, took),
                              self.policy.asr_calls)

    def _identify_batcher(self, identifier: LanguageIdentifier, choices: tuple[str, ...]
                          ) -> DynamicBatcher[tuple[bytes, int], tuple[str, str | None]]:
        def identify(items: list[tuple[bytes, int]]) -> list[tuple[str, str | None]]:
            return identifier.identify_batch([audio for audio, _ in items], choices, priority=items[0][1])

        # its own batcher and thread: the identifier's own language's batcher may be decoding meanwhile
        return DynamicBatcher(f"asr_identify_{identifier.language}", identify, self.policy.asr,
                              lambda priority, size, took: self._batch_done(_ASR_WORK[priority], size, took),
                              self.policy.asr_calls)

    @property
    def languages(self) -> tuple[Language, ...]:
        """The spoken languages these workers hear (AUTO is not one: see `hears`)."""
        return tuple(self._asr_by_language)

    def hears(self, language: Spoken) -> bool:
        """A language these workers hear; AUTO when they can also tell them apart."""
        if isinstance(language, Auto):
            return self._identify is not None
        return language in self._asr_by_language

    async def hear(self, audio: bytes, *, final: bool, read: bool = False, owner: Hashable = None,
                   language: Spoken = DEFAULT) -> tuple[str, Language]:
        """(text, language): `transcribe` in a session's language, or with AUTO in the language identified in
        this audio (Chinese is heard in the same pass; English then by its own recognizer)."""
        if not isinstance(language, Auto):
            return await self.transcribe(audio, final=final, read=read, owner=owner, language=language), language
        if self._identify is None:
            raise ValueError("these workers cannot tell languages apart (one language, or no identifier)")
        priority = FINAL if final else READ if read else PARTIAL
        with self._recognizing(owner, final):
            code, text = await self._run("asr", self._identify((audio, priority), priority, owner))
        heard = get(code)
        if text is None:
            text = await self.transcribe(audio, final=final, read=read, owner=owner, language=heard)
        return text, heard

    async def transcribe(self, audio: bytes, *, final: bool, read: bool = False, owner: Hashable = None,
                         language: Language = DEFAULT) -> str:
        """One decode, batched with others of its kind: finals, then reads at a pause (`read`), then partials;
        within a kind, owners take turns. Raises Overloaded when the recognizer's queue is full."""
        priority = FINAL if final else READ if read else PARTIAL
        batcher = self._asr_by_language[language]
        with self._recognizing(owner, final):
            text: str = await self._run("asr", batcher((audio, priority), priority, owner))
        return text

    @contextmanager
    def _recognizing(self, owner: Hashable, final: bool) -> Iterator[None]:
        """Counts a recognition call while it is queued or running: finals (partials give way to them) and each
        owner's (a read waits for one other owner's decode at most: `read_refused`)."""
        self.in_flight["asr_final"] += final
        self._asr_owners[owner] += 1
        try:
            yield
        finally:
            self.in_flight["asr_final"] -= final
            self._asr_owners[owner] -= 1
            if self._asr_owners[owner] <= 0:
                del self._asr_owners[owner]

    async def turn_probability(self, audio: bytes, owner: Hashable = None) -> float:
        """The acoustic turn model's probability that the speaker is done (raises if none is configured)."""
        if self._turn is None:
            raise RuntimeError("no turn model is configured ([turn] model)")
        probability: float = await self._run("turn", self._turn(audio, 0, owner))
        return probability

    async def act(self, turn: Turn, owner: Hashable = None) -> TurnOutcome:
        """Understand and act on one utterance, batched with other sessions' utterances in one model call."""
        outcome: TurnOutcome = await self._run("nlu", self._nlu(turn, 0, owner))
        return outcome

    async def run_nlu(self, call: Callable[[], T]) -> T:
        """Other work for the NLU worker, which owns the booking store (one thread touches SQLite)."""
        result: T = await self._run("nlu", self._nlu(call))
        return result

    async def _run(self, worker: str, call: Awaitable[Any]) -> Any:
        """`call` submits when awaited: a refused submit (Overloaded) is counted and raised, never queued."""
        self.in_flight[worker] += 1
        self.metrics.queue_depth.labels(worker).set(self.in_flight[worker])
        try:
            return await call
        except Overloaded:
            self.metrics.refused.labels(f"{worker}_queue_full").inc()
            raise
        finally:
            self.in_flight[worker] -= 1
            self.metrics.queue_depth.labels(worker).set(self.in_flight[worker])

    async def retrying(self, call: Callable[[], Awaitable[T]], waiting: Callable[[float], Awaitable[None]]) -> T:
        """`call()`, made again while the model server is unavailable (restarting, loading), for up to
        [model_server] retry_s; `waiting(seconds_left)` is awaited once, at the first failure, so the client hears
        why its answer is late. Raises ModelServerUnavailable when the time is up."""
        deadline = time.monotonic() + self.policy.retry_s
        pause, told = 0.25, False
        while True:
            try:
                return await call()
            except ModelServerUnavailable:
                left = deadline - time.monotonic()
                self.metrics.refused.labels("model_unavailable").inc()
                if left <= 0:
                    raise
                if not told:
                    told = True
                    await waiting(left)
                await asyncio.sleep(min(pause, left))
                pause = min(pause * 2, 2.0)

    def _nlu_batch(self, items: list[Turn | Callable[[], Any]]) -> list[Any]:
        """Every turn of the batch in one model call, then the other work; a failure stays with its item."""
        out: dict[int, Any] = {}
        turns = [(i, item) for i, item in enumerate(items) if isinstance(item, Turn)]
        if turns:
            outcomes = self.pipeline.act_many([t for _, t in turns], commit=True)  # one model call
            out.update((i, outcome) for (i, _), outcome in zip(turns, outcomes, strict=True))
        for i, item in enumerate(items):
            if not isinstance(item, Turn):
                try:
                    out[i] = item()
                except Exception as exc:  # noqa: BLE001 - handed to this item's waiter, not the batch
                    out[i] = ItemFailed(exc)
        return [out[i] for i in range(len(items))]

    def _batch_done(self, work: str, size: int, took: float) -> None:
        # per item, so that the compute counters still add up to the worker's busy time
        for _ in range(size):
            self.metrics.compute.labels(work).observe(took / size)
        self.metrics.batch_size.labels(work).observe(size)
        if work.startswith("asr"):
            self.decode_s = took if not self.decode_s else 0.8 * self.decode_s + 0.2 * took

    def partial_refused(self, *, caller_speaking: bool = True) -> str | None:
        """Why a partial decode must not start now, or None: partials are shed first under load.
        On a CPU (batches of one) any decode in flight refuses it; on a GPU a partial may join others while no
        final is due, since a batch of partials costs about what one does. Where decodes are slow (a CPU) and
        turns are read at pauses, the reads show the command forming and partials give way to them."""
        if self.in_flight["asr_final"] or self.in_flight["asr"] >= self.policy.asr.max_batch:
            return "busy"  # a final is waiting or running (it goes first), or the recognizer is full
        slow = self.decode_s * 1e3 > self.policy.partial_budget_ms
        if slow and self.turn_model.listens == WORDS:
            return "reads_first"  # a partial running when the speaker pauses would delay the read there
        if slow and self.speakers - caller_speaking > 0:
            return "others_speaking"
        return None

    def read_refused(self, owner: Hashable = None) -> str | None:
        """Why a read at a pause by `owner` must not start now, or None. Where decodes are slow (a CPU: a whole
        second on 2 cores) a read waiting behind other decodes would hold the turn longer than the plain hangover,
        and every read is one more decode for the one recognizer: a read starts only when the recognizer has none
        of its owner's work, and that of one other owner at most (owners are served in turn, so it then waits for
        one decode at most: a client flooding the recognizer costs the others about one call, not their reads)."""
        if not self.in_flight["asr"] or self.decode_s * 1e3 <= self.policy.partial_budget_ms:
            return None
        if self._asr_owners[owner] or len(self._asr_owners) > 1:
            return "busy"
        return None

    def close(self) -> None:
        for batcher in self._asr_by_language.values():
            batcher.close()
        if self._identify is not None:
            self._identify.close()
        self._nlu.close()
        if self._turn is not None:
            self._turn.close()
        if self.speech is not None:
            self.speech.close()
