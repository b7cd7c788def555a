"""`assistant model-server`: find (or build) the models in the app's environment, then start the Triton process
(assistant/model_server/triton_app.py) in the model server's own environment and stay its supervisor.

nvidia-pytriton pins numpy<2 and the app uses numpy 2, so the Triton side runs in its own interpreter: this one
if pytriton happens to be importable here, else [model_server] python (`make install-triton` makes
.venv-triton). That interpreter gets this checkout's source first on PYTHONPATH (the same code on both sides),
its own libpython directory on LD_LIBRARY_PATH (Triton's Python-backend stub links libpython, which a venv or a
non-system Python does not put on the loader's path), and on a CUDA 13-only machine the cuBLAS 12 links
CTranslate2 needs. SIGTERM and SIGINT are passed on (the child has its own session, so a terminal's Ctrl-C
reaches it once); Triton stops cleanly on them.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import FrameType

from assistant.asr.models import whisper_model_dir
from assistant.config import Settings
from assistant.errors import ConfigError
from assistant.model_server.spec import ModelBatching, ModelServerSpec
from assistant.nlu.model_folder import NLUModel

__all__ = ["model_server_spec", "triton_python", "model_server_env", "run_model_server"]

SOURCE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding assistant/ and engines/


def model_server_spec(settings: Settings, model: NLUModel, hotwords: str | None) -> ModelServerSpec:
    asr, nlu, serving, server = settings.asr, settings.nlu, settings.serving, settings.model_server
    return ModelServerSpec(
        asr_model=asr.model, asr_model_dir=str(whisper_model_dir(asr.model, settings.cache_dir)),
        asr_device=asr.device, asr_compute_type=asr.compute_type, asr_beam_size=asr.beam_size,
        asr_hotwords=hotwords, asr_instances=server.asr_instances, nlu_folder=str(model.folder),
        nlu_backend=nlu.backend, nlu_precision=nlu.precision, nlu_threads=nlu.threads,
        profile_batch=list(nlu.profile_batch), profile_seq=list(nlu.profile_seq),
        asr=ModelBatching(serving.asr_max_batch, serving.asr_max_delay_us, serving.asr_max_queue),
        nlu=ModelBatching(serving.nlu_max_batch, serving.nlu_max_delay_us, serving.nlu_max_queue),
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


def run_model_server(settings: Settings, model: NLUModel, hotwords: str | None) -> int:
    """Start the Triton process and wait for it; returns its exit code."""
    python = triton_python(settings)
    spec = model_server_spec(settings, model, hotwords)
    with tempfile.TemporaryDirectory(prefix="model-server-") as folder:
        spec_file = Path(folder) / "spec.json"
        spec.write(spec_file)
        print(f"[model-server] starting Triton with {python}", file=sys.stderr, flush=True)
        child = subprocess.Popen([python, "-m", "assistant.model_server.triton_app", str(spec_file)],
                                 env=model_server_env(python, settings), start_new_session=True)

        def forward(signum: int, frame: FrameType | None) -> None:
            child.send_signal(signum)

        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, forward)
        return child.wait()
