"""What `assistant bench e2e --layouts` runs its clients against, and what each layout's processes cost.

- `single`: the embedded default, one `assistant serve` process with the models inside it.
- `triton:N`: one `assistant model-server` (Triton) and N gateway processes on one port
  (`assistant serve --models triton://... --workers N`).
- `triton:NxS`: the same with S model servers (`assistant model-server --servers S`, one per GPU), every gateway
  calling all of them.

Each layout is started fresh, swept and stopped in turn, so one run compares them on the same machine, corpus
and seed. Around every point the bench reads what the layout's processes used: CPU cores of each gateway, of the
model server's process tree and of the clients' own process (the three places the limit can be), the GPU's
utilization (nvidia-smi, sampled every 500 ms) and, from Triton's /metrics, how many requests each model's
batcher merged into one execution and how long they queued.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from assistant.bench.report import metric_samples
from assistant.errors import ConfigError
from assistant.server.spawn import spawn_model_server, spawn_server

__all__ = ["Layout", "parse_layouts", "Deployment", "deploy", "LoadProbe", "GpuUtilization",
           "triton_batching_between"]

# Triton's per-model counters (cumulative since it started): requests, executions, and their times.
TRITON_COUNTERS = ("nv_inference_request_success", "nv_inference_exec_count", "nv_inference_queue_duration_us",
                   "nv_inference_compute_infer_duration_us")


@dataclass(frozen=True)
class Layout:
    gateways: int  # 0: the single-process server, models inside it
    model_servers: int = 1

    @property
    def name(self) -> str:
        if not self.gateways:
            return "single"
        return f"triton:{self.gateways}" + (f"x{self.model_servers}" if self.model_servers > 1 else "")


def parse_layouts(text: str) -> tuple[Layout, ...]:
    layouts = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        kind, _, counts = part.partition(":")
        gateways, by, servers = counts.partition("x")
        if part == "single":
            layouts.append(Layout(0))
        elif kind == "triton" and gateways.isdigit() and int(gateways) >= 1 and (
                not by or (servers.isdigit() and int(servers) >= 1)):
            layouts.append(Layout(int(gateways), int(servers or 1)))
        else:
            raise ConfigError(f"--layouts {text!r}: give 'single' and/or 'triton:N' (N gateway processes) or "
                              "'triton:NxS' (and S model servers, one per GPU), e.g. single,triton:2,triton:4x2")
    if not layouts:
        raise ConfigError("--layouts: name at least one layout")
    return tuple(layouts)


@dataclass
class Deployment:
    layout: Layout
    url: str  # where the clients connect
    gateways: list[psutil.Process]  # the processes that carry the websocket traffic
    model_server: psutil.Process | None
    triton_metrics: list[str]  # each model server's Triton /metrics


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(30)


@contextmanager
def deploy(layout: Layout, store: Path, server_args: Sequence[str], config_args: Sequence[str]
           ) -> Iterator[Deployment]:
    """Start the layout (the model server first: gateways check it at start), yield it, stop it."""
    if not layout.gateways:
        proc, url = spawn_server(store, [*config_args, *server_args])
        try:
            yield Deployment(layout, url, [psutil.Process(proc.pid)], None, [])
        finally:
            _stop(proc)
        return
    print(f"[bench] starting {layout.model_servers} model server(s) and {layout.gateways} gateway(s)", flush=True)
    spawned = spawn_model_server(config_args, servers=layout.model_servers)
    model_proc, models_url = spawned.proc, spawned.url
    try:
        proc, url = spawn_server(store, [*config_args, *server_args, "--models", models_url,
                                         "--workers", str(layout.gateways)])
        try:
            supervisor = psutil.Process(proc.pid)
            yield Deployment(layout, url, supervisor.children() or [supervisor], psutil.Process(model_proc.pid),
                             spawned.metrics_urls)
        finally:
            _stop(proc)
    finally:
        _stop(model_proc)


def _cpu_s(process: psutil.Process, tree: bool = False, ended_children: bool = False) -> float:
    """CPU seconds (user + system) of a process, and of its living descendants with `tree`, and of its children
    that ended and were waited for with `ended_children` (the bench's client processes); 0 once it is gone."""
    total = 0.0
    for each in [process, *(process.children(recursive=True) if tree else [])]:
        try:
            times = each.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
        if ended_children and each is process:
            total += times.children_user + times.children_system
    return total


class GpuUtilization:
    """Every GPU's utilization from `nvidia-smi -lms 500`, in the background; nothing where it is missing."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, int, float]] = []  # (monotonic, GPU index, percent)
        self._proc: subprocess.Popen[str] | None = None
        if shutil.which("nvidia-smi"):
            self._proc = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=index,utilization.gpu", "--format=csv,noheader,nounits", "-lms", "500"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            index, _, percent = line.partition(",")
            try:
                self.samples.append((time.monotonic(), int(index), float(percent)))
            except ValueError:
                continue  # "[N/A]" on a GPU that cannot say

    def mean_since(self, began: float) -> list[float] | None:
        """Mean utilization per GPU (percent) since `began`, or None without samples."""
        by_gpu: dict[int, list[float]] = {}
        for t, index, percent in list(self.samples):
            if t >= began:
                by_gpu.setdefault(index, []).append(percent)
        return [round(sum(v) / len(v), 1) for _, v in sorted(by_gpu.items())] or None

    def close(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(10)


def _triton_counters(url: str) -> dict[str, dict[str, float]] | None:
    """One model server's cumulative per-model counters, or None when it does not answer."""
    samples = metric_samples(url)
    if samples is None:
        return None
    out: dict[str, dict[str, float]] = {}
    for sample in samples:
        name = sample.name.removesuffix("_total")
        if name in TRITON_COUNTERS and "model" in sample.labels:
            model = out.setdefault(sample.labels["model"], dict.fromkeys(TRITON_COUNTERS, 0.0))
            model[name] += sample.value
    return out


def _summed(servers: Sequence[dict[str, dict[str, float]] | None]) -> dict[str, dict[str, float]] | None:
    """Counters of several model servers as one (None when there is none, or one did not answer)."""
    if not servers or any(counters is None for counters in servers):
        return None
    out: dict[str, dict[str, float]] = {}
    for counters in servers:
        assert counters is not None
        for model, counts in counters.items():
            total = out.setdefault(model, dict.fromkeys(TRITON_COUNTERS, 0.0))
            for name, value in counts.items():
                total[name] += value
    return out


def triton_batching_between(before: dict[str, dict[str, float]] | None, after: dict[str, dict[str, float]] | None
              ) -> dict[str, Any] | None:
    """Per model over one point: requests, executions, requests merged per execution, mean queue wait, and the
    mean compute time of the execution a request was in. Triton adds an execution's compute time once for every
    request in it (its counters are per request), so the sum is divided by requests, not executions."""
    if before is None or after is None:
        return None
    out = {}
    for model, counts in after.items():
        delta = {k: v - before.get(model, {}).get(k, 0.0) for k, v in counts.items()}
        requests, executions = delta["nv_inference_request_success"], delta["nv_inference_exec_count"]
        if not requests:
            continue
        out[model] = {"requests": int(requests), "executions": int(executions),
                      "requests_per_execution": round(requests / max(executions, 1), 2),
                      "queue_ms_mean": round(delta["nv_inference_queue_duration_us"] / requests / 1e3, 2),
                      "execution_ms_mean": round(delta["nv_inference_compute_infer_duration_us"] / requests / 1e3, 2)}
    return out


def _asr_requests_between(before: dict[str, dict[str, float]] | None, after: dict[str, dict[str, float]] | None
                          ) -> int | None:
    if before is None or after is None:
        return None
    count = "nv_inference_request_success"
    return int(after.get("asr", {}).get(count, 0) - before.get("asr", {}).get(count, 0))


class LoadProbe:
    """What one point cost the layout's processes: `begin()` before the point, `end(wall_s, frames)` after."""

    def __init__(self, deployment: Deployment, gpus: GpuUtilization) -> None:
        self.deployment, self.gpus = deployment, gpus
        self._me = psutil.Process()
        self._began = 0.0
        self._cpu: tuple[list[float], float, float] = ([], 0.0, 0.0)
        self._triton: list[dict[str, dict[str, float]] | None] = []

    def _read_cpu(self) -> tuple[list[float], float, float]:
        model = self.deployment.model_server
        return ([_cpu_s(g) for g in self.deployment.gateways], _cpu_s(model, tree=True) if model else 0.0,
                _cpu_s(self._me, ended_children=True))

    def begin(self) -> None:
        self._began = time.monotonic()
        self._cpu = self._read_cpu()
        self._triton = self._read_triton()

    def _read_triton(self) -> list[dict[str, dict[str, float]] | None]:
        return [_triton_counters(url) for url in self.deployment.triton_metrics]

    def end(self, wall_s: float, frames_sent: int) -> dict[str, Any]:
        gateways, model, clients = self._read_cpu()
        gateways0, model0, clients0 = self._cpu
        n = len(self.deployment.gateways)
        triton = self._read_triton()
        return {
            "layout": self.deployment.layout.name, "gateways": n,
            "gateway_cores": [round((a - b) / wall_s, 2) for a, b in zip(gateways, gateways0, strict=True)],
            "model_server_cores": round((model - model0) / wall_s, 2) if self.deployment.model_server else None,
            # three decimals: one idle-ish client is a few thousandths of a core, which two decimals round to 0
            "client_cores": round((clients - clients0) / wall_s, 3),
            "frames_per_s_per_gateway": round(frames_sent / wall_s / n, 1),
            "gpu_utilization_percent": self.gpus.mean_since(self._began),
            "triton_batching": triton_batching_between(_summed(self._triton), _summed(triton)),
            # how evenly the gateways spread recognition over the model servers (one per GPU)
            "asr_requests_per_model_server": [_asr_requests_between(b, a)
                                              for b, a in zip(self._triton, triton, strict=True)],
        }
