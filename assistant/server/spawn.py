"""Start `assistant serve` on a free loopback port in a child process (benchmarks and tests drive it)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

__all__ = ["spawn_server"]


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
    for line in proc.stderr:
        if echo_log:
            sys.stderr.write(f"[server] {line}")
        if line.startswith("listening on "):
            threading.Thread(target=_drain, args=(proc.stderr, echo_log, log), daemon=True).start()
            return proc, line.split()[-1]
    proc.wait(30)
    raise RuntimeError(f"the server did not start (exit code {proc.returncode})")
