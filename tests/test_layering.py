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
    # the dispatcher, dialogue and SQLite store are put together in one place
    builders = {str(path.relative_to(REPO)) for path in _files("assistant") if "SqliteStore(" in path.read_text()}
    assert builders == {"assistant/wiring.py"}
