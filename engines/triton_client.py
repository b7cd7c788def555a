"""The models on a Triton Inference Server, called over gRPC: the NLU backend of a gateway process.

`assistant serve --models triton://HOST:PORT` runs no model itself: it keeps its connections' state and sends
each batch its own batcher formed to the model server (`assistant model-server`, or NVIDIA's Triton container
serving `assistant export-triton`'s repository), whose dynamic batcher merges the batches of every gateway.

Triton batches only requests whose shapes agree, so token rows are padded to a few fixed lengths
(SEQ_BUCKETS): a 9-token and a 14-token request both travel as 16 and can share one model call. Padding is
masked, so a row's logits do not depend on it. Failures are sorted into two kinds the caller acts on:
`ModelServerUnavailable` (down, restarting, model not loaded: retry) and `Overloaded` (its queue is full: shed).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import numpy as np
from numpy.typing import NDArray

from assistant.errors import ConfigError, ModelServerUnavailable, Overloaded
from engines.base import INPUT_NAMES, OUTPUT_NAMES, BackendInfo, Logits
from engines.triton_pool import ModelServer

__all__ = ["SEQ_BUCKETS", "NLU_MODEL", "TritonModels", "TritonNLUBackend", "parse_models_url", "parse_models_urls",
           "models_url", "seq_bucket"]

NLU_MODEL = "nlu"
SEQ_BUCKETS = (16, 32, 64, 128, 256, 512)
# gRPC codes that mean "not now" rather than "never": the server is down, restarting or still loading
_RETRYABLE = ("StatusCode.UNAVAILABLE", "StatusCode.DEADLINE_EXCEEDED", "StatusCode.NOT_FOUND",
              "StatusCode.CANCELLED")
_QUEUE_FULL = "Exceeds maximum queue size"  # Triton's words when a model's max_queue_size is reached


def parse_models_url(url: str) -> str:
    """triton://HOST:PORT -> HOST:PORT (Triton's gRPC port, 8001 by default), refused clearly otherwise."""
    parts = urlsplit(url)
    if parts.scheme != "triton" or not parts.hostname or parts.path not in ("", "/"):
        raise ConfigError(f"--models takes triton://HOST:PORT (the model server's gRPC port), not {url!r}")
    try:
        port = parts.port or 8001
    except ValueError as exc:
        raise ConfigError(f"--models {url!r}: {exc}") from None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{host}:{port}"


def parse_models_urls(text: str) -> list[str]:
    """`--models triton://A:8001,triton://B:8011` (one model server per GPU) -> their HOST:PORTs, in order."""
    addresses = [parse_models_url(part.strip()) for part in text.split(",") if part.strip()]
    if not addresses:
        raise ConfigError("--models: name at least one model server, triton://HOST:PORT")
    repeated = sorted({a for a in addresses if addresses.count(a) > 1})
    if repeated:
        raise ConfigError(f"--models names {', '.join(repeated)} more than once")
    return addresses


def models_url(address: str) -> str:
    """A server's or a pool's address ("h:8001,h:8011") written as --models takes it."""
    return ",".join(f"triton://{part}" for part in address.split(","))


def seq_bucket(length: int) -> int:
    """The padded length a row of `length` tokens travels at."""
    for bucket in SEQ_BUCKETS:
        if length <= bucket:
            return bucket
    raise ValueError(f"{length} tokens are more than the longest bucket ({SEQ_BUCKETS[-1]})")


@dataclass(frozen=True)
class ModelShape:
    max_batch: int  # the model's max_batch_size: a request carries at most this many rows


class TritonModels:
    """One model server: a gRPC client per calling thread (each batcher thread has its own), and infer() with
    Triton's failures mapped to what the caller does about them."""

    def __init__(self, address: str, timeout_s: float = 30.0) -> None:
        import tritonclient.grpc  # the `triton` extra; imported only by a gateway

        self.address = address
        self.timeout_s = timeout_s
        self._grpc = tritonclient.grpc
        self._local = threading.local()
        self._shapes: dict[str, ModelShape] = {}

    @property
    def _client(self) -> Any:
        client = getattr(self._local, "client", None)
        if client is None:
            client = self._local.client = self._grpc.InferenceServerClient(self.address)
        return client

    def shape(self, model: str) -> ModelShape:
        """The model's batch limit, asked once (raises ModelServerUnavailable while it cannot be asked)."""
        if model not in self._shapes:
            config = self._call(lambda: self._client.get_model_config(model, client_timeout=self.timeout_s))
            self._shapes[model] = ModelShape(max(1, int(config.config.max_batch_size)))
        return self._shapes[model]

    def ready(self, model: str) -> bool:
        try:
            return bool(self._client.is_model_ready(model, client_timeout=5.0))
        except Exception:  # noqa: BLE001 - any failure to answer means "not ready"
            return False

    def infer(self, model: str, inputs: dict[str, NDArray[Any]], outputs: Sequence[str],
              priority: int = 0) -> dict[str, NDArray[Any]]:
        """One request (rows already batched by the caller). `priority`: Triton's, 1 the most urgent, 0 the
        model's default."""
        grpc = self._grpc
        requested = []
        for name, array in inputs.items():
            dtype = "BYTES" if array.dtype == np.object_ else grpc.np_to_triton_dtype(array.dtype)
            tensor = grpc.InferInput(name, list(array.shape), dtype)
            tensor.set_data_from_numpy(array)
            requested.append(tensor)
        wanted = [grpc.InferRequestedOutput(name) for name in outputs]
        result = self._call(lambda: self._client.infer(model, requested, outputs=wanted, priority=priority,
                                                       client_timeout=self.timeout_s))
        return {name: result.as_numpy(name) for name in outputs}

    def _call(self, call: Any) -> Any:
        from tritonclient.utils import InferenceServerException

        try:
            return call()
        except InferenceServerException as exc:
            message = str(exc.message() or exc)
            if _QUEUE_FULL in message:
                raise Overloaded(f"the model server's queue is full: {message}") from None
            if str(exc.status()) in _RETRYABLE or "failed to connect" in message.lower() \
                    or "unavailable" in message.lower() or "is not ready" in message or "unknown model" in message:
                raise ModelServerUnavailable(f"the model server at {self.address} is unavailable: {message}") \
                    from None
            raise


class TritonNLUBackend:
    """engines.base.NLUBackend on a model server's `nlu` model (ONNX Runtime, TensorRT or CUDA graphs there)."""

    def __init__(self, models: ModelServer, num_intents: int, num_slot_labels: int) -> None:
        self._models = models
        self._num_intents, self._num_slot_labels = num_intents, num_slot_labels

    def run(self, input_ids: NDArray[np.int64], attention_mask: NDArray[np.int64]) -> Logits:
        batch, length = input_ids.shape
        bucket = seq_bucket(length)
        ids = np.zeros((batch, bucket), dtype=np.int64)
        mask = np.zeros((batch, bucket), dtype=np.int64)
        ids[:, :length], mask[:, :length] = input_ids, attention_mask
        step = self._models.shape(NLU_MODEL).max_batch
        intents, slots = [], []
        for start in range(0, batch, step):  # a request carries at most the model's max_batch_size rows
            out = self._models.infer(NLU_MODEL, {INPUT_NAMES[0]: ids[start:start + step],
                                                 INPUT_NAMES[1]: mask[start:start + step]}, OUTPUT_NAMES)
            intents.append(out[OUTPUT_NAMES[0]])
            slots.append(out[OUTPUT_NAMES[1]][:, :length])
        intent, slot = np.concatenate(intents).astype(np.float32), np.concatenate(slots).astype(np.float32)
        if intent.shape[1] != self._num_intents or slot.shape[2] != self._num_slot_labels:
            raise RuntimeError(
                f"the model server's NLU model has {intent.shape[1]} intents and {slot.shape[2]} slot labels, this "
                f"gateway's {self._num_intents} and {self._num_slot_labels}: serve the same model on both")
        return intent, slot

    def info(self) -> BackendInfo:
        return BackendInfo("triton", models_url(self._models.address), "remote", NLU_MODEL)

    def close(self) -> None:
        pass
