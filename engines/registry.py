"""Pick a backend by name, importing only the one chosen, and say why one cannot run."""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from assistant.errors import BackendUnavailable
from engines.base import BackendOptions, JointModelFiles, NLUBackend

__all__ = ["AUTO_ORDER", "BACKENDS", "create_backend", "create_best_backend", "unavailable_reason"]


@dataclass(frozen=True)
class BackendEntry:
    module: str
    cls: str
    needs: tuple[str, ...]  # importable packages it requires
    hint: str  # how to get them


BACKENDS: dict[str, BackendEntry] = {
    "onnxruntime": BackendEntry("engines.onnxruntime", "OnnxRuntimeBackend", ("onnxruntime",),
                                "pip install onnxruntime"),
    "torch-eager": BackendEntry("engines.torch_eager", "TorchEagerBackend", ("torch", "transformers", "safetensors"),
                                "pip install -e '.[train]'"),
    "torch-eager-cuda": BackendEntry("engines.torch_eager", "TorchEagerCudaBackend",
                                     ("torch", "transformers", "safetensors"), "a CUDA build of torch"),
    "torch-cuda": BackendEntry("engines.torch_cuda", "TorchCudaGraphBackend", ("torch", "transformers", "safetensors"),
                               "a CUDA build of torch"),
    "tensorrt": BackendEntry("engines.tensorrt", "TensorRTBackend", ("tensorrt", "cuda"),
                             "TensorRT from NVIDIA (pip install tensorrt) and pip install -e '.[gpu]'"),
}

# backend = "auto": the first of these that can run here (TensorRT needs a built engine; both GPU backends a GPU)
AUTO_ORDER = ("tensorrt", "torch-cuda", "onnxruntime")


def unavailable_reason(name: str) -> str | None:
    """None when the backend can be created here, else why not in words."""
    entry = BACKENDS.get(name)
    if entry is None:
        return f"unknown backend {name!r}; known: {', '.join(BACKENDS)}"
    missing = [pkg for pkg in entry.needs if importlib.util.find_spec(pkg) is None]
    if missing:
        return f"backend {name!r} needs {', '.join(missing)} ({entry.hint})"
    return None


def create_backend(name: str, files: JointModelFiles, options: BackendOptions) -> NLUBackend:
    reason = unavailable_reason(name)
    if reason is not None:
        raise BackendUnavailable(reason)
    entry = BACKENDS[name]
    cls = getattr(importlib.import_module(entry.module), entry.cls)
    try:
        backend: NLUBackend = cls(files, options)
    except (ValueError, FileNotFoundError) as exc:
        if isinstance(exc, FileNotFoundError) and files.onnx_int8 is not None and not files.onnx_fp32.exists():
            # a shipped model: the INT8 file a CPU serves, not the whole build
            raise BackendUnavailable(f"backend {name!r} reads the whole model build (FP32 ONNX, weights), and "
                                     f"{files.folder} holds only the shipped INT8 file: `assistant train` builds "
                                     "it into the cache, where it is found first") from exc
        raise BackendUnavailable(f"backend {name!r}: {exc}") from exc
    return backend


def create_best_backend(files: JointModelFiles, options: BackendOptions,
                        order: tuple[str, ...] = AUTO_ORDER) -> tuple[NLUBackend, dict[str, str]]:
    """The first backend of `order` that starts here, and why each one before it did not (for the log)."""
    passed_over: dict[str, str] = {}
    for name in order:
        try:
            return create_backend(name, files, options), passed_over
        except BackendUnavailable as exc:
            passed_over[name] = str(exc)
    raise BackendUnavailable("no backend can run here: " + "; ".join(passed_over.values()))
