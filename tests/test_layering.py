"""The seams the layout promises, checked on the source: the runtime never imports the training recipe, and
only the composition root (assistant/wiring.py) and the commands build the app."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# What a running server or `assistant parse` executes: none of it may need models/ (torch, the generator).
RUNTIME = ["assistant/audio", "assistant/asr", "assistant/booking", "assistant/clients", "assistant/nlu",
           "assistant/turn", "assistant/server", "assistant/config.py", "assistant/events.py",
           "assistant/text_pipeline.py", "engines"]


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def _files(where: str) -> list[Path]:
    path = REPO / where
    return sorted(path.rglob("*.py")) if path.is_dir() else [path]


@pytest.mark.parametrize("where", RUNTIME)
def test_the_runtime_does_not_import_the_build_side(where: str) -> None:
    offenders = {f"{path.relative_to(REPO)}: {name}" for path in _files(where) for name in _imports(path)
                 if name == "models" or name.startswith("models.")}
    assert not offenders


def test_only_the_wiring_assembles_the_booking_side() -> None:
    # the dispatcher, dialogue and the stores (SQLite, CalDAV) are put together in one place
    for store in ("SqliteStore(", "CalDavStore("):
        builders = {str(path.relative_to(REPO)) for path in _files("assistant") if store in path.read_text()}
        assert builders == {"assistant/wiring.py"}, store


def test_the_default_suite_and_ci_run_the_accuracy_bars() -> None:
    # The processor-dependent bars are marked (pytest -m "not accuracy" leaves them out on a machine whose int8
    # rounds differently), but nothing that CI runs deselects them.
    import tomllib

    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "accuracy" in " ".join(options["markers"]) and "-m" not in options["addopts"].split()
    test_target = (REPO / "Makefile").read_text().split("\ntest:", 1)[1].split("\n\n", 1)[0]
    pytest_args = test_target.split("-m pytest", 1)[1].split()  # what follows `python -m pytest`
    assert "-m" not in pytest_args and "make test" in (REPO / ".ci" / "run").read_text()
