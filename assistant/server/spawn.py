"""Start `assistant serve` on a free loopback port in a child process (benchmarks and tests drive it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

__all__ = ["spawn_server"]


def spawn_server(store: Path) -> tuple[subprocess.Popen[str], str]:
    """The running server process and its ws:// URL, once it listens (models loaded, warm-up done)."""
    proc = subprocess.Popen([sys.executable, "-m", "assistant", "serve", "--port", "0", "--store", str(store)],
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("listening on "):
            return proc, line.split()[-1]
    proc.wait(30)
    raise RuntimeError(f"the server did not start (exit code {proc.returncode})")
