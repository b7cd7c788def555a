"""docs/architecture.md names each seam's file and types; this holds it to the code: every file named in its
seams table exists, and defines (or binds at module level) every type named beside it. Files named anywhere
else on the page exist too."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "architecture.md"


def _seams() -> list[tuple[str, list[str]]]:
    table = DOC.read_text().split("## The seams, checked against the code", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:-1] for line in table.splitlines() if line.startswith("| ") and "`" in line]
    return [(re.findall(r"`([^`]+)`", file)[0], re.findall(r"`([^`]+)`", types)) for _, file, types in rows]


def _defined(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_the_seams_table_names_files_and_types_that_exist() -> None:
    seams = _seams()
    assert len(seams) >= 10
    missing = [f"{file}: {name}" for file, names in seams for name in names
               if not (REPO / file).is_file() or name not in _defined(REPO / file)]
    assert not missing, missing


def test_every_module_the_page_names_exists() -> None:
    named = set(re.findall(r"\b((?:assistant|engines|models|tests)/[\w/]+\.py)\b", DOC.read_text()))
    named |= {f"assistant/{m}" for m in re.findall(r"\b((?:server|turn|booking|nlu|asr|audio|language|bench)/"
                                                    r"[\w/]+\.py)\b", DOC.read_text())}
    gone = sorted(path for path in named if not (REPO / path).is_file() and not path.startswith("assistant/assistant"))
    assert not gone, gone
