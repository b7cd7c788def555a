"""Every TensorRT name and signature the engine builder and runtime use, held against the real bindings of
TensorRT 10 and 11 (tests/tools/tensorrt_api.py makes them importable without TensorRT's libraries). A call
renamed or removed in either release fails here, not on a user's GPU. Running engines needs TensorRT itself:
those paths are exercised where it is installed, and skip elsewhere."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tools.tensorrt_api import RELEASES, api_environment

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "engines" / "tensorrt.py", ROOT / "models" / "engine_build.py")

# class -> members the code calls on its instances (the code reaches them through objects, not `trt.` names)
USED = {
    "Builder": ["create_network", "create_builder_config", "create_optimization_profile", "build_serialized_network"],
    "OnnxParser": ["parse_from_file", "num_errors", "get_error"],
    "ParserError": ["node_name", "desc"],
    "IBuilderConfig": ["set_memory_pool_limit", "add_optimization_profile", "create_timing_cache",
                       "set_timing_cache", "get_timing_cache", "progress_monitor"],
    "IOptimizationProfile": ["set_shape"],
    "ITimingCache": ["serialize"],
    "IProgressMonitor": ["phase_start", "step_complete", "phase_finish"],
    "Runtime": ["deserialize_cuda_engine"],
    "ICudaEngine": ["create_execution_context", "get_tensor_dtype"],
    "IExecutionContext": ["set_tensor_address", "set_input_shape", "execute_async_v3"],
}
# argument names the code relies on (positional order as the bindings document them)
SIGNATURES = {
    "IExecutionContext.execute_async_v3": "(self: tensorrt_bindings.tensorrt.IExecutionContext, stream_handle:",
    "IExecutionContext.set_tensor_address": "(self: tensorrt_bindings.tensorrt.IExecutionContext, name: str, memory:",
    "IBuilderConfig.set_timing_cache": "cache: tensorrt_bindings.tensorrt.ITimingCache, ignore_mismatch: bool",
    "IProgressMonitor.phase_start": "phase_name: str, parent_phase: str, num_steps:",
    "IProgressMonitor.step_complete": "phase_name: str, step:",
    "IOptimizationProfile.set_shape": "input: str, min: tensorrt_bindings.tensorrt.Dims, opt:",
    "OnnxParser.__init__": "network: tensorrt_bindings.tensorrt.INetworkDefinition, logger:",
}


def _module_names() -> set[str]:
    """Every `trt.a.b` chain in the TensorRT sources (enums, classes, functions reached through the module)."""
    chains = set()
    for source in SOURCES:
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Attribute):
                parts = []
                current: ast.expr = node
                while isinstance(current, ast.Attribute):
                    parts.append(current.attr)
                    current = current.value
                if isinstance(current, ast.Name) and current.id == "trt":
                    chains.add(".".join(reversed(parts)))
    return chains


CHECK = r"""
import json, sys
import tensorrt as trt
names, used, signatures = json.loads(sys.argv[1])
missing = []
for chain in names:
    obj = trt
    for part in chain.split("."):
        if not hasattr(obj, part):
            missing.append("trt." + chain)
            break
        obj = getattr(obj, part)
for cls, members in used.items():
    for member in members:
        if not hasattr(getattr(trt, cls, None), member):
            missing.append(f"{cls}.{member}")
for qualified, fragment in signatures.items():
    cls, member = qualified.split(".")
    doc = getattr(getattr(trt, cls), member).__doc__ or ""
    if fragment not in doc:
        missing.append(f"{qualified} signature (wanted {fragment!r})")
from models.engine_build import _progress_monitor
_progress_monitor(trt)  # the Python subclass of IProgressMonitor constructs against these bindings
print(json.dumps({"version": trt.__version__, "missing": missing, "fp16_flag": hasattr(trt.BuilderFlag, "FP16")}))
"""


@pytest.fixture(scope="module", params=sorted(RELEASES))
def release(request: pytest.FixtureRequest) -> dict[str, str]:
    try:
        return api_environment(request.param)
    except (subprocess.CalledProcessError, OSError, StopIteration) as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"TensorRT {request.param} bindings could not be fetched or loaded here: {exc}")


def test_every_tensorrt_name_the_backend_uses_exists_in_both_releases(release: dict[str, str]) -> None:
    import json

    names = sorted(_module_names())
    assert "NetworkDefinitionCreationFlag.STRONGLY_TYPED" in names  # the walk found the code's trt.* uses
    out = subprocess.run([sys.executable, "-c", CHECK, json.dumps([names, USED, SIGNATURES])], env=release,
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["missing"] == [], f"TensorRT {report['version']}: {report['missing']}"


def test_the_backend_never_uses_the_precision_flags_tensorrt_11_removed() -> None:
    # Strongly typed networks only: precision comes from the ONNX file; BuilderFlag.FP16/INT8 are gone in 11.
    text = "\n".join(source.read_text() for source in SOURCES)
    assert "BuilderFlag" not in text and "STRONGLY_TYPED" in text
