"""`assistant serve --workers N`: N server processes on one port, and a supervisor that keeps them running.

One process's event loop carries every audio frame of its connections (websocket decoding, VAD, endpointing);
at a few hundred real-time clients that loop, not the GPU, is the limit. N processes each bind the same port
with SO_REUSEPORT and the kernel spreads new connections across them. Each process keeps its own connections'
state (stream, dialogue, store access); the booking store is one SQLite file (WAL, one transaction per command,
so processes serialize their writes) and, with `--models triton://...`, the models are one model server's,
whose batcher merges the requests of every process.

The supervisor holds the port (a bound, never listening socket with SO_REUSEPORT, so no other program takes it
between restarts), prefixes each worker's log lines with its name, prints "listening on ..." once all workers
listen, restarts a worker that dies (its own connections are lost, no one else's) and stops them all on
SIGTERM or SIGINT.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from types import FrameType
from typing import IO

__all__ = ["reserve_port", "run_workers", "without_workers_flag"]

RESTART_PAUSE_S = 1.0


def reserve_port(host: str, port: int) -> socket.socket:
    """A socket bound to host:port with SO_REUSEPORT and never listening: it fixes the port number (0: a free
    one) for the workers, which bind it too, and receives no connections itself."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    return sock


def without_workers_flag(argv: Sequence[str]) -> list[str]:
    """The command line of one worker: the supervisor's, less --workers."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--workers":
            skip = True
        elif not arg.startswith("--workers="):
            out.append(arg)
    return out


class _Worker:
    def __init__(self, name: str, command: list[str], on_listening: threading.Event) -> None:
        self.name, self.command, self.on_listening = name, command, on_listening
        self.proc = self._start()

    def _start(self) -> subprocess.Popen[str]:
        proc = subprocess.Popen(self.command, stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None
        threading.Thread(target=self._relay, args=(proc.stderr,), daemon=True).start()
        return proc

    def _relay(self, stream: IO[str]) -> None:
        for line in stream:
            if line.startswith("listening on "):
                self.on_listening.set()
            sys.stderr.write(f"[{self.name}] {line}")
            sys.stderr.flush()

    def restart(self) -> None:
        self.proc = self._start()


def run_workers(argv: Sequence[str], workers: int, host: str, port: int) -> int:
    """Run `assistant <argv> --port P --reuse-port` `workers` times; returns when stopped by a signal."""
    held = reserve_port(host, port)
    port = held.getsockname()[1]
    command = [sys.executable, "-m", "assistant", *without_workers_flag(argv), "--port", str(port), "--reuse-port"]
    events = [threading.Event() for _ in range(workers)]
    pool = [_Worker(f"gateway {i}", command, events[i]) for i in range(workers)]
    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)
    announced = False
    try:
        while not stopping.is_set():
            if not announced and all(e.is_set() for e in events):
                shown = f"[{host}]" if ":" in host else host
                print(f"listening on ws://{shown}:{port}", file=sys.stderr, flush=True)
                print(f"[serve] {workers} gateway processes share port {port} (SO_REUSEPORT)", file=sys.stderr,
                      flush=True)
                announced = True
            for worker in pool:
                code = worker.proc.poll()
                if code is not None and not stopping.is_set():
                    if not announced:  # a worker that cannot start (bad config, port taken): stop, do not loop
                        print(f"[serve] {worker.name} exited with code {code} before listening", file=sys.stderr,
                              flush=True)
                        return code or 1
                    print(f"[serve] {worker.name} exited with code {code}; its connections are lost; restarting",
                          file=sys.stderr, flush=True)
                    time.sleep(RESTART_PAUSE_S)
                    worker.restart()
            stopping.wait(0.2)
        return 0
    finally:
        for worker in pool:
            if worker.proc.poll() is None:
                worker.proc.terminate()
        for worker in pool:
            try:
                worker.proc.wait(15)
            except subprocess.TimeoutExpired:
                worker.proc.kill()
        held.close()
