"""The recognizer as a model of Triton's Python backend: `assistant export-triton` copies this file into the
repository as asr/1/model.py, next to the CTranslate2 model folder (asr/1/whisper).

Inside NVIDIA's Triton container it needs this package and faster-whisper installed (docs/scaling.md has the
Dockerfile). Triton hands `execute` every request of one dynamic batch; all their utterances are decoded in one
call, the same call the single-process server and `assistant model-server` make, so the text is the same.
Each instance runs on the GPU Triton gives it (instance_group: one per GPU) or on the CPU.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import triton_python_backend_utils as pb_utils  # only inside Triton

from assistant.asr.remote import (
    HYPOTHESES_OUTPUT,
    PCM_INPUT,
    PRIORITY_INPUT,
    TEXT_OUTPUT,
    reading_rows,
    transcribe_rows,
)
from assistant.asr.whisper import WhisperRecognizer


class TritonPythonModel:
    def initialize(self, args: dict[str, str]) -> None:
        config = json.loads(args["model_config"])
        params = {key: value["string_value"] for key, value in config.get("parameters", {}).items()}
        gpu = args.get("model_instance_kind") == "GPU"
        folder = Path(args["model_repository"]) / args["model_version"] / "whisper"
        compute_type = params["gpu_compute_type" if gpu else "cpu_compute_type"]
        self.recognizer = WhisperRecognizer(
            folder, params["model"], "cuda" if gpu else "cpu", compute_type,
            int(params["beam_size"]), params.get("hotwords") or None, model_dir=folder,
            device_index=int(args.get("model_instance_device_id", "0")) if gpu else 0,
            hypotheses=int(params.get("hypotheses", "1")))
        self.recognizer.warm_up()

    def execute(self, requests: list[Any]) -> list[Any]:
        pcms: list[bytes] = []
        priorities: list[int] = []
        counts: list[int] = []
        for request in requests:
            rows = pb_utils.get_input_tensor_by_name(request, PCM_INPUT).as_numpy()
            levels = pb_utils.get_input_tensor_by_name(request, PRIORITY_INPUT).as_numpy()
            pcms += [bytes(row[0]) for row in rows]
            priorities += [int(row[0]) for row in levels]
            counts.append(len(rows))
        text_rows, hypotheses_rows = reading_rows(transcribe_rows(self.recognizer.transcribe_batch, pcms, priorities))
        responses, at = [], 0
        for count in counts:
            outputs = [pb_utils.Tensor(TEXT_OUTPUT, text_rows[at:at + count]),
                       pb_utils.Tensor(HYPOTHESES_OUTPUT, hypotheses_rows[at:at + count])]
            at += count
            responses.append(pb_utils.InferenceResponse(output_tensors=outputs))
        return responses
