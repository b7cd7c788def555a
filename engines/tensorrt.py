"""TensorRT runtime for the joint model, and the key that ties an engine file to what it was built from.

An engine is only valid for the ONNX file, TensorRT version, GPU model and compute capability, precision and
shape profile it was built with, so it is cached under a digest of all of them (models/engine_build.py builds
it; `assistant build-engine`). The runtime never builds: with no engine for this exact key it refuses, and says
which of the keys differ when an engine exists for another TensorRT or GPU.

Runtime, per backend instance (one per NLU worker): one execution context; pinned host and device buffers
allocated once at the profile maximum; its own CUDA stream. A call copies ids and mask in, sets the input shapes,
enqueues with execute_async_v3, copies logits out and synchronizes once. Written against the TensorRT 10 and 11
Python API (tests/test_tensorrt_api.py holds every name used here against both releases).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from engines.base import INPUT_NAMES, OUTPUT_NAMES, BackendInfo, BackendOptions, JointModelFiles, Logits, ShapeProfile

__all__ = ["EngineKey", "EngineMismatch", "engine_key", "find_engine", "TensorRTBackend", "AUTO_PRECISIONS"]

AUTO_PRECISIONS = ("fp16", "int8", "fp32")  # what precision "auto" takes, first engine found wins
_META = "engine.json"
_PLAN = "model.plan"


class EngineMismatch(FileNotFoundError):
    """No engine for this exact key (FileNotFoundError, so the registry reports it as unavailable)."""


@dataclass(frozen=True)
class EngineKey:
    onnx_sha256: str
    tensorrt: str
    gpu: str
    compute_capability: str
    precision: str
    batch: tuple[int, int, int]
    seq: tuple[int, int, int]

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]

    def folder(self, root: Path) -> Path:
        return root / f"{self.precision}-{self.digest()}"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def engine_key(onnx: Path, precision: str, shapes: ShapeProfile, tensorrt_version: str, gpu: str,
               compute_capability: str) -> EngineKey:
    return EngineKey(file_sha256(onnx), tensorrt_version, gpu, compute_capability, precision, shapes.batch,
                     shapes.seq)


def find_engine(root: Path, key: EngineKey) -> Path:
    """The plan file for exactly this key, or EngineMismatch saying what the cached engines differ in."""
    plan = key.folder(root) / _PLAN
    if plan.exists():
        return plan
    wanted = asdict(key)
    differences = []
    for meta in sorted(root.glob(f"*/{_META}")):
        other = json.loads(meta.read_text())["key"]
        diff = [f"{name} {other[name]!r} (here {wanted[name]!r})" for name in wanted if other.get(name) != wanted[name]
                and name != "onnx_sha256"]
        if other.get("onnx_sha256") != key.onnx_sha256:
            diff.insert(0, "another ONNX file")
        differences.append(f"{meta.parent.name}: built for {', '.join(diff)}")
    hint = f"build it with: assistant build-engine --precision {key.precision}"
    if differences:
        raise EngineMismatch(f"no TensorRT engine matches this machine and model; refusing the cached ones "
                             f"({'; '.join(differences)}); {hint}")
    raise EngineMismatch(f"no TensorRT {key.precision} engine in {root}; {hint}")


def write_engine(folder: Path, key: EngineKey, plan: bytes, extra: dict[str, Any]) -> None:
    (folder / _PLAN).write_bytes(plan)
    (folder / _META).write_text(json.dumps({"key": asdict(key), **extra}, indent=2) + "\n")


class _Logger:
    """One TensorRT logger per process (TensorRT keeps the first it is given)."""

    instance: Any = None

    @classmethod
    def get(cls) -> Any:
        import tensorrt as trt

        if cls.instance is None:
            cls.instance = trt.Logger(trt.Logger.WARNING)
        return cls.instance


class TensorRTBackend:
    def __init__(self, files: JointModelFiles, options: BackendOptions) -> None:
        import tensorrt as trt

        from engines import cuda

        if cuda.device_count() == 0:
            raise FileNotFoundError("no CUDA device is visible")
        device = cuda.device_identity()
        order = AUTO_PRECISIONS if options.precision == "auto" else (options.precision,)
        errors = []
        for precision in order:
            onnx = files.gpu_onnx(precision)
            if not onnx.exists():
                errors.append(f"no {precision} ONNX file ({onnx}); assistant build-engine --precision {precision} "
                              "makes it")
                continue
            key = engine_key(onnx, precision, options.shapes, trt.__version__, device.name,
                             device.compute_capability)
            try:
                plan = find_engine(files.engine_folder, key)
                break
            except EngineMismatch as exc:
                errors.append(str(exc))
        else:
            raise EngineMismatch("; ".join(errors))
        self._precision, self._plan, self._shapes = precision, plan, options.shapes
        self._runtime = trt.Runtime(_Logger.get())
        self._engine = self._runtime.deserialize_cuda_engine(plan.read_bytes())
        if self._engine is None:
            raise EngineMismatch(f"TensorRT {trt.__version__} could not deserialize {plan}; rebuild it")
        self._context = self._engine.create_execution_context()
        self._stream = cuda.CudaStream()
        max_batch, max_seq = options.shapes.batch[2], options.shapes.seq[2]
        shapes = {INPUT_NAMES[0]: (max_batch, max_seq), INPUT_NAMES[1]: (max_batch, max_seq),
                  OUTPUT_NAMES[0]: (max_batch, files.num_intents),
                  OUTPUT_NAMES[1]: (max_batch, max_seq, files.num_slot_labels)}
        self._host: dict[str, cuda.PinnedArray] = {}
        self._device: dict[str, cuda.DeviceBuffer] = {}
        for name, shape in shapes.items():
            dtype = trt.nptype(self._engine.get_tensor_dtype(name))
            self._host[name] = cuda.PinnedArray(shape, dtype)
            self._device[name] = cuda.DeviceBuffer(self._host[name].nbytes)
            # Addresses never change (buffers are sized for the maximum), so they are bound once.
            if not self._context.set_tensor_address(name, self._device[name].ptr):
                raise RuntimeError(f"TensorRT refused the address of {name!r}")

    def run(self, input_ids: NDArray[np.int64], attention_mask: NDArray[np.int64]) -> Logits:
        max_batch = self._shapes.batch[2]
        if len(input_ids) <= max_batch:
            return self._run(input_ids, attention_mask)
        parts = [self._run(input_ids[i : i + max_batch], attention_mask[i : i + max_batch])
                 for i in range(0, len(input_ids), max_batch)]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def _run(self, input_ids: NDArray[np.int64], attention_mask: NDArray[np.int64]) -> Logits:
        batch, seq = input_ids.shape
        if seq > self._shapes.seq[2]:
            raise ValueError(f"sequence of {seq} tokens is longer than the engine's maximum {self._shapes.seq[2]}")
        shapes = {INPUT_NAMES[0]: (batch, seq), INPUT_NAMES[1]: (batch, seq)}
        for (name, shape), values in zip(shapes.items(), (input_ids, attention_mask), strict=True):
            host = self._host[name]
            np.copyto(host.view(shape), values, casting="same_kind")
            self._device[name].upload(host, int(np.prod(shape)) * host.dtype.itemsize, self._stream)
            if not self._context.set_input_shape(name, shape):
                raise ValueError(f"shape {shape} of {name!r} is outside the engine's profile "
                                 f"({self._shapes.describe()})")
        if not self._context.execute_async_v3(self._stream.ptr):
            raise RuntimeError("TensorRT execute_async_v3 failed (see the TensorRT log above)")
        out_shapes = {OUTPUT_NAMES[0]: (batch, self._host[OUTPUT_NAMES[0]].array.shape[1]),
                      OUTPUT_NAMES[1]: (batch, seq, self._host[OUTPUT_NAMES[1]].array.shape[2])}
        for name, shape in out_shapes.items():
            host = self._host[name]
            self._device[name].download(host, int(np.prod(shape)) * host.dtype.itemsize, self._stream)
        self._stream.synchronize()
        intent, slots = (self._host[name].view(shape).astype(np.float32, copy=True)
                         for name, shape in out_shapes.items())
        return intent, slots

    def info(self) -> BackendInfo:
        from engines.cuda import device_identity

        return BackendInfo("tensorrt", f"cuda:0 {device_identity().name}", self._precision,
                           f"{self._plan.parent.name}/{self._plan.name}")

    def close(self) -> None:
        self._context = None
        self._engine = None
        for host in self._host.values():
            host.close()
        for device in self._device.values():
            device.close()
        self._stream.close()
