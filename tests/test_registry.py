import importlib.util
from pathlib import Path

import pytest

from assistant.errors import BackendUnavailable
from assistant.nlu.model_folder import NLUModel
from engines import registry
from engines.base import BackendOptions, JointModelFiles

FILES = JointModelFiles(Path("/nonexistent/model.onnx"), None, Path("/nonexistent/w.safetensors"),
                        Path("/nonexistent/config.json"), 6, 21)


def test_unknown_backend_names_the_known_ones() -> None:
    reason = registry.unavailable_reason("tensorrt-turbo")
    assert reason is not None and "onnxruntime" in reason and "torch-eager" in reason


def test_missing_package_is_named_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "torch" else real(name))
    with pytest.raises(BackendUnavailable, match=r"needs torch .*pip install"):
        registry.create_backend("torch-eager", FILES, BackendOptions())


def test_int8_requested_but_not_built_is_explained() -> None:
    with pytest.raises(BackendUnavailable, match="accuracy gate"):
        registry.create_backend("onnxruntime", FILES, BackendOptions("int8"))


def test_unsupported_precision_is_explained() -> None:
    with pytest.raises(BackendUnavailable, match="fp32 or int8"):
        registry.create_backend("onnxruntime", FILES, BackendOptions("fp16"))


def test_auto_falls_back_to_onnx_runtime_on_a_cpu_machine_and_says_why(meeting_model: NLUModel) -> None:
    backend, passed_over = registry.create_best_backend(meeting_model.files, BackendOptions())
    assert backend.info().name == "onnxruntime"
    assert list(passed_over) == ["tensorrt", "torch-cuda"]  # the GPU backends, each with its reason
    assert all(reason for reason in passed_over.values())


def test_gpu_backends_on_a_machine_without_a_gpu_are_unavailable_not_crashing(meeting_model: NLUModel) -> None:
    if importlib.util.find_spec("torch") is not None:
        import torch

        if torch.cuda.is_available():
            pytest.skip("this machine has a GPU")
    with pytest.raises(BackendUnavailable, match="no CUDA device"):
        registry.create_backend("torch-cuda", meeting_model.files, BackendOptions("fp16"))
    with pytest.raises(BackendUnavailable, match="needs tensorrt"):
        registry.create_backend("tensorrt", meeting_model.files, BackendOptions("fp16"))
