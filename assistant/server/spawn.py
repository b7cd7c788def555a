"""Start `assistant serve` on a free loopback port, or `assistant model-server` on free ports, in a child process
(benchmarks and tests drive them)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

__all__ = ["spawn_server", "spawn_model_server", "free_ports"]


def _drain(stream: IO[str], echo: bool, log: list[str] | None) -> None:
    # Keep reading the child's log after start-up: a full, unread pipe would block the server mid-write.
    for line in stream:
        if echo:
            sys.stderr.write(f"[server] {line}")
        if log is not None:
            log.append(line)


def spawn_server(store: Path, extra_args: Sequence[str] = (), echo_log: bool = False,
                 log: list[str] | None = None, env: Mapping[str, str] | None = None
                 ) -> tuple[subprocess.Popen[str], str]:
    """The running server process and its ws:// URL, once it listens (models loaded, warm-up done). `log`
    collects the server's log lines after start-up (tests look for tracebacks in it)."""
    proc = subprocess.Popen([sys.executable, "-m", "assistant", "serve", "--port", "0", "--store", str(store),
                             *extra_args], stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    said: list[str] = []
    for line in proc.stderr:
        if echo_log:
            sys.stderr.write(f"[server] {line}")
        if line.startswith("listening on "):
            threading.Thread(target=_drain, args=(proc.stderr, echo_log, log), daemon=True).start()
            return proc, line.split()[-1]
        said.append(line)
    proc.wait(30)
    last = "".join(said[-15:])  # why it stopped: the caller sees it without re-running with echo
    raise RuntimeError(f"the server did not start (exit code {proc.returncode}); its last words:\n{last}")


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


def spawn_model_server(extra_args: Sequence[str] = (), echo_log: bool = False, log: list[str] | None = None,
                       grpc_port: int | None = None, http_port: int | None = None, metrics_port: int | None = None,
                       timeout_s: float = 180.0) -> tuple[subprocess.Popen[str], str]:
    """`assistant model-server` on free loopback ports (or the ports given: a restart reuses them), and the
    triton://127.0.0.1:PORT URL gateways take, once Triton has loaded both models."""
    ports = free_ports(3)
    grpc_port, http_port, metrics_port = grpc_port or ports[0], http_port or ports[1], metrics_port or ports[2]
    proc = subprocess.Popen([sys.executable, "-m", "assistant", "model-server", *extra_args,
                             "--set", f"model_server.grpc_port={grpc_port}",
                             "--set", f"model_server.http_port={http_port}",
                             "--set", f"model_server.metrics_port={metrics_port}"],
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    timer = threading.Timer(timeout_s, proc.kill)  # a model server that never gets ready must not hang a test
    timer.start()
    try:
        for line in proc.stderr:
            if echo_log:
                sys.stderr.write(f"[model-server] {line}")
            if line.startswith("[model-server] ready"):
                threading.Thread(target=_drain, args=(proc.stderr, echo_log, log), daemon=True).start()
                return proc, f"triton://127.0.0.1:{grpc_port}"
    finally:
        timer.cancel()
    proc.wait(30)
    raise RuntimeError(f"the model server did not start (exit code {proc.returncode})")
