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

import socket
import sys
from collections.abc import Sequence

from assistant.supervise import Child, supervise

__all__ = ["reserve_port", "run_workers", "without_workers_flag"]


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


def run_workers(argv: Sequence[str], workers: int, host: str, port: int) -> int:
    """Run `assistant <argv> --port P --reuse-port` `workers` times; returns when stopped by a signal."""
    held = reserve_port(host, port)
    port = held.getsockname()[1]
    command = [sys.executable, "-m", "assistant", *without_workers_flag(argv), "--port", str(port), "--reuse-port"]
    pool = [Child(f"gateway {i}", command, "listening on ") for i in range(workers)]

    def announce() -> None:
        shown = f"[{host}]" if ":" in host else host
        print(f"listening on ws://{shown}:{port}", file=sys.stderr, flush=True)
        print(f"[serve] {workers} gateway processes share port {port} (SO_REUSEPORT)", file=sys.stderr, flush=True)

    try:
        return supervise(pool, announce, "serve", "its connections are lost")
    finally:
        held.close()
