"""`assistant export-triton DIR`: the two models as a native Triton model repository, for NVIDIA's Triton
container (the production shape: one Triton per GPU node, gateways anywhere).

    DIR/nlu/config.pbtxt    platform tensorrt_plan (when `assistant build-engine` made an engine) or
    DIR/nlu/1/model.plan    onnxruntime_onnx (FP16 file for GPUs where one was made, with TensorRT as ONNX
     or model.onnx          Runtime's accelerator; INT8 or FP32 for CPUs)
    DIR/asr/config.pbtxt    backend "python": assistant/model_server/triton_asr_model.py as asr/1/model.py,
    DIR/asr/1/whisper/      the CTranslate2 model next to it
    DIR/README.md           how to run it, as written for this export

Both configs: dynamic batching with [serving]'s max batch, queue delay and queue size, three priority levels
for the recognizer (finals, reads, partials), and one instance group per GPU (`--gpus N`; 0: CPU instances).
Names and shapes are those of `assistant model-server`, so a gateway (`assistant serve --models triton://...`)
cannot tell the two apart.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from assistant.asr.models import whisper_model_dir
from assistant.asr.remote import ASR_MODEL, HYPOTHESES_OUTPUT, PCM_INPUT, PRIORITY_INPUT, PRIORITY_LEVELS, TEXT_OUTPUT
from assistant.config import Settings
from assistant.errors import ConfigError
from assistant.nlu.model_folder import NLUModel
from engines.base import INPUT_NAMES, OUTPUT_NAMES
from engines.triton_client import NLU_MODEL

__all__ = ["export_repository", "nlu_artifact", "config_text"]

_ASR_MODEL_FILE = Path(__file__).with_name("triton_asr_model.py")


def nlu_artifact(model: NLUModel, gpus: int) -> tuple[str, Path, int | None]:
    """(platform, file, max batch the file was built for or None): a TensorRT engine if one was built, else the
    ONNX file that fits the device."""
    plans = sorted(model.files.engine_folder.glob("*/model.plan"), key=lambda p: p.stat().st_mtime)
    if gpus and plans:
        meta = json.loads((plans[-1].parent / "engine.json").read_text())
        return "tensorrt_plan", plans[-1], int(meta["key"]["batch"][2])
    if gpus and model.files.gpu_onnx("fp16").exists():
        return "onnxruntime_onnx", model.files.gpu_onnx("fp16"), None
    if not gpus and model.files.onnx_int8 is not None:
        return "onnxruntime_onnx", model.files.onnx_int8, None
    return "onnxruntime_onnx", model.files.onnx_fp32, None


def _instance_groups(gpus: int) -> str:
    if not gpus:
        return "instance_group [ { count: 1 kind: KIND_CPU } ]"
    groups = ",\n  ".join(f"{{ count: 1 kind: KIND_GPU gpus: [ {gpu} ] }}" for gpu in range(gpus))
    return f"instance_group [\n  {groups}\n]"


def _batching(max_delay_us: int, max_queue: int, priorities: int) -> str:
    lines = [f"  max_queue_delay_microseconds: {max_delay_us}",
             f"  default_queue_policy {{ max_queue_size: {max_queue} }}"]
    if priorities:
        lines += [f"  priority_levels: {priorities}", f"  default_priority_level: {priorities}"]
    return "dynamic_batching {\n" + "\n".join(lines) + "\n}"


def config_text(name: str, head: list[str], max_batch: int, inputs: list[tuple[str, str, str]],
                outputs: list[tuple[str, str, str]], batching: str, groups: str, tail: Sequence[str] = ()) -> str:
    """A config.pbtxt; tensors as (name, TYPE_..., dims)."""
    def tensors(kind: str, items: list[tuple[str, str, str]]) -> str:
        body = ",\n  ".join(f'{{ name: "{n}" data_type: {t} dims: [ {d} ] }}' for n, t, d in items)
        return f"{kind} [\n  {body}\n]"

    return "\n".join([f'name: "{name}"', *head, f"max_batch_size: {max_batch}", tensors("input", inputs),
                      tensors("output", outputs), batching, groups, *tail]) + "\n"


def export_repository(folder: Path, settings: Settings, model: NLUModel, hotwords: str | None, gpus: int = 1,
                      force: bool = False) -> list[str]:
    """Write the repository; returns lines saying what was written."""
    if gpus < 0:
        raise ConfigError("--gpus: 0 (CPU instances) or more")
    if folder.exists():
        if not force:
            raise ConfigError(f"{folder} exists; --force replaces it")
        shutil.rmtree(folder)
    serving, asr = settings.serving, settings.asr
    platform, artifact, built_batch = nlu_artifact(model, gpus)
    nlu_batch = min(serving.nlu_max_batch, built_batch or serving.nlu_max_batch)
    nlu_dir = folder / NLU_MODEL / "1"
    nlu_dir.mkdir(parents=True)
    target = nlu_dir / ("model.plan" if platform == "tensorrt_plan" else "model.onnx")
    shutil.copyfile(artifact, target)
    accelerate = [] if platform == "tensorrt_plan" or not gpus else [
        "optimization { execution_accelerators { gpu_execution_accelerator: [ { name: \"tensorrt\" "
        "parameters { key: \"precision_mode\" value: \"FP16\" } } ] } }"]
    (folder / NLU_MODEL / "config.pbtxt").write_text(config_text(
        NLU_MODEL, [f'platform: "{platform}"'], nlu_batch,
        [(INPUT_NAMES[0], "TYPE_INT64", "-1"), (INPUT_NAMES[1], "TYPE_INT64", "-1")],
        [(OUTPUT_NAMES[0], "TYPE_FP32", str(model.files.num_intents)),
         (OUTPUT_NAMES[1], "TYPE_FP32", f"-1, {model.files.num_slot_labels}")],
        _batching(serving.nlu_max_delay_us, serving.nlu_max_queue, 0), _instance_groups(gpus), accelerate))

    asr_dir = folder / ASR_MODEL / "1"
    shutil.copytree(whisper_model_dir(asr.model, settings.cache_dir), asr_dir / "whisper")
    shutil.copyfile(_ASR_MODEL_FILE, asr_dir / "model.py")
    parameters = {"model": asr.model, "beam_size": str(asr.beam_size), "hypotheses": str(asr.hypotheses),
                  "hotwords": hotwords or "",
                  "gpu_compute_type": asr.compute_type if asr.device == "cuda" else "float16",
                  "cpu_compute_type": asr.compute_type if asr.device == "cpu" else "int8"}
    params = [f"parameters {{ key: {json.dumps(k)} value: {{ string_value: {json.dumps(v)} }} }}"
              for k, v in parameters.items()]
    (folder / ASR_MODEL / "config.pbtxt").write_text(config_text(
        ASR_MODEL, ['backend: "python"'], serving.asr_max_batch if not gpus else max(serving.asr_max_batch, 16),
        [(PCM_INPUT, "TYPE_STRING", "1"), (PRIORITY_INPUT, "TYPE_INT32", "1")],
        [(TEXT_OUTPUT, "TYPE_STRING", "1"), (HYPOTHESES_OUTPUT, "TYPE_STRING", "1")],
        _batching(serving.asr_max_delay_us, serving.asr_max_queue, PRIORITY_LEVELS), _instance_groups(gpus), params))

    (folder / "README.md").write_text(_readme(platform, gpus))
    return [f"{folder / NLU_MODEL}: {platform} from {artifact}, max batch {nlu_batch}",
            f"{folder / ASR_MODEL}: python backend, faster-whisper {asr.model}",
            f"instance groups: {'one per GPU, ' + str(gpus) + ' GPUs' if gpus else 'CPU'}",
            f"run: see {folder / 'README.md'}"]


def _readme(platform: str, gpus: int) -> str:
    plan_note = ("The NLU model is a TensorRT plan: it runs only on the GPU model and TensorRT version it was built "
                 "with; use the Triton container whose TensorRT matches (`assistant build-engine` logged it).\n"
                 if platform == "tensorrt_plan" else "")
    return f"""# Triton model repository written by `assistant export-triton`

Models `asr` (Python backend: faster-whisper) and `nlu` ({platform}), {gpus or 'no'} GPU instance group(s).
{plan_note}
The Python backend needs faster-whisper and this app's package in the container:

    FROM nvcr.io/nvidia/tritonserver:24.10-py3
    RUN pip install faster-whisper==1.2.1 voice-assistant

    docker run --gpus all --rm -p 8001:8001 -p 8002:8002 -v $PWD:/models IMAGE \\
        tritonserver --model-repository=/models

Gateways: `assistant serve --models triton://TRITON_HOST:8001 --workers 4`. Metrics: http://TRITON_HOST:8002/metrics.
"""
