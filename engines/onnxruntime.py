"""ONNX Runtime on the CPU: the embedded default backend."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from numpy.typing import NDArray

from engines.base import INPUT_NAMES, OUTPUT_NAMES, BackendInfo, BackendOptions, JointModelFiles, Logits

__all__ = ["OnnxRuntimeBackend"]


class OnnxRuntimeBackend:
    def __init__(self, files: JointModelFiles, options: BackendOptions) -> None:
        if options.precision not in ("auto", "fp32", "int8"):
            raise ValueError(f"onnxruntime supports precision fp32 or int8, not {options.precision!r}")
        wants_int8 = options.precision == "int8" or (options.precision == "auto" and files.onnx_int8 is not None)
        if wants_int8 and files.onnx_int8 is None:
            raise FileNotFoundError("no INT8 model: it did not pass the accuracy gate when the model was built")
        path = files.onnx_int8 if wants_int8 and files.onnx_int8 is not None else files.onnx_fp32
        if not path.exists():
            raise FileNotFoundError(f"no {path.name} in {path.parent}")
        self._precision = "int8" if wants_int8 else "fp32"
        self._path = path
        session_options = ort.SessionOptions()
        session_options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session_options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        if options.threads > 0:
            session_options.intra_op_num_threads = options.threads
        # One call at a time per worker: inter-op parallelism would only contend with intra-op threads.
        session_options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(path), session_options, providers=["CPUExecutionProvider"])

    def run(self, input_ids: NDArray[np.int64], attention_mask: NDArray[np.int64]) -> Logits:
        intent, slots = self._session.run(
            list(OUTPUT_NAMES), {INPUT_NAMES[0]: input_ids, INPUT_NAMES[1]: attention_mask}
        )
        return np.asarray(intent, dtype=np.float32), np.asarray(slots, dtype=np.float32)

    def info(self) -> BackendInfo:
        return BackendInfo("onnxruntime", "cpu", self._precision, self._path.name)

    def close(self) -> None:
        # An InferenceSession frees its memory when the last reference goes; it has no close().
        self._session = None
