"""`assistant export-triton`: the repository Triton reads, checked against Triton's own ModelConfig schema, and
the small pieces of the gateway's Triton client."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from assistant.asr.hypotheses import Heard
from assistant.asr.remote import heard_row, reading_rows, transcribe_rows
from assistant.config import Settings
from assistant.errors import ConfigError
from assistant.model_server.repository import export_repository
from assistant.nlu.model_folder import NLUModel
from assistant.server.gateways import without_workers_flag
from engines.triton_client import parse_models_url, seq_bucket


def _config(path: Path) -> model_config_pb2.ModelConfig:
    return text_format.Parse(path.read_text(), model_config_pb2.ModelConfig())  # raises on any unknown field


@pytest.mark.parametrize("gpus", [0, 2])
def test_the_exported_repository_is_a_valid_triton_repository(tmp_path: Path, settings: Settings,
                                                              meeting_model: NLUModel, gpus: int) -> None:
    folder = tmp_path / "repo"
    export_repository(folder, settings, meeting_model, "Book, Everest.", gpus=gpus)
    nlu, asr = _config(folder / "nlu" / "config.pbtxt"), _config(folder / "asr" / "config.pbtxt")
    assert nlu.platform == "onnxruntime_onnx" and asr.backend == "python"
    assert [g.kind for g in nlu.instance_group] == ([model_config_pb2.ModelInstanceGroup.KIND_GPU] * gpus
                                                    or [model_config_pb2.ModelInstanceGroup.KIND_CPU])
    assert [list(g.gpus) for g in asr.instance_group] == ([[i] for i in range(gpus)] or [[]])
    assert asr.dynamic_batching.priority_levels == 3
    assert asr.parameters["hotwords"].string_value == "Book, Everest."
    # the gateway sends each row's priority and reads the other readings back (assistant/asr/remote.py)
    assert [i.name for i in asr.input] == ["pcm", "priority"] and [o.name for o in asr.output] == ["text", "hypotheses"]
    assert asr.parameters["hypotheses"].string_value == str(settings.asr.hypotheses)
    graph = onnx.load(str(folder / "nlu" / "1" / "model.onnx")).graph
    assert [i.name for i in graph.input] == [i.name for i in nlu.input]
    assert [o.name for o in graph.output] == [o.name for o in nlu.output]
    assert list(nlu.output[1].dims) == [-1, meeting_model.files.num_slot_labels]
    assert (folder / "asr" / "1" / "model.py").exists() and (folder / "asr" / "1" / "whisper" / "model.bin").exists()
    with pytest.raises(ConfigError, match="--force"):
        export_repository(folder, settings, meeting_model, None, gpus=gpus)


def test_models_urls_are_read_or_refused_clearly() -> None:
    assert parse_models_url("triton://10.0.0.5:9001") == "10.0.0.5:9001"
    assert parse_models_url("triton://gpu-node") == "gpu-node:8001"
    for bad in ("http://gpu-node:8001", "triton://", "triton://host:notaport", "triton://host:8001/models"):
        with pytest.raises(ConfigError):
            parse_models_url(bad)


def test_token_rows_travel_at_fixed_lengths() -> None:
    assert [seq_bucket(n) for n in (1, 16, 17, 100, 128)] == [16, 16, 32, 128, 128]
    with pytest.raises(ValueError):
        seq_bucket(10_000)


def test_a_worker_runs_the_supervisors_command_less_workers() -> None:
    assert without_workers_flag(["serve", "--workers", "4", "--models", "triton://h:1", "--workers=2"]) == \
        ["serve", "--models", "triton://h:1"]


def test_a_model_server_batch_is_decoded_per_priority_and_keeps_every_reading() -> None:
    calls: list[tuple[list[bytes], int]] = []

    def transcribe(pcms: list[bytes], priority: int) -> list[str]:  # the recognizer, as the model server calls it
        calls.append((pcms, priority))
        if priority == 2:
            return [f"partial {p.decode()}" for p in pcms]
        return [Heard(f"final {p.decode()}", -0.2, [(f"other {p.decode()}", -0.4)]) for p in pcms]

    texts = transcribe_rows(transcribe, [b"a", b"b", b"c"], [2, 0, 0])
    assert calls == [([b"b", b"c"], 0), ([b"a"], 2)]  # Triton may merge priorities; each is decoded as sent
    text_rows, hypotheses_rows = reading_rows(texts)
    heard = [heard_row(t[0], h[0]) for t, h in zip(text_rows, hypotheses_rows, strict=True)]
    assert heard == ["partial a", "final b", "final c"] and not isinstance(heard[0], Heard)
    assert isinstance(heard[1], Heard) and heard[1].score == -0.2 and heard[1].alternatives == (("other b", -0.4),)
