"""PyTorch on CUDA: the joint model in FP16, captured as one CUDA graph per (batch, sequence) bucket.

Eager PyTorch on a GPU is bound by kernel launches (about 4 ms for a MiniLM call whatever its size); a graph
replays all of them as one launch. A request is padded up to its bucket (powers of two for batch, and 8, 16,
32, 64, 128 tokens), copied into that bucket's static input buffers from pinned memory, replayed on this
backend's own stream, and its logits copied back into pinned memory, with one synchronization per call. All
graphs are captured when the backend starts, so no request pays for a capture. For GPUs without TensorRT; also
the GPU numbers measured on the development machine.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import NDArray
from safetensors.torch import load_file

from engines.base import BackendInfo, BackendOptions, JointModelFiles, Logits
from engines.torch_joint import JointIntentSlotModel

__all__ = ["TorchCudaGraphBackend", "buckets"]

_DTYPES = {"auto": torch.float16, "fp16": torch.float16, "fp32": torch.float32}


def buckets(high: int, first: int = 1) -> list[int]:
    """Powers of two from `first` up to `high`, the last one exactly high (a max of 100 gives ..., 64, 100)."""
    sizes, size = [], first
    while size < high:
        sizes.append(size)
        size *= 2
    return [*sizes, high]


@dataclass
class _Graph:
    graph: torch.cuda.CUDAGraph
    ids: torch.Tensor  # static device inputs (batch, seq)
    mask: torch.Tensor
    ids_host: torch.Tensor  # pinned staging of the same shape
    mask_host: torch.Tensor
    intent: torch.Tensor  # static device outputs, fp32
    slots: torch.Tensor
    intent_host: torch.Tensor  # pinned
    slots_host: torch.Tensor

    def __post_init__(self) -> None:
        # numpy views of the pinned buffers, made once: a call only writes and reads them
        self.ids_np, self.mask_np = self.ids_host.numpy(), self.mask_host.numpy()
        self.intent_np, self.slots_np = self.intent_host.numpy(), self.slots_host.numpy()


class TorchCudaGraphBackend:
    def __init__(self, files: JointModelFiles, options: BackendOptions) -> None:
        if options.precision not in _DTYPES:
            raise ValueError(f"torch-cuda runs fp16 or fp32, not {options.precision!r}")
        if not torch.cuda.is_available():
            raise FileNotFoundError("no CUDA device is visible to PyTorch")
        self._dtype = _DTYPES[options.precision]
        self._device = torch.device("cuda", torch.cuda.current_device())
        model = JointIntentSlotModel.from_config(files.encoder_config, files.num_intents, files.num_slot_labels)
        model.load_state_dict(load_file(str(files.torch_weights)))
        self._model = model.eval().to(self._device, self._dtype)
        self._name = files.torch_weights.name
        self._stream = torch.cuda.Stream(self._device)  # type: ignore[no-untyped-call]
        self._pool = torch.cuda.graph_pool_handle()  # one memory pool shared by every bucket's graph
        shapes = options.shapes
        self._batches = buckets(shapes.batch[2])
        self._seqs = buckets(shapes.seq[2], first=min(8, shapes.seq[2]))
        self._graphs = {(b, s): self._capture(b, s) for b in self._batches for s in self._seqs}

    @torch.inference_mode()
    def _forward(self, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """JointIntentSlotModel.forward with the attention bias made here, on the GPU: transformers builds it
        from a host-side scalar tensor, a copy that CUDA graph capture forbids; an already prepared 4D mask
        is passed through as it is. Same numbers: 0 where a token is seen, the dtype's minimum where not."""
        model = self._model
        bias = (1.0 - mask[:, None, None, :].to(self._dtype)) * torch.finfo(self._dtype).min
        hidden = model.encoder(input_ids=ids, attention_mask=bias,
                               token_type_ids=torch.zeros_like(ids)).last_hidden_state
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)
        return model.intent_head(pooled).float(), model.slot_head(hidden).float()

    def _capture(self, batch: int, seq: int) -> _Graph:
        ids = torch.zeros((batch, seq), dtype=torch.int64, device=self._device)
        mask = torch.ones((batch, seq), dtype=torch.int64, device=self._device)
        with torch.cuda.stream(self._stream):
            for _ in range(2):  # warm-up outside the graph: cuBLAS picks and allocates its workspaces
                self._forward(ids, mask)
        self._stream.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self._pool, stream=self._stream):
            intent, slots = self._forward(ids, mask)
        return _Graph(graph, ids, mask, torch.zeros_like(ids, device="cpu").pin_memory(),
                      torch.zeros_like(mask, device="cpu").pin_memory(), intent, slots,
                      torch.empty(intent.shape, dtype=torch.float32).pin_memory(),
                      torch.empty(slots.shape, dtype=torch.float32).pin_memory())

    def _bucket(self, batch: int, seq: int) -> _Graph:
        b = next((size for size in self._batches if size >= batch), None)
        s = next((size for size in self._seqs if size >= seq), None)
        if b is None or s is None:
            raise ValueError(f"batch {batch} x {seq} tokens is beyond the captured maximum "
                             f"{self._batches[-1]} x {self._seqs[-1]}")
        return self._graphs[(b, s)]

    def run(self, input_ids: NDArray[np.int64], attention_mask: NDArray[np.int64]) -> Logits:
        top = self._batches[-1]
        if len(input_ids) > top:  # bigger than the largest graph: run it in slices of that size
            parts = [self.run(input_ids[i : i + top], attention_mask[i : i + top])
                     for i in range(0, len(input_ids), top)]
            return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
        batch, seq = input_ids.shape
        g = self._bucket(batch, seq)
        # Padding rows and columns carry mask 0: they change no real token's attention and are sliced away.
        g.ids_np[:batch, :seq] = input_ids
        g.mask_np[:batch, :seq] = attention_mask
        if seq < g.ids_np.shape[1]:
            g.ids_np[:batch, seq:] = 0
            g.mask_np[:batch, seq:] = 0
        if batch < g.ids_np.shape[0]:
            g.ids_np[batch:] = 0
            g.mask_np[batch:] = 0
        with torch.cuda.stream(self._stream):
            g.ids.copy_(g.ids_host, non_blocking=True)
            g.mask.copy_(g.mask_host, non_blocking=True)
            g.graph.replay()
            g.intent_host.copy_(g.intent, non_blocking=True)
            g.slots_host.copy_(g.slots, non_blocking=True)
        self._stream.synchronize()
        return g.intent_np[:batch].copy(), g.slots_np[:batch, :seq].copy()

    def info(self) -> BackendInfo:
        precision = "fp16" if self._dtype == torch.float16 else "fp32"
        return BackendInfo("torch-cuda", f"cuda:{self._device.index} {torch.cuda.get_device_name(self._device)}",
                           precision, f"{self._name}, {len(self._graphs)} CUDA graphs "
                                      f"(batch <= {self._batches[-1]}, seq <= {self._seqs[-1]})")

    def close(self) -> None:
        self._graphs.clear()
        self._model = None  # type: ignore[assignment]
