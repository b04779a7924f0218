"""No import cycles inside quarry_trainer: every module is parsed with `ast` (not imported: the engines need not be
installed), its imports of other quarry_trainer modules, at module level and inside functions alike, become edges,
and a cycle fails the test naming its modules in order. What two modules both need goes into one that imports neither.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "quarry_trainer"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE


def module_name(path: Path, root: Path, package: str) -> str:
    parts = [package, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def resolve(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    """The absolute module an ImportFrom names (`from .x import y` in a.b is a.x; in package a/__init__ it is a.x)."""
    if node.level == 0:
        return node.module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Each module of the package to the package's modules it imports (`from m import n` counts n when n is one)."""
    files = {module_name(p, root, package): p for p in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mod = resolve(node, name, is_package)
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in files else mod for a in node.names]
            for target in targets:
                # `import a.b.c` or a name inside a module: the longest prefix that is one of the package's modules.
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as its modules in import order, first repeated at the end; None when the graph has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_quarry_trainer_has_no_import_cycle():
    graph = import_graph(ROOT, PACKAGE)
    assert len(graph) > 20, f"parsed only {len(graph)} modules under {ROOT}"
    assert "quarry_trainer.tiny_model.hf" in graph["quarry_trainer.export"]  # imported inside export(): an edge too
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in quarry_trainer: " + " -> ".join(cycle or [])


def test_a_cycle_through_a_function_level_relative_import_is_found(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import x\n    return x\n")
    (pkg / "c.py").write_text("import pkg.a\nx = 1\n")
    (pkg / "d.py").write_text("from . import c\n")
    graph = import_graph(pkg, "pkg")
    assert graph["pkg.d"] == {"pkg.c"}
    assert find_cycle(graph) == ["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]
    (pkg / "c.py").write_text("x = 1\n")
    assert find_cycle(import_graph(pkg, "pkg")) is None
