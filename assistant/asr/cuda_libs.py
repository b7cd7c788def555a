"""Let CTranslate2's CUDA 12 build run on a machine that has only CUDA 13's cuBLAS.

The faster-whisper wheels' CTranslate2 loads `libcublas.so.12` by name; the calls it makes exist unchanged in
cuBLAS 13. Where only `libcublas.so.13` is installed, a folder of two links (`libcublas.so.12` ->
`libcublas.so.13`, the same for cublasLt) first on the library path makes it run. The dynamic loader reads
LD_LIBRARY_PATH once at process start, so the process re-executes itself once with the folder added, saying so.
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

__all__ = ["cublas12_links", "reexec_with_cublas12_links"]

_MARK = "ASSISTANT_CUBLAS12_LINKS"
_LIBS = ("libcublas.so", "libcublasLt.so")


def _loadable(name: str) -> bool:
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def _candidate_dirs() -> list[Path]:
    dirs = [Path(p) for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
    dirs += [Path("/usr/local/cuda/lib64"), Path("/usr/local/cuda/targets/x86_64-linux/lib"),
             Path("/usr/lib/x86_64-linux-gnu")]
    for site in map(Path, sys.path):  # pip's nvidia-cublas wheels
        dirs += [site / "nvidia" / "cu13" / "lib", site / "nvidia" / "cublas" / "lib"]
    return dirs


def cublas12_links(cache_dir: Path) -> Path | None:
    """A folder where the CUDA 12 names point at cuBLAS 13, when that is what this machine needs; else None
    (cuBLAS 12 is there, or no cuBLAS 13 was found either)."""
    if _loadable("libcublas.so.12"):
        return None
    found = {}
    for lib in _LIBS:
        found[lib] = next((d / f"{lib}.13" for d in _candidate_dirs() if (d / f"{lib}.13").exists()), None)
    if not all(found.values()):
        return None
    folder = cache_dir / "cublas12-links"
    folder.mkdir(parents=True, exist_ok=True)
    for lib, target in found.items():
        link = folder / f"{lib}.12"
        if not link.exists() or link.resolve() != Path(str(target)).resolve():
            link.unlink(missing_ok=True)
            link.symlink_to(str(target))
    return folder


def reexec_with_cublas12_links(cache_dir: Path) -> None:
    """Restart this process with the link folder on LD_LIBRARY_PATH when it is needed (once: a marker in the
    environment stops a loop). Returns only when nothing had to be done."""
    if os.environ.get(_MARK):
        print(f"[asr] CUDA 13 only: CTranslate2 runs on cuBLAS 13 through the links in {os.environ[_MARK]}",
              file=sys.stderr, flush=True)
        return
    folder = cublas12_links(cache_dir)
    if folder is None:
        return
    print(f"[asr] this machine has cuBLAS 13 but not 12, which CTranslate2 loads by name; restarting with "
          f"{folder} (links to cuBLAS 13) first on LD_LIBRARY_PATH", file=sys.stderr, flush=True)
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = f"{folder}:{env['LD_LIBRARY_PATH']}" if env.get("LD_LIBRARY_PATH") else str(folder)
    env[_MARK] = str(folder)
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)
