"""Languages made ready behind a server that already serves: the Chinese model trained (minutes on a laptop) and
its recognizer loaded while English is answered.

A language being made ready is in one of four states: building (its model is being trained, with a stage and
the fraction done), loading (its model and recognizer are being loaded), ready, or failed (with the reason).
Sessions that ask for it meanwhile are refused with `language_unavailable` saying which, and how far along;
/healthz and /metrics show the same. The work itself is the wiring's (assistant/wiring.py): `make` returns what
`install` puts into the workers, so nothing here knows what a model is.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from assistant.language.profile import Language

__all__ = ["LanguageState", "LanguageBuilds", "Progress", "train_in_subprocess"]

log = logging.getLogger(__name__)

T = TypeVar("T")
Progress = Callable[[str, float], None]  # (stage, fraction of the build done)


@dataclass(frozen=True)
class LanguageState:
    language: Language
    state: str = "building"  # building | loading | ready | failed
    stage: str = ""  # while building: the build's stage (generating, training, checking)
    done: float = 0.0  # while building: the fraction of the build done
    reason: str = ""  # when failed: for the server's log, never sent to a client

    def describe(self) -> str:
        name = self.language.name
        if self.state == "building":
            return f"{name} is still being built ({self.stage or 'starting'}, {self.done:.0%} done)"
        if self.state == "loading":
            return f"{name} is being loaded (built; ready in seconds)"
        if self.state == "failed":  # the reason stays in the server's log: clients see no paths or internals
            return f"{name} could not be made ready (the server's log says why)"
        return f"{name} is ready"


class _Build(Generic[T]):
    def __init__(self, builds: LanguageBuilds, language: Language, make: Callable[[Progress, Callable[[], None]], T],
                 install: Callable[[T], None]) -> None:
        self.builds, self.language, self.make, self.install = builds, language, make, install

    def run(self) -> None:
        try:
            made = self.make(self._progress, self._loading)
            self.install(made)
        except Exception as exc:  # reported to those who ask; the server goes on serving the others
            log.exception("making %s ready failed", self.language.name)
            self.builds.set(LanguageState(self.language, "failed", reason=f"{type(exc).__name__}: {exc}"))
            return
        self.builds.set(LanguageState(self.language, "ready", done=1.0))
        print(f"[serve] {self.language.name} is ready", file=sys.stderr, flush=True)

    def _progress(self, stage: str, done: float) -> None:
        before = self.builds.state(self.language)
        now = LanguageState(self.language, "building", stage, done)
        self.builds.set(now)
        if before is None or before.stage != stage or int(done * 10) != int(before.done * 10):
            print(f"[serve] {now.describe()}", file=sys.stderr, flush=True)  # every tenth, not every step

    def _loading(self) -> None:
        self.builds.set(LanguageState(self.language, "loading", done=1.0))


class LanguageBuilds:
    """The languages being made ready, and what each has come to (thread-safe: written by the build threads,
    read by the event loop)."""

    def __init__(self) -> None:
        self._states: dict[Language, LanguageState] = {}
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self.listeners: list[Callable[[LanguageState], None]] = []  # the metrics, told every change

    def start(self, language: Language, make: Callable[[Progress, Callable[[], None]], T],
              install: Callable[[T], None]) -> threading.Thread:
        """Runs `make(progress, loading)` in a thread of its own, then `install` with what it made. `make` calls
        progress(stage, done) while it builds and loading() once it only loads."""
        self.set(LanguageState(language))
        thread = threading.Thread(target=_Build(self, language, make, install).run, name=f"language-{language.code}",
                                  daemon=True)
        self._threads.append(thread)
        thread.start()
        return thread

    def set(self, state: LanguageState) -> None:
        with self._lock:
            self._states[state.language] = state
        for listener in list(self.listeners):
            listener(state)

    def state(self, language: Language) -> LanguageState | None:
        with self._lock:
            return self._states.get(language)

    def pending(self) -> list[LanguageState]:
        """Languages not ready (building, loading or failed)."""
        with self._lock:
            return [state for state in self._states.values() if state.state != "ready"]

    def all(self) -> list[LanguageState]:
        with self._lock:
            return list(self._states.values())

    def join(self, timeout: float | None = None) -> None:
        for thread in self._threads:
            thread.join(timeout)


def train_in_subprocess(language: str, cache_dir: Path, log_file: Path) -> Callable[[Progress], None]:
    """The language's model built by `assistant train` in a process of its own at a lower priority: the server
    keeps the CPU first for the users it serves, and torch (the trainer) never enters its memory. The child's
    progress lines come back to `progress`; its log goes to `log_file`."""

    def build(progress: Progress) -> None:
        command = [sys.executable, "-m", "assistant", "train", "--language", language, "--progress-json",
                   "--no-ship", "--set", f"paths.cache_dir={json.dumps(str(cache_dir))}"]
        if shutil.which("nice"):
            command = ["nice", "-n", "10", *command]
        log_file.parent.mkdir(parents=True, exist_ok=True)
        with log_file.open("ab") as log_out:
            # In the server's process group: Ctrl-C in its terminal stops both. A server killed alone leaves the
            # build to finish (the next start finds the model, or waits on the build's lock for it).
            child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log_out, text=True)
            assert child.stdout is not None
            for line in child.stdout:
                if line.startswith('{"stage"'):
                    report = json.loads(line)
                    progress(str(report["stage"]), float(report["done"]))
            if child.wait() != 0:
                raise RuntimeError(f"building the model failed (exit {child.returncode}); see {log_file}")

    return build

