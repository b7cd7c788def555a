"""`--before CHECKOUT`: a benchmark run on the code before a change, in the same run as on the code now.

A model or rule change is shown by what it changes on the same corpus, machine and load. The same benchmark
command is run in CHECKOUT (a worktree of the commit before: `git worktree add /tmp/before HEAD~1`), as its own
process with its own code and its own model (found in the shared model cache by that code's recipe key, built
there if missing), on this checkout's corpus, so both runs hear the same audio: first, or (a real-time benchmark)
beside this one. Its report is kept whole under "before" in this run's report.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from assistant.errors import ConfigError

__all__ = ["run_before", "forwarded_args"]

_DROPPED = ("--before", "--json", "--plot")  # this run's own: the run before writes to a file of its own
_PATHS = ("--corpus", "--pauses", "--plain", "--config")  # named from here: made absolute for the run there


def forwarded_args(argv: Sequence[str]) -> list[str]:
    """This run's options (after `assistant bench NAME`) for the run before: its own outputs left out, paths
    made absolute, and the defaults of paths given explicitly (the corpus is this checkout's)."""
    out: list[str] = []
    items = list(argv)
    i = 0
    while i < len(items):
        item = items[i]
        name, equals, value = item.partition("=")
        takes_value = name.startswith("--") and not equals and i + 1 < len(items)
        if name in _DROPPED:
            i += 1 if equals else 2
            continue
        if name in _PATHS:
            value = value if equals else items[i + 1] if takes_value else ""
            out += [name, str(Path(value).resolve())]
            i += 1 if equals else 2
            continue
        out.append(item)
        i += 1
    return out


def run_before(checkout: Path, bench: str, args: Sequence[str], beside: bool = False
               ) -> Callable[[], dict[str, Any]]:
    """Starts `assistant bench BENCH ARGS --json ...` in `checkout`; the returned call waits for it and gives its
    report. ARGS must name files by absolute paths (the process runs there). `beside`: let it run while this run
    does its own (a real-time benchmark, whose servers mostly wait for audio: both then meet the same load);
    otherwise it is waited for here, before this run starts."""
    if not (checkout / "assistant" / "__main__.py").is_file():
        raise ConfigError(f"--before {checkout}: not a checkout of this project (no assistant/__main__.py)")
    scratch = Path(tempfile.mkdtemp(prefix="bench-before-"))
    report = scratch / "before.json"
    command = [sys.executable, "-m", "assistant", "bench", bench, *args, "--json", str(report)]
    print(f"[bench] before: {' '.join(command[3:])} (in {checkout})", file=sys.stderr, flush=True)
    process = subprocess.Popen(command, cwd=checkout)

    def finished() -> dict[str, Any]:
        if process.wait() != 0:
            raise RuntimeError(f"the run before (in {checkout}) failed: exit {process.returncode}")
        before: dict[str, Any] = json.loads(report.read_text())
        shutil.rmtree(scratch, ignore_errors=True)
        before["checkout"] = str(checkout)
        commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=False).stdout.strip()
        before["commit"] = commit or None
        before["beside"] = beside
        return before

    if not beside:
        done = finished()
        return lambda: done
    return finished
