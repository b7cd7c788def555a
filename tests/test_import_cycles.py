"""No import cycles anywhere in the source (issue 32): every `import` of assistant/, engines/ and models/, at module
level or inside a function (a deferred import is still a dependency), makes an edge from module to module, and the
graph must have no strongly connected component of more than one module. A cycle is what made the value readers
import each other (clock -> zh_time -> dates -> clock) and the generators too (generator <-> zh_generator)."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("assistant", "engines", "models")


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict[str, Path]:
    return {_module_name(p): p for top in PACKAGES for p in sorted((REPO / top).rglob("*.py"))}


def _target(name: str, modules: Mapping[str, object]) -> str | None:
    """The module of ours that `name` (a module, or a name inside one) is, else None (the standard library, a
    package from PyPI)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(sources: Mapping[str, str], packages: Mapping[str, bool]) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports. `sources`: module name -> its code; `packages`: whether a module
    is a package (an __init__), for relative imports."""
    graph: dict[str, set[str]] = {}
    for name, code in sources.items():
        edges: set[str] = set()
        here = name if packages[name] else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Import):
                edges |= {t for alias in node.names if (t := _target(alias.name, sources))}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = here.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                # "from package import module" imports the module; "from module import name" the module
                edges |= {t for alias in node.names if (t := _target(f"{base}.{alias.name}", sources))}
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: Mapping[str, set[str]]) -> Iterator[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    yield sorted(component)


def test_the_source_has_no_import_cycles() -> None:
    files = _sources()
    graph = import_graph({n: p.read_text() for n, p in files.items()}, {n: p.name == "__init__.py" for n, p in
                                                                        files.items()})
    assert len(graph) > 100  # the whole source was read
    assert not list(cycles(graph))


def test_the_check_finds_a_cycle_through_a_deferred_import() -> None:
    sources = {
        "pkg": "",
        "pkg.clock": "from pkg.values import Time\n",
        "pkg.values": "class Time: ...\n",
        "pkg.dates": "def read():\n    from pkg import clock\n",  # inside a function: still an edge
        "pkg.zh": "from .dates import read\nfrom pkg.clock import x\n",
    }
    packages = {name: name == "pkg" for name in sources}
    assert not list(cycles(import_graph(sources, packages)))
    sources["pkg.clock"] += "import pkg.zh\n"  # zh -> dates -> (deferred) clock -> zh
    assert list(cycles(import_graph(sources, packages))) == [["pkg.clock", "pkg.dates", "pkg.zh"]]
    relative = {"pkg": "from . import a\n", "pkg.a": "from .b import f\n", "pkg.b": "from . import a\n"}
    assert list(cycles(import_graph(relative, {"pkg": True, "pkg.a": False, "pkg.b": False}))) == [["pkg.a", "pkg.b"]]
