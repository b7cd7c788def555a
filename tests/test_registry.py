import importlib.util
from pathlib import Path

import pytest

from assistant.errors import BackendUnavailable
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
