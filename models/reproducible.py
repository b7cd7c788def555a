"""The one numeric setting every model build runs under, so that a build on any x86 processor with AVX2 writes
the same bytes as the shipped files (checked by `assistant train --check` in CI).

torch picks its kernels by instruction set, and each rounds differently: one seeded epoch gave five different
weight hashes on one AVX-512 machine for five settings (DEVELOPERS.md). So a build holds ATen's own kernels and
oneDNN to AVX2, MKL to its conditional numerical reproducibility mode, and both to two threads (a reduction's
order follows the threads). MKL honours a named branch (`MKL_CBWR=AVX2`) only on Intel processors: on an AMD EPYC
its verbose log said `CNR:AUTO` for it, so the AVX2 branch an Intel build took would not be the one an AMD build
took. `COMPATIBLE` is the branch every x86-64 processor runs (its verbose log says `CNR:COMPATIBLE` there); it
costs time, not bits: a 384 x 1536 layer's forward and backward took 1.7x as long (2 cores).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

__all__ = ["BUILD_THREADS", "PINNED_ENVIRONMENT", "pinned", "run_pinned"]

BUILD_THREADS = 2  # the CI machine's cores; a bigger machine builds no faster in bits, only in time
PINNED_ENVIRONMENT: Mapping[str, str] = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "COMPATIBLE,STRICT",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "OMP_NUM_THREADS": str(BUILD_THREADS),
    "MKL_NUM_THREADS": str(BUILD_THREADS),
    "MKL_DYNAMIC": "FALSE",  # else MKL may take fewer threads, e.g. one per physical core of a hyper-threaded pair
}


def pinned() -> bool:
    return all(os.environ.get(name) == value for name, value in PINNED_ENVIRONMENT.items())


def run_pinned() -> None:
    """This command again, in place, under the pinned environment (the libraries read it when they load, so it
    cannot be set from inside a process that may already have loaded them)."""
    if pinned():
        return
    print("[nlu] running the build held to AVX2 and 2 threads (models/reproducible.py)", file=sys.stderr, flush=True)
    os.execve(sys.executable, [sys.executable, "-m", "assistant", *sys.argv[1:]],
              {**os.environ, **PINNED_ENVIRONMENT})
