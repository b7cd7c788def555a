"""The model workers every session shares: one recognizer and one text pipeline, each behind a dynamic batcher
on its own thread (on a GPU each also has its own CUDA stream, so recognition and understanding overlap), and
the load policy that decides when a partial transcript may use the recognizer.

Sessions never touch a model or the store directly: they await `transcribe`, `act` and `run_nlu`. The workers
keep counts (calls in flight, speakers mid-utterance), never references to sessions.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from assistant.server.batcher import BatchPolicy, DynamicBatcher, ItemFailed
from assistant.server.metrics import ServerMetrics
from assistant.text_pipeline import TextPipeline, Turn, TurnOutcome

__all__ = ["Recognizer", "LoadPolicy", "Workers", "FINAL", "PARTIAL"]

T = TypeVar("T")

FINAL, PARTIAL = 0, 1  # ASR priorities: a batch holds one kind, finals first


class Recognizer(Protocol):
    model_name: str
    device: str
    compute_type: str

    def transcribe_batch(self, pcms: list[bytes]) -> list[str]: ...


@dataclass(frozen=True)
class LoadPolicy:
    asr: BatchPolicy = BatchPolicy(max_batch=1)
    nlu: BatchPolicy = BatchPolicy(max_batch=64)
    # While others speak, a partial may start only if decodes take at most this long: a partial holds the one
    # recognizer, and a final due when another speaker stops would wait behind it (GPU decodes fit, CPU ones not).
    partial_budget_ms: int = 100


class Workers:
    def __init__(self, recognizer: Recognizer, pipeline: TextPipeline, policy: LoadPolicy | None = None,
                 metrics: ServerMetrics | None = None) -> None:
        self.recognizer = recognizer
        self.pipeline = pipeline
        self.policy = policy or LoadPolicy()
        self.metrics = metrics or ServerMetrics()
        # calls queued or running per worker ("asr", "nlu", and "asr_final", the finals among the asr ones)
        self.in_flight = {"asr": 0, "nlu": 0, "asr_final": 0}
        self.decode_s = 0.0  # a moving average of recent decode times
        self.speakers = 0  # sessions whose speaker is mid-utterance
        backend = pipeline.backend
        self.metrics.models.info({
            "asr_model": recognizer.model_name, "asr_device": f"{recognizer.device} {recognizer.compute_type}",
            "nlu_backend": backend.name, "nlu_precision": backend.precision, "nlu_device": backend.device,
            "asr_max_batch": str(self.policy.asr.max_batch), "nlu_max_batch": str(self.policy.nlu.max_batch),
        })
        self._asr: DynamicBatcher[bytes, str] = DynamicBatcher(
            "asr", recognizer.transcribe_batch, self.policy.asr,
            lambda priority, size, took: self._batch_done("asr_final" if priority == FINAL else "asr_partial",
                                                          size, took))
        self._nlu: DynamicBatcher[Turn | Callable[[], Any], Any] = DynamicBatcher(
            "nlu", self._nlu_batch, self.policy.nlu, lambda _, size, took: self._batch_done("nlu", size, took))

    async def transcribe(self, audio: bytes, *, final: bool) -> str:
        """One decode, batched with others of its kind (finals before partials)."""
        self.in_flight["asr_final"] += final
        try:
            text: str = await self._run("asr", self._asr(audio, FINAL if final else PARTIAL))
        finally:
            self.in_flight["asr_final"] -= final
        return text

    async def act(self, turn: Turn) -> TurnOutcome:
        """Understand and act on one utterance, batched with other sessions' utterances in one model call."""
        outcome: TurnOutcome = await self._run("nlu", self._nlu(turn))
        return outcome

    async def run_nlu(self, call: Callable[[], T]) -> T:
        """Other work for the NLU worker, which owns the booking store (one thread touches SQLite)."""
        result: T = await self._run("nlu", self._nlu(call))
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
        final is due, since a batch of partials costs about what one does."""
        if self.in_flight["asr_final"] or self.in_flight["asr"] >= self.policy.asr.max_batch:
            return "busy"  # a final is waiting or running (it goes first), or the recognizer is full
        others = self.speakers - caller_speaking
        if self.decode_s * 1e3 > self.policy.partial_budget_ms and others > 0:
            return "others_speaking"
        return None

    def close(self) -> None:
        self._asr.close()
        self._nlu.close()
