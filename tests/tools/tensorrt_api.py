"""TensorRT's real Python API, importable for reading on a machine without TensorRT's libraries.

The bindings wheels on PyPI (tensorrt-cu13-bindings for 11.x, tensorrt-cu12-bindings for 10.x) are real; the
libnvinfer libraries they link against are not obtainable without NVIDIA's index. Inert stand-ins for the few
entry points the bindings import let `import tensorrt` load, so every class, enum, method and signature of that
exact release can be checked; nothing can run (creating a Builder raises). Wheels and stand-ins are cached.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

__all__ = ["RELEASES", "api_environment"]

RELEASES = {"11.4.0.106": "tensorrt-cu13-bindings", "10.16.1.11": "tensorrt-cu12-bindings"}
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "voice-assistant-tests" / "trt-api"


def _run(*cmd: str) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def api_environment(version: str) -> dict[str, str]:
    """Environment variables under which `python -c 'import tensorrt'` loads release `version` for reading."""
    py = f"{sys.version_info[0]}{sys.version_info[1]}"
    folder = CACHE / f"{version}-cp{py}"
    site, lib = folder / "site", folder / "lib"
    if not (folder / "ready").exists():
        for sub in (site, lib, folder / "wheel"):
            sub.mkdir(parents=True, exist_ok=True)
        _run(sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "--python-version", py,
             "--implementation", "cp", "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64",
             "-d", str(folder / "wheel"), f"{RELEASES[version]}=={version}")
        with zipfile.ZipFile(next((folder / "wheel").glob("*.whl"))) as wheel:
            wheel.extractall(site)
        binding = next((site / "tensorrt_bindings").glob("tensorrt*.so"))
        # one do-nothing function per TensorRT entry point the bindings import
        undefined = _run("nm", "-D", "--undefined-only", str(binding))
        entry_points = sorted({m.group(1) for m in re.finditer(r"\bU ((?:create|get|init)[A-Za-z_]*)", undefined)})
        stub = lib / "stub.c"
        stub.write_text("".join(f"long {name}(void){{return 0;}}\n" for name in entry_points))
        for needed in re.findall(r"Shared library: \[(libnv[^\]]*)\]", _run("readelf", "-d", str(binding))):
            _run("gcc", "-shared", "-fPIC", "-o", str(lib / needed), str(stub))
        (site / "tensorrt.py").write_text("from tensorrt_bindings import *  # noqa: F403\n"
                                          "from tensorrt_bindings import __version__  # noqa: F401\n")
        (folder / "ready").touch()
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [str(lib), env.get("LD_LIBRARY_PATH")]))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), str(Path(__file__).resolve().parents[2]),
                                                      env.get("PYTHONPATH")]))
    return env
