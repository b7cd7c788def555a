"""What the launcher tells the Triton process: plain values, written as JSON (the two run in different Python
environments, so nothing richer crosses)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from assistant.batching import BatchPolicy

__all__ = ["ModelServerSpec"]


@dataclass(frozen=True)
class ModelServerSpec:
    asr_model: str  # its name ("tiny.en"), for the log and metrics
    asr_model_dir: str  # the CTranslate2 folder, found by the launcher
    asr_device: str
    asr_compute_type: str
    asr_beam_size: int
    asr_hypotheses: int  # readings of a final or a read ([asr] hypotheses)
    asr_hotwords: str | None
    asr_instances: int
    nlu_folder: str  # the trained joint model (assistant/nlu/model_folder.py)
    nlu_backend: str  # a registry name (engines/registry.py) or "auto"
    nlu_precision: str
    nlu_threads: int
    profile_batch: list[int]
    profile_seq: list[int]
    asr: BatchPolicy  # Triton's dynamic batcher for each model
    nlu: BatchPolicy
    address: str = "127.0.0.1"
    http_port: int = 8000
    grpc_port: int = 8001
    metrics_port: int = 8002
    extra: dict[str, str] = field(default_factory=dict)  # free-form notes for the log

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1))

    @classmethod
    def read(cls, path: Path) -> ModelServerSpec:
        data = json.loads(path.read_text())
        data["asr"], data["nlu"] = BatchPolicy(**data["asr"]), BatchPolicy(**data["nlu"])
        return cls(**data)
