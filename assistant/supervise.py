"""A child process a supervisor keeps running: started with a name, its log lines relayed with that name, a flag
set when it says it is ready, and restartable. Used for the gateways of `assistant serve --workers N` and the
model servers of `assistant model-server --servers N`."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from types import FrameType
from typing import IO

__all__ = ["Child", "stop_children", "supervise", "RESTART_PAUSE_S"]

RESTART_PAUSE_S = 1.0


class Child:
    def __init__(self, name: str, command: Sequence[str], ready_marker: str,
                 env: Mapping[str, str] | None = None, new_session: bool = False) -> None:
        self.name, self.command, self.ready_marker = name, list(command), ready_marker
        self.env, self.new_session = env, new_session
        self.ready = threading.Event()
        self.proc = self._start()

    def _start(self) -> subprocess.Popen[str]:
        # new_session: a terminal's Ctrl-C reaches only the supervisor, which passes it on once
        proc = subprocess.Popen(self.command, stderr=subprocess.PIPE, text=True, env=self.env,
                                start_new_session=self.new_session)
        assert proc.stderr is not None
        threading.Thread(target=self._relay, args=(proc.stderr,), daemon=True).start()
        return proc

    def _relay(self, stream: IO[str]) -> None:
        for line in stream:
            if line.startswith(self.ready_marker):
                self.ready.set()
            sys.stderr.write(f"[{self.name}] {line}")
            sys.stderr.flush()

    def restart(self) -> None:
        self.ready.clear()
        self.proc = self._start()


def stop_children(children: Sequence[Child], wait_s: float = 15.0) -> None:
    """SIGTERM to every child still running, then SIGKILL to any that has not stopped after `wait_s`."""
    for child in children:
        if child.proc.poll() is None:
            child.proc.terminate()
    for child in children:
        try:
            child.proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            child.proc.kill()
            child.proc.wait(wait_s)


def supervise(children: Sequence[Child], announce: Callable[[], None], who: str, lost: str) -> int:
    """Keep `children` running until SIGTERM or SIGINT, then stop them all; returns the exit code. `announce()`
    runs once, when every child has said it is ready. A child that dies after that is restarted (`lost` says
    what went with it); one that dies before it is ready means it cannot start (bad config, port taken): all
    are stopped rather than restarted in a loop. `who` prefixes the supervisor's own lines ("serve")."""
    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)
    announced = False
    try:
        while not stopping.is_set():
            if not announced and all(child.ready.is_set() for child in children):
                announce()
                announced = True
            for child in children:
                code = child.proc.poll()
                if code is None or stopping.is_set():
                    continue
                if not announced:
                    print(f"[{who}] {child.name} exited with code {code} before it was ready", file=sys.stderr,
                          flush=True)
                    return code or 1
                print(f"[{who}] {child.name} exited with code {code}; {lost}; restarting", file=sys.stderr,
                      flush=True)
                time.sleep(RESTART_PAUSE_S)
                child.restart()
            stopping.wait(0.2)
        return 0
    finally:
        stop_children(children)
