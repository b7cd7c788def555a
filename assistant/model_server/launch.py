"""`assistant model-server`: find (or build) the models in the app's environment, then start the Triton process
(assistant/model_server/triton_app.py) in the model server's own environment and stay its supervisor.

nvidia-pytriton pins numpy<2 and the app uses numpy 2, so the Triton side runs in its own interpreter: this one
if pytriton happens to be importable here, else [model_server] python (`make install-triton` makes
.venv-triton). That interpreter gets this checkout's source first on PYTHONPATH (the same code on both sides),
its own libpython directory on LD_LIBRARY_PATH (Triton's Python-backend stub links libpython, which a venv or a
non-system Python does not put on the loader's path), and on a CUDA 13-only machine the cuBLAS 12 links
CTranslate2 needs. SIGTERM and SIGINT are passed on (the child has its own session, so a terminal's Ctrl-C
reaches it once); Triton stops cleanly on them.

`--servers N` runs N such Triton processes, one per GPU (server i sees only its GPU, through
CUDA_VISIBLE_DEVICES, and listens on each port + i * [model_server] port_stride), under a supervisor that
restarts one that dies; gateways call them all (`--models triton://...:8001,triton://...:8011`). One process
per GPU rather than one Triton with an instance group per GPU: pytriton runs every model instance's Python in
the one process that binds them, so its GIL and its CUDA context would be shared by all the GPUs; apart, each
GPU's server has its own interpreter, needs no device index in any model's code, and fails alone.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from types import FrameType

from assistant.asr.models import whisper_model_dir
from assistant.config import Settings
from assistant.errors import ConfigError
from assistant.model_server.spec import ModelServerSpec
from assistant.nlu.model_folder import NLUModel
from assistant.supervise import Child, supervise

__all__ = ["model_server_spec", "triton_python", "model_server_env", "run_model_server", "run_model_servers",
           "visible_gpus", "server_ports"]

SOURCE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding assistant/ and engines/


def model_server_spec(settings: Settings, model: NLUModel, hotwords: str | None) -> ModelServerSpec:
    asr, nlu, serving, server = settings.asr, settings.nlu, settings.serving, settings.model_server
    return ModelServerSpec(
        asr_model=asr.model, asr_model_dir=str(whisper_model_dir(asr.model, settings.cache_dir)),
        asr_device=asr.device, asr_compute_type=asr.compute_type, asr_beam_size=asr.beam_size,
        asr_hypotheses=asr.hypotheses,
        asr_hotwords=hotwords, asr_instances=server.asr_instances, nlu_folder=str(model.folder),
        nlu_backend=nlu.backend, nlu_precision=nlu.precision, nlu_threads=nlu.threads,
        profile_batch=list(nlu.profile_batch), profile_seq=list(nlu.profile_seq),
        asr=serving.asr, nlu=serving.nlu,
        address=server.address, http_port=server.http_port, grpc_port=server.grpc_port,
        metrics_port=server.metrics_port)


def triton_python(settings: Settings) -> str:
    """The interpreter that has nvidia-pytriton: this one, else [model_server] python."""
    if importlib.util.find_spec("pytriton") is not None:
        return sys.executable
    python = Path(settings.model_server.python).expanduser()
    if not python.exists():
        raise ConfigError(f"nvidia-pytriton is not installed here, and [model_server] python ({python}) does not "
                          "exist: `make install-triton` makes that environment (it pins numpy<2, so it is kept "
                          "apart from the app's)")
    return str(python)


def model_server_env(python: str, settings: Settings, base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    libdir = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_config_var('LIBDIR') or '')"],
                            capture_output=True, text=True, check=True).stdout.strip()
    library_path = [p for p in (libdir, env.get("LD_LIBRARY_PATH", "")) if p]
    if settings.asr.device == "cuda":
        from assistant.asr.cuda_libs import cublas12_links

        links = cublas12_links(settings.cache_dir)
        if links is not None:
            library_path.insert(0, str(links))
    env["LD_LIBRARY_PATH"] = ":".join(library_path)
    env["PYTHONPATH"] = ":".join(p for p in (str(SOURCE_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def run_model_server(settings: Settings, model: NLUModel, hotwords: str | None, gpu: int | None = None) -> int:
    """Start the Triton process and wait for it; returns its exit code. `gpu`: the one GPU it may see."""
    python = triton_python(settings)
    spec = model_server_spec(settings, model, hotwords)
    env = model_server_env(python, settings)
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = str(gpu)
    with tempfile.TemporaryDirectory(prefix="model-server-") as folder:
        spec_file = Path(folder) / "spec.json"
        spec.write(spec_file)
        print(f"[model-server] starting Triton with {python}", file=sys.stderr, flush=True)
        child = subprocess.Popen([python, "-m", "assistant.model_server.triton_app", str(spec_file)],
                                 env=env, start_new_session=True)

        def forward(signum: int, frame: FrameType | None) -> None:
            child.send_signal(signum)

        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, forward)
        return child.wait()


def visible_gpus() -> list[int]:
    """The GPUs this process may use: CUDA_VISIBLE_DEVICES's list where it is set to numbers, else nvidia-smi's
    (none on a machine without one)."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return [int(part) for part in listed.split(",") if part.strip().isdigit()]
    if shutil.which("nvidia-smi") is None:
        return []
    result = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], capture_output=True,
                            text=True, check=False)
    return [int(line) for line in result.stdout.split() if line.isdigit()] if result.returncode == 0 else []


def server_ports(settings: Settings, index: int) -> tuple[int, int, int]:
    """(http, grpc, metrics) of server `index` of `--servers N`."""
    server = settings.model_server
    step = index * server.port_stride
    return server.http_port + step, server.grpc_port + step, server.metrics_port + step


def run_model_servers(settings: Settings, model: NLUModel, hotwords: str | None, servers: int,
                      gpus: list[int] | None = None) -> int:
    """`servers` Triton processes, server i on GPU gpus[i % len(gpus)] (default: the GPUs visible; none on a CPU
    machine) and on the ports + i * port_stride, kept running until SIGTERM or SIGINT."""
    gpus = visible_gpus() if gpus is None else gpus
    if servers == 1:
        return run_model_server(settings, model, hotwords, gpus[0] if gpus else None)
    python = triton_python(settings)
    base_env = model_server_env(python, settings)
    address = settings.model_server.address
    with tempfile.TemporaryDirectory(prefix="model-servers-") as folder:
        children = []
        for i in range(servers):
            http, grpc, metrics = server_ports(settings, i)
            spec = replace(model_server_spec(settings, model, hotwords), http_port=http, grpc_port=grpc,
                           metrics_port=metrics)
            spec_file = Path(folder) / f"spec-{i}.json"
            spec.write(spec_file)
            env = dict(base_env)
            name = f"server {i}"
            if gpus:
                env["CUDA_VISIBLE_DEVICES"] = str(gpus[i % len(gpus)])
                name += f", GPU {gpus[i % len(gpus)]}"
            children.append(Child(name, [python, "-m", "assistant.model_server.triton_app", str(spec_file)],
                                  "[model-server] ready", env=env, new_session=True))
        print(f"[model-server] starting {servers} Triton processes with {python}"
              + (f" on GPUs {','.join(str(g) for g in gpus)}" if gpus else " (no GPU)"), file=sys.stderr, flush=True)
        shown = f"[{address}]" if ":" in address else address
        urls = ",".join(f"triton://{shown}:{server_ports(settings, i)[1]}" for i in range(servers))

        def announce() -> None:
            print(f"[model-server] ready: {servers} servers; gateways take --models {urls}", file=sys.stderr,
                  flush=True)

        return supervise(children, announce, "model-server", "gateways send its calls to the others meanwhile")
