"""The Triton process: `python -m assistant.model_server.triton_app SPEC.json`, started by `assistant model-server`.

It runs in the model server's own environment (nvidia-pytriton, numpy<2) and imports only the speech and NLU
runtimes of the app. nvidia-pytriton starts Triton Inference Server 2.51 from its wheel and hands it two Python
models:

    asr  pcm BYTES [1], priority INT32 [1] -> text, hypotheses BYTES [1]    dynamic batching, 3 priority levels
    nlu  input_ids, attention_mask INT64 [-1] -> intent_logits FP32 [I], slot_logits FP32 [-1, S]

Triton's dynamic batcher merges the requests of every gateway (each already a batch of its own) up to the
model's max batch, waiting at most max_queue_delay_microseconds for company, most urgent priority first
(finals, then reads, then partials), and refuses requests past max_queue_size (the gateways shed or report
`overloaded`). Each model's callable is the same code the single-process server calls
(WhisperRecognizer.transcribe_batch, an engines backend), so the text and the logits a request gets are those of
the single-process server.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

from assistant.asr.remote import (
    ASR_MODEL,
    HYPOTHESES_OUTPUT,
    PCM_INPUT,
    PRIORITY_INPUT,
    PRIORITY_LEVELS,
    TEXT_OUTPUT,
    reading_rows,
    transcribe_rows,
)
from assistant.asr.whisper import WhisperRecognizer
from assistant.batching import BatchPolicy
from assistant.model_server.spec import ModelServerSpec
from assistant.nlu.model_folder import load_model
from engines.base import INPUT_NAMES, OUTPUT_NAMES, BackendOptions, NLUBackend, ShapeProfile
from engines.registry import create_backend, create_best_backend
from engines.triton_client import NLU_MODEL

__all__ = ["main"]


def _say(message: str) -> None:
    print(f"[model-server] {message}", file=sys.stderr, flush=True)


def _recognizer(spec: ModelServerSpec) -> WhisperRecognizer:
    recognizer = WhisperRecognizer(Path(), spec.asr_model, spec.asr_device, spec.asr_compute_type,
                                   spec.asr_beam_size, spec.asr_hotwords, model_dir=Path(spec.asr_model_dir),
                                   hypotheses=spec.asr_hypotheses)
    recognizer.warm_up()
    return recognizer


def _nlu_backend(spec: ModelServerSpec) -> tuple[NLUBackend, int, int]:
    model = load_model(Path(spec.nlu_folder))
    batch, seq = spec.profile_batch, spec.profile_seq
    options = BackendOptions(spec.nlu_precision, spec.nlu_threads,
                             ShapeProfile((batch[0], batch[1], batch[2]), (seq[0], seq[1], seq[2])))
    if spec.nlu_backend == "auto":
        backend, _ = create_best_backend(model.files, options)
    else:
        backend = create_backend(spec.nlu_backend, model.files, options)
    return backend, model.files.num_intents, model.files.num_slot_labels


def _asr_callable(recognizer: WhisperRecognizer) -> Any:
    from pytriton.decorators import batch

    @batch  # type: ignore[untyped-decorator]
    def infer(pcm: np.ndarray, priority: np.ndarray) -> dict[str, np.ndarray]:
        texts = transcribe_rows(recognizer.transcribe_batch, [bytes(row[0]) for row in pcm],
                                [int(row[0]) for row in priority])
        text_rows, hypotheses_rows = reading_rows(texts)
        return {TEXT_OUTPUT: text_rows, HYPOTHESES_OUTPUT: hypotheses_rows}

    return infer


def _nlu_callable(backend: NLUBackend) -> Any:
    from pytriton.decorators import batch

    @batch  # type: ignore[untyped-decorator]
    def infer(input_ids: np.ndarray, attention_mask: np.ndarray) -> dict[str, np.ndarray]:
        intent, slots = backend.run(input_ids.astype(np.int64), attention_mask.astype(np.int64))
        return {OUTPUT_NAMES[0]: intent, OUTPUT_NAMES[1]: slots}

    return infer


def _model_config(batching: BatchPolicy, priorities: int) -> Any:
    from pytriton.model_config import DynamicBatcher, ModelConfig, QueuePolicy

    queue = QueuePolicy(max_queue_size=batching.max_queue)
    policies = {level: queue for level in range(1, priorities + 1)} if priorities else None
    return ModelConfig(max_batch_size=batching.max_batch, batcher=DynamicBatcher(
        max_queue_delay_microseconds=batching.max_delay_us, priority_levels=priorities,
        default_priority_level=priorities, default_queue_policy=queue, priority_queue_policy=policies))


def _stop_on_sigterm() -> None:
    """pytriton stops Triton cleanly only on KeyboardInterrupt: a supervisor's SIGTERM becomes one."""
    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def main(argv: list[str]) -> int:
    from pytriton.model_config import Tensor
    from pytriton.triton import Triton, TritonConfig

    spec = ModelServerSpec.read(Path(argv[0]))
    _stop_on_sigterm()
    started = time.perf_counter()
    recognizers = [_recognizer(spec) for _ in range(spec.asr_instances)]
    backend, intents, slots = _nlu_backend(spec)
    _say(f"asr: faster-whisper {spec.asr_model} ({spec.asr_device}, {spec.asr_compute_type}) x{spec.asr_instances}; "
         f"nlu: {backend.info().describe()}")
    config = TritonConfig(http_address=spec.address, http_port=spec.http_port, grpc_address=spec.address,
                          grpc_port=spec.grpc_port, metrics_address=spec.address, metrics_port=spec.metrics_port,
                          exit_timeout_secs=5)
    try:
        with Triton(config=config) as triton:
            triton.bind(model_name=ASR_MODEL, infer_func=[_asr_callable(r) for r in recognizers],
                        inputs=[Tensor(name=PCM_INPUT, dtype=np.bytes_, shape=(1,)),
                                Tensor(name=PRIORITY_INPUT, dtype=np.int32, shape=(1,))],
                        outputs=[Tensor(name=TEXT_OUTPUT, dtype=np.bytes_, shape=(1,)),
                                 Tensor(name=HYPOTHESES_OUTPUT, dtype=np.bytes_, shape=(1,))],
                        config=_model_config(spec.asr, PRIORITY_LEVELS), strict=True)
            triton.bind(model_name=NLU_MODEL, infer_func=_nlu_callable(backend),
                        inputs=[Tensor(name=INPUT_NAMES[0], dtype=np.int64, shape=(-1,)),
                                Tensor(name=INPUT_NAMES[1], dtype=np.int64, shape=(-1,))],
                        outputs=[Tensor(name=OUTPUT_NAMES[0], dtype=np.float32, shape=(intents,)),
                                 Tensor(name=OUTPUT_NAMES[1], dtype=np.float32, shape=(-1, slots))],
                        config=_model_config(spec.nlu, 0), strict=True)
            _say(f"batching: asr up to {spec.asr.max_batch} (wait {spec.asr.max_delay_us} us, queue "
                 f"{spec.asr.max_queue}), nlu up to {spec.nlu.max_batch} (wait {spec.nlu.max_delay_us} us, queue "
                 f"{spec.nlu.max_queue})")
            _say(f"ready in {time.perf_counter() - started:.1f} s: grpc {spec.address}:{spec.grpc_port}, "
                 f"http {spec.http_port}, metrics http://{spec.address}:{spec.metrics_port}/metrics")
            triton.serve()
    except KeyboardInterrupt:
        _say("stopped")
    finally:
        backend.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
