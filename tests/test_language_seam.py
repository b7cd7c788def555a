"""The language seam, checked on the source (issue 32): the languages are listed in one module
(assistant/language/registry.py), and nothing outside assistant/language/ branches on a language code or a script.

What counts, read from the syntax tree of every module of assistant/, engines/ and models/ (docstrings aside):
- a literal (tuple, list, set, dict keys) that holds two or more language codes is a second list of languages;
- only the registry imports the languages' profiles;
- outside assistant/language/: a comparison with a language code (`language == "zh"`, `code in ("en", "zh")`), a
  dict keyed by one, or a text holding a boundary of the Han script's ranges (a hand-written script test);
- Han text outside assistant/language/ only where it is data: the training requests (models/datagen/, whose
  English generator also writes Chinese as text that is no English request) and the Chinese expression
  benchmark's table;
- outside assistant/language/ and the training requests, no word list of a language: a pattern that alternates
  three or more words ("uh|um|well"), or a collection holding three or more of a language's function words
  ({"a", "the", "at", ...}). Code asks the profiles for words (assistant/language/patterns.py).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from assistant.language.registry import CODES, LANGUAGES
from assistant.language.script import HAN

REPO = Path(__file__).resolve().parent.parent
SOURCES = sorted(p for top in ("assistant", "engines", "models") for p in (REPO / top).rglob("*.py"))
LANGUAGE_PACKAGE = REPO / "assistant" / "language"
REGISTRY = LANGUAGE_PACKAGE / "registry.py"
HAN_DATA = {*(REPO / "models" / "datagen").glob("*.py"), REPO / "assistant" / "bench" / "zh_expressions.py"}
# a character range that starts or ends at a Han range's bound: "[\u4e00-\u9fff]"
_BOUNDS = (HAN[0], HAN[3], HAN[2], HAN[5])
_SCRIPT_RANGES = (*(f"{b}-" for b in _BOUNDS[:2]), *(f"-{b}" for b in _BOUNDS[2:]),  # as written, and escaped
                  *(f"\\u{ord(b):04x}-" for b in _BOUNDS[:2]), *(f"-\\u{ord(b):04x}" for b in _BOUNDS[2:]))


def _name(path: Path) -> str:
    return str(path.relative_to(REPO))


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _codes(nodes: list[ast.expr | None]) -> set[str]:
    return {n.value for n in nodes if isinstance(n, ast.Constant) and n.value in CODES}


def _lists_of_languages(tree: ast.AST) -> Iterator[int]:
    for node in ast.walk(tree):
        held = list(node.elts) if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else \
            list(node.keys) if isinstance(node, ast.Dict) else []
        if len(_codes(held)) >= 2:
            yield node.lineno


def _branches_on_language(tree: ast.AST) -> Iterator[int]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            literal = [e for o in operands if isinstance(o, (ast.Tuple, ast.List, ast.Set)) for e in o.elts]
            if _codes([*operands, *literal]):
                yield node.lineno
        elif isinstance(node, ast.Dict) and _codes(node.keys):
            yield node.lineno


def _han_texts(tree: ast.AST) -> Iterator[tuple[int, str]]:
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            if any(bound in node.value.lower() for bound in _SCRIPT_RANGES):
                yield node.lineno, "a Han range (a script test)"
            elif any(HAN[0] <= ch <= HAN[5] for ch in node.value):
                yield node.lineno, "Han text"


_ALTERNATIVE = re.compile(r"^[^\W\d_][^\W\d_' ]*$")  # a word or words: letters, apostrophes, spaces
_REGEX_AROUND = re.compile(r"^(?:\^|\\[bWs]|[(?:\[\]*+\s,])*|(?:\\[bWs]|[)\]?*+\s,$])*$")
# words every language's profile has its own of; three in one literal make it a word list
_FUNCTION_WORDS = {word for language in LANGUAGES for word in language.words.function_words}


def _word_lists(tree: ast.AST) -> Iterator[tuple[int, str]]:
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words = [_REGEX_AROUND.sub("", part).strip() for part in node.value.split("|")]
            if len(node.value.split("|")) > 1 and sum(bool(_ALTERNATIVE.match(w)) for w in words) >= 3:
                yield node.lineno, "a pattern of words"
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
            held = node.keys if isinstance(node, ast.Dict) else node.elts
            words = {e.value for e in held if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            if len(words & _FUNCTION_WORDS) >= 3:
                yield node.lineno, "a list of words"


def _trees() -> Iterator[tuple[Path, ast.AST]]:
    for path in SOURCES:
        yield path, ast.parse(path.read_text(), str(path))


def test_the_registry_lists_every_language_and_each_has_a_profile_package() -> None:
    assert len(set(CODES)) == len(LANGUAGES) >= 2
    for language in LANGUAGES:
        assert (LANGUAGE_PACKAGE / language.code / "profile.py").is_file(), language.code


def test_no_module_writes_out_a_list_of_languages() -> None:
    offenders = [f"{_name(path)}:{line}" for path, tree in _trees() for line in _lists_of_languages(tree)]
    assert not offenders, "a second list of languages; ask assistant/language/registry.py"


def test_only_the_registry_imports_the_profiles() -> None:
    profiles = {f"assistant.language.{code}.profile" for code in CODES}
    importers = {_name(path) for path, tree in _trees() for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module in profiles}
    assert importers == {_name(REGISTRY)}


def test_nothing_outside_the_language_package_branches_on_a_language_or_a_script() -> None:
    offenders = []
    for path, tree in _trees():
        if LANGUAGE_PACKAGE in path.parents:
            continue
        offenders += [f"{_name(path)}:{line}: compares with a language code" for line in _branches_on_language(tree)]
        offenders += [f"{_name(path)}:{line}: {what}" for line, what in _han_texts(tree)
                      if path not in HAN_DATA or what != "Han text"]
    assert not offenders, "\n".join(offenders)


def test_no_word_lists_outside_the_language_package() -> None:
    training_data = REPO / "models" / "datagen"
    offenders = [f"{_name(path)}:{line}: {what}" for path, tree in _trees()
                 if LANGUAGE_PACKAGE not in path.parents and training_data not in path.parents
                 for line, what in _word_lists(tree)]
    assert not offenders, "\n".join(offenders) + "\nthe words belong in the language's profile"


@pytest.mark.parametrize("source, expected", [
    ('FILLER = re.compile(r"^(uh|um|well|make it)\\b")\n', ["words"]),
    ('JOIN = re.compile(r"\\s*(?:-|\\bto\\b|\\band\\b|\\buntil\\b)\\s*")\n', ["words"]),
    ('SMALL = {"a", "an", "the", "at", "on"}\n', ["words"]),
    ('LEADS = {"for": 1, "from": 2, "at": 3}\n', ["words"]),
    ('CODES = re.compile(r"(TimeoutError|OSError)")\n', []),
    ('ERRORS = ("overloaded", "internal")\n', []),
    ('HELP = "whisper | moonshine"\n', []),
])
def test_the_word_list_check_catches_what_it_names(source: str, expected: list[str]) -> None:
    assert ["words" for _ in _word_lists(ast.parse(source))] == expected


@pytest.mark.parametrize("source, expected", [
    ('if language == "zh":\n    pass\n', ["compares"]),
    ('ok = code in ("en", "zh")\n', ["compares", "list"]),
    ('names = {"en": "English", "zh": "Chinese"}\n', ["compares", "list"]),
    ('HAN = re.compile("[\\u4e00-\\u9fff]")\n', ["script"]),
    ('HAN = re.compile(r"[\\u3400-\\u4dbf]")\n', ["script"]),
    ('YES = re.compile("好的")\n', ["han"]),
    ('code = DEFAULT.code\n', []),
])
def test_the_checks_catch_what_they_name(source: str, expected: list[str]) -> None:
    tree = ast.parse(source)
    found = (["compares"] if list(_branches_on_language(tree)) else []) + \
        (["list"] if list(_lists_of_languages(tree)) else []) + \
        [("script" if "range" in what else "han") for _, what in _han_texts(tree)]
    assert found == expected


def test_the_registry_needs_nothing_beyond_the_standard_library() -> None:
    # The model server runs in its own environment (pytriton pins numpy<2) and imports the recognizer, which asks
    # the registry: the packages the readers and room matching use are imported on first use, not with it.
    import subprocess
    import sys

    code = ("import sys; import assistant.language.registry, assistant.asr.whisper; "
            "print(sorted({'dateutil', 'jellyfish', 'cn2an', 'pypinyin', 'opencc'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
