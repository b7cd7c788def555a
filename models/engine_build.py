"""Build a TensorRT engine for the joint model: strongly typed network from the ONNX file of one precision, one
optimization profile over batch and sequence, a timing cache kept between builds, progress shown.

Strongly typed (the only mode TensorRT 11 has, and available in 10): every layer runs in the type the ONNX file
gives it, so FP16 and INT8 come from the file (models/precision_files.py), never from builder flags.
Runs on the machine that will serve (engines are specific to TensorRT version and GPU); never at server start.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from assistant.cache import build_folder, locked
from engines.base import INPUT_NAMES, JointModelFiles, ShapeProfile
from engines.tensorrt import EngineKey, _Logger, engine_key, write_engine

__all__ = ["build_engine"]

WORKSPACE_BYTES = 4 << 30  # tactics may use up to this much scratch memory while building


def _progress_monitor(trt: Any) -> Any:
    class TqdmProgress(trt.IProgressMonitor):  # type: ignore[misc]
        """One progress bar per top-level build phase; nested phases only name themselves in the bar."""

        def __init__(self) -> None:
            trt.IProgressMonitor.__init__(self)
            self._bars: dict[str, tqdm] = {}

        def phase_start(self, phase_name: str, parent_phase: str | None, num_steps: int) -> None:
            if parent_phase:
                parent = self._bars.get(parent_phase)
                if parent is not None:
                    parent.set_postfix_str(phase_name[:40])
                return
            self._bars[phase_name] = tqdm(total=num_steps, desc=phase_name[:40], unit="step", file=sys.stderr)

        def step_complete(self, phase_name: str, step: int) -> bool:
            bar = self._bars.get(phase_name)
            if bar is not None:
                bar.update(step + 1 - bar.n)
            return True  # False would cancel the build

        def phase_finish(self, phase_name: str) -> None:
            bar = self._bars.pop(phase_name, None)
            if bar is not None:
                bar.close()

    return TqdmProgress()


def build_engine(files: JointModelFiles, precision: str, shapes: ShapeProfile) -> tuple[Path, EngineKey, bool]:
    """(plan file, its key, whether it was built now); an engine already cached for this key is reused."""
    import tensorrt as trt

    from engines import cuda
    from engines.tensorrt import EngineMismatch, find_engine

    onnx = files.gpu_onnx(precision)
    device = cuda.device_identity()
    key = engine_key(onnx, precision, shapes, trt.__version__, device.name, device.compute_capability)
    root = files.engine_folder
    root.mkdir(parents=True, exist_ok=True)
    with locked(root / f"{key.digest()}.lock"):  # two builders of one key: the second reuses the first's engine
        try:
            return find_engine(root, key), key, False
        except EngineMismatch:
            pass
        plan = _build_plan(trt, onnx, precision, shapes, device, root)
        build_folder(key.folder(root), lambda staging: write_engine(staging, key, plan.data, plan.meta))
    path = find_engine(root, key)
    print(f"[build-engine] wrote {path} in {plan.meta['build_seconds']} s", file=sys.stderr, flush=True)
    return path, key, True


@dataclass(frozen=True)
class _Plan:
    data: bytes
    meta: dict[str, Any]


def _build_plan(trt: Any, onnx: Path, precision: str, shapes: ShapeProfile, device: Any, root: Path) -> _Plan:
    started = time.monotonic()
    logger = _Logger.get()
    builder = trt.Builder(logger)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.STRONGLY_TYPED))
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(str(onnx)):
        errors = "; ".join(f"{e.node_name()}: {e.desc()}" for e in map(parser.get_error, range(parser.num_errors)))
        raise RuntimeError(f"TensorRT could not parse {onnx}: {errors}")
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, WORKSPACE_BYTES)
    profile = builder.create_optimization_profile()
    (b_min, b_opt, b_max), (s_min, s_opt, s_max) = shapes.batch, shapes.seq
    for name in INPUT_NAMES:
        profile.set_shape(name, (b_min, s_min), (b_opt, s_opt), (b_max, s_max))
    config.add_optimization_profile(profile)
    # The timing cache keeps measured tactic timings per GPU and TensorRT version: rebuilds take seconds.
    timing_file = root / f"timing-{device.slug}-trt{trt.__version__}.cache"
    timing = config.create_timing_cache(timing_file.read_bytes() if timing_file.exists() else b"")
    config.set_timing_cache(timing, False)
    config.progress_monitor = _progress_monitor(trt)
    print(f"[build-engine] {precision} from {onnx.name} ({shapes.describe()}) with TensorRT {trt.__version__} "
          f"on {device.name} (sm {device.compute_capability})", file=sys.stderr, flush=True)
    plan = builder.build_serialized_network(network, config)
    if plan is None:
        raise RuntimeError("TensorRT failed to build the engine (see the TensorRT log above)")
    timing_file.write_bytes(bytes(config.get_timing_cache().serialize()))
    return _Plan(bytes(plan), {"onnx": str(onnx), "build_seconds": round(time.monotonic() - started, 1)})
