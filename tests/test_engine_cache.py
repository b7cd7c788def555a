"""The TensorRT engine cache: an engine is found only under the exact key it was built for (ONNX file,
TensorRT version, GPU and compute capability, precision, shapes), and a mismatch is refused saying what
differs. No TensorRT is needed: this is the bookkeeping around it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engines.base import JointModelFiles, ShapeProfile
from engines.tensorrt import EngineKey, EngineMismatch, engine_key, find_engine, write_engine


def _key(tmp_path: Path, **changes: object) -> EngineKey:
    onnx = tmp_path / "model.onnx"
    if not onnx.exists():
        onnx.write_bytes(b"onnx bytes")
    key = engine_key(onnx, "fp16", ShapeProfile(), "11.4.0.106", "NVIDIA H200", "9.0")
    return replace(key, **changes)  # type: ignore[arg-type]


def test_every_part_of_the_key_changes_the_folder(tmp_path: Path) -> None:
    base = _key(tmp_path)
    variants = [replace(base, onnx_sha256="0" * 64), replace(base, tensorrt="10.16.1.11"),
                replace(base, gpu="NVIDIA A100"), replace(base, compute_capability="8.0"),
                replace(base, precision="int8"), replace(base, batch=(1, 8, 128)), replace(base, seq=(8, 64, 128))]
    digests = {base.digest(), *(v.digest() for v in variants)}
    assert len(digests) == 1 + len(variants)


def test_an_engine_is_found_under_its_exact_key(tmp_path: Path) -> None:
    key = _key(tmp_path)
    folder = key.folder(tmp_path / "engines")
    folder.mkdir(parents=True)
    write_engine(folder, key, b"plan", {"build_seconds": 1.0})
    assert find_engine(tmp_path / "engines", key).read_bytes() == b"plan"


def test_an_engine_for_another_tensorrt_or_gpu_is_refused_saying_what_differs(tmp_path: Path) -> None:
    built = _key(tmp_path, tensorrt="10.16.1.11", gpu="NVIDIA A100", compute_capability="8.0")
    folder = built.folder(tmp_path / "engines")
    folder.mkdir(parents=True)
    write_engine(folder, built, b"plan", {})
    here = _key(tmp_path)
    with pytest.raises(EngineMismatch) as refused:
        find_engine(tmp_path / "engines", here)
    message = str(refused.value)
    assert "tensorrt '10.16.1.11' (here '11.4.0.106')" in message
    assert "gpu 'NVIDIA A100' (here 'NVIDIA H200')" in message and "compute_capability '8.0'" in message
    assert "assistant build-engine --precision fp16" in message


def test_no_engine_at_all_says_how_to_build_one(tmp_path: Path) -> None:
    with pytest.raises(EngineMismatch, match="no TensorRT fp16 engine .* assistant build-engine --precision fp16"):
        find_engine(tmp_path / "engines", _key(tmp_path))


def test_precision_files_and_engines_live_beside_the_model(tmp_path: Path) -> None:
    files = JointModelFiles(tmp_path / "meeting-x" / "model.onnx", None, tmp_path / "w", tmp_path / "c", 6, 21)
    assert files.gpu_onnx("fp32") == files.onnx_fp32
    assert files.gpu_onnx("fp16") == tmp_path / "meeting-x.fp16" / "model.onnx"
    assert files.gpu_onnx("int8") == tmp_path / "meeting-x.int8" / "model.onnx"
    assert files.engine_folder == tmp_path / "meeting-x.engines"


@pytest.mark.parametrize("batch, seq", [((0, 8, 64), (8, 32, 128)), ((1, 8, 4), (8, 32, 128)),
                                        ((1, 8, 64), (64, 32, 128))])
def test_a_shape_profile_out_of_order_is_refused(batch: tuple[int, int, int], seq: tuple[int, int, int]) -> None:
    with pytest.raises(ValueError, match="min <= opt <= max"):
        ShapeProfile(batch, seq)
