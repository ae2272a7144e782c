"""No import cycles among the ``screenmill.*`` modules.

Every module's imports are read with :mod:`ast`: at module level and inside functions and classes alike (a deferred
import is still a dependency, and deferring one is not how a cycle is broken here); only ``if TYPE_CHECKING:`` blocks
are skipped (they never run). ``from X import Y`` imports ``X`` and, when that is a module, ``X.Y``; a relative import
is resolved against the importing module's package. Importing a module runs its packages' ``__init__`` first, so a
package's ``__init__`` counts as imported by whoever imports one of its submodules (but not by the package's own
modules: it runs before they do). The strongly connected components of that graph (Tarjan) must all be single
modules; a failure prints one cycle of each component that is not.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOPS = ("pipelines", "stages", "schemas", "annotators")
NAMESPACE = "screenmill"


def _modules() -> dict[str, Path]:
    """Every ``screenmill.*`` module name → its file (a package by its ``__init__.py``)."""
    found = {}
    for top in TOPS:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((NAMESPACE, *parts))] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST):
    """Every Import / ImportFrom node of ``tree``, at any depth, but those under ``if TYPE_CHECKING:`` (their
    ``else:`` branch runs, so it is kept)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _with_packages(name: str, modules: dict[str, Path]) -> set[str]:
    """``name`` and every package above it that is one of ``modules`` (Python runs their ``__init__`` first)."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(2, len(parts) + 1)} & modules.keys()


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The ``screenmill.*`` modules that importing ``name`` (at ``path``) imports directly."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
        for target in targets:
            found |= _with_packages(target, modules)
    return found - _with_packages(name, modules)  # itself, and its own packages: they run before it does


def import_graph() -> dict[str, set[str]]:
    """Module → the ``screenmill.*`` modules it imports (with the packages above them)."""
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``graph`` (iterative: no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def _cycle(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One cycle through the component's first module, by breadth-first search inside the component."""
    members, start = set(component), component[0]
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & members):
            if child == start:
                return [*paths[node], start]
            if child not in paths:
                paths[child] = [*paths[node], child]
                queue.append(child)
    return component


def test_the_graph_sees_deferred_imports_packages_and_skips_type_checking(tmp_path):
    modules = {n: tmp_path / f"{n}.py" for n in ("screenmill.a", "screenmill.a.b", "screenmill.c", "screenmill.d")}
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from screenmill.d import x\n"
        "def f():\n    from screenmill.a import b\n"
        "import screenmill.c\n"
    )
    path = tmp_path / "m.py"
    path.write_text(source)
    assert _imports("screenmill.m", path, modules) == {"screenmill.a", "screenmill.a.b", "screenmill.c"}
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert sorted(map(sorted, strongly_connected(graph))) == [["a", "b", "c"], ["d"]]
    assert _cycle(["a", "b", "c"], graph) == ["a", "b", "c", "a"]


def test_no_import_cycles():
    graph = import_graph()
    assert {"screenmill.stages.label.stage", "screenmill.annotators.vllm.producer"} <= graph.keys()
    cycles = [_cycle(c, graph) for c in strongly_connected(graph) if len(c) > 1]
    assert cycles == [], "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_a_screenshot_producer_imports_no_beam():
    """The seam and the OCR producer are usable outside a pipeline (the truth-set tools): Beam comes with the label
    transform only."""
    code = (
        "import sys\n"
        "import screenmill.annotators.ocr_producer, screenmill.annotators.producer, screenmill.annotators.outputs\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'apache_beam')[:3])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.strip() == "[]"
