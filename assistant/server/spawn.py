"""Start `assistant serve` on a free loopback port, or `assistant model-server` on free ports, in a child process
(benchmarks and tests drive them)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = ["spawn_server", "spawn_model_server", "ModelServerProcess", "free_ports"]


def _drain(stream: IO[str], echo: bool, log: list[str] | None) -> None:
    # Keep reading the child's log after start-up: a full, unread pipe would block the server mid-write.
    for line in stream:
        if echo:
            sys.stderr.write(f"[server] {line}")
        if log is not None:
            log.append(line)


def spawn_server(store: Path | None, extra_args: Sequence[str] = (), echo_log: bool = False,
                 log: list[str] | None = None, env: Mapping[str, str] | None = None,
                 every_language: bool = True, timeout_s: float = 600.0) -> tuple[subprocess.Popen[str], str]:
    """The running server process and its ws:// URL, once it listens (models loaded, warm-up done) and, with
    `every_language`, once the languages it makes ready in the background are served too (/healthz says "ok"
    and nothing more). `log` collects the server's log lines after start-up (tests look for tracebacks in it)."""
    store_args = ["--store", str(store)] if store is not None else []  # None: the config's ([store] backend)
    proc = subprocess.Popen([sys.executable, "-m", "assistant", "serve", "--port", "0", *store_args, *extra_args],
                            stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    said: list[str] = []
    for line in proc.stderr:
        if echo_log:
            sys.stderr.write(f"[server] {line}")
        if line.startswith("listening on "):
            threading.Thread(target=_drain, args=(proc.stderr, echo_log, log), daemon=True).start()
            url = line.split()[-1]
            if every_language:
                _wait_for_languages(proc, url, timeout_s)
            return proc, url
        said.append(line)
    proc.wait(30)
    last = "".join(said[-15:])  # why it stopped: the caller sees it without re-running with echo
    raise RuntimeError(f"the server did not start (exit code {proc.returncode}); its last words:\n{last}")


def _wait_for_languages(proc: subprocess.Popen[str], url: str, timeout_s: float) -> None:
    health = url.replace("ws://", "http://", 1).rstrip("/") + "/healthz"
    deadline = time.monotonic() + timeout_s
    body = ""
    while time.monotonic() < deadline and proc.poll() is None:
        with urllib.request.urlopen(health, timeout=10) as response:
            body = response.read().decode()
        if body == "ok\n":
            return
        if "could not be made ready" in body:
            break
        time.sleep(0.2)
    raise RuntimeError(f"the server at {url} did not make every language ready: {body.strip()!r}")


def free_ports(count: int) -> list[int]:
    """Ports free on loopback right now (Triton needs numbers; it cannot be given port 0)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _free_port_sets(count: int, servers: int, stride: int, tries: int = 50) -> list[int]:
    """`count` base ports such that base + i * stride is free too for every server i."""
    for _ in range(tries):
        bases = free_ports(count)
        wanted = [base + i * stride for base in bases for i in range(servers)]
        if all(port < 65536 for port in wanted) and _all_free(wanted):
            return bases
    raise RuntimeError(f"no {count} ports found free for {servers} model servers {stride} apart")


def _all_free(ports: Sequence[int]) -> bool:
    sockets = []
    try:
        for port in ports:
            sock = socket.socket()
            sockets.append(sock)
            sock.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        for sock in sockets:
            sock.close()


@dataclass(frozen=True)
class ModelServerProcess:
    proc: subprocess.Popen[str]  # `assistant model-server` (with several servers, their supervisor)
    url: str  # what gateways take (--models): each server's triton:// URL, comma-separated
    metrics_urls: list[str]  # each server's Triton /metrics


def spawn_model_server(extra_args: Sequence[str] = (), echo_log: bool = False, log: list[str] | None = None,
                       grpc_port: int | None = None, http_port: int | None = None, metrics_port: int | None = None,
                       timeout_s: float = 180.0, servers: int = 1, port_stride: int = 10) -> ModelServerProcess:
    """`assistant model-server` on free loopback ports (or the ports given: a restart reuses them), once Triton
    has loaded both models. `servers` > 1: that many model servers under one supervisor, `port_stride` ports
    apart."""
    ports = _free_port_sets(3, servers, port_stride)
    grpc_port, http_port, metrics_port = grpc_port or ports[0], http_port or ports[1], metrics_port or ports[2]
    proc = subprocess.Popen([sys.executable, "-m", "assistant", "model-server", *extra_args,
                             "--servers", str(servers),
                             "--set", f"model_server.grpc_port={grpc_port}",
                             "--set", f"model_server.http_port={http_port}",
                             "--set", f"model_server.metrics_port={metrics_port}",
                             "--set", f"model_server.port_stride={port_stride}"],
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    # SIGTERM, not SIGKILL: a supervisor of several servers stops its children on it
    timer = threading.Timer(timeout_s, proc.terminate)  # a model server that never gets ready must not hang a test
    timer.start()
    try:
        for line in proc.stderr:
            if echo_log:
                sys.stderr.write(f"[model-server] {line}")
            if line.startswith("[model-server] ready"):
                threading.Thread(target=_drain, args=(proc.stderr, echo_log, log), daemon=True).start()
                step = range(0, servers * port_stride, port_stride)
                return ModelServerProcess(proc, ",".join(f"triton://127.0.0.1:{grpc_port + i}" for i in step),
                                          [f"http://127.0.0.1:{metrics_port + i}/metrics" for i in step])
    finally:
        timer.cancel()
    proc.wait(30)
    raise RuntimeError(f"the model server did not start (exit code {proc.returncode})")
