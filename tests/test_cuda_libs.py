"""Running CTranslate2's CUDA 12 build on cuBLAS 13: the link folder, and the one-time restart."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assistant.asr import cuda_libs


def test_links_name_cublas_12_after_the_cublas_13_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cuda = tmp_path / "cuda"
    cuda.mkdir()
    for lib in ("libcublas.so.13", "libcublasLt.so.13"):
        (cuda / lib).write_bytes(b"")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(cuda))
    monkeypatch.setattr(cuda_libs, "_loadable", lambda name: False)  # this machine has no cuBLAS 12
    folder = cuda_libs.cublas12_links(tmp_path / "cache")
    assert folder is not None
    assert (folder / "libcublas.so.12").resolve() == (cuda / "libcublas.so.13").resolve()
    assert (folder / "libcublasLt.so.12").resolve() == (cuda / "libcublasLt.so.13").resolve()
    assert cuda_libs.cublas12_links(tmp_path / "cache") == folder  # again: the same links, no error


def test_nothing_is_done_where_cublas_12_loads_or_no_cublas_13_exists(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cuda_libs, "_loadable", lambda name: True)
    assert cuda_libs.cublas12_links(tmp_path) is None
    monkeypatch.setattr(cuda_libs, "_loadable", lambda name: False)
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))
    monkeypatch.setattr(cuda_libs, "_candidate_dirs", lambda: [tmp_path])
    assert cuda_libs.cublas12_links(tmp_path) is None


def test_the_restart_happens_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ASSISTANT_CUBLAS12_LINKS", str(tmp_path))
    monkeypatch.setattr(os, "execve", lambda *a: pytest.fail("re-executed although already restarted"))
    cuda_libs.reexec_with_cublas12_links(tmp_path)
    assert "CUDA 13 only" in capsys.readouterr().err


def test_the_restart_puts_the_links_first_on_the_library_path(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ASSISTANT_CUBLAS12_LINKS", raising=False)
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/other")
    monkeypatch.setattr(cuda_libs, "cublas12_links", lambda cache: tmp_path / "links")
    calls = []
    monkeypatch.setattr(os, "execve", lambda exe, argv, env: calls.append((exe, argv, env)))
    cuda_libs.reexec_with_cublas12_links(tmp_path)
    (exe, argv, env), = calls
    assert env["LD_LIBRARY_PATH"] == f"{tmp_path / 'links'}:/opt/other"
    assert env["ASSISTANT_CUBLAS12_LINKS"] == str(tmp_path / "links") and argv[0] == exe


def test_loadable_reports_a_missing_library_as_false() -> None:
    assert cuda_libs._loadable("libdoes-not-exist.so.1") is False
