"""The layering of msjgym: its module import graph has no cycle, and dependencies point one way,
core, api → systems, policies, theory → evaluate → envs, reproduce → cli.

The graph is read from the source (every ``import`` and ``from ... import``, at module level or inside a function:
a lazy import is still a dependency), so the test needs no import of msjgym.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"msjgym": ROOT / "msjgym", "msjgym.policies": ROOT / "policies"}
LAYERS = (
    ("msjgym.errors", "msjgym.core", "msjgym.api"),
    ("msjgym.theory", "msjgym.systems", "msjgym.policies"),
    ("msjgym.evaluate",),
    ("msjgym.envs", "msjgym.reproduce"),
    ("msjgym.cli", "msjgym.__main__", "msjgym"),
)
"""Each layer may import from its own and the layers above it in this list, never from a layer below."""


def modules() -> dict[str, Path]:
    out = {}
    for name, root in PACKAGES.items():
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join([name, *parts])] = path
    return out


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The msjgym modules that module ``name`` imports (a package's ``__init__`` counts as its own module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{a.name}" for a in node.names]
            if not all(t in known for t in targets):  # names from the module itself, not submodules
                targets.append(base)
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: imports(name, path, known) for name, path in mods.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in g:
        if v not in index:
            visit(v)
    return out


FAMILY_ENV = re.compile(r"msjgym\.systems\.\w+\.env")
"""A family's environment module (``msjgym/systems/<family>/env.py``) lives in the family's folder but builds on the
batched environment base, so it sits in the layer of ``msjgym.envs``."""


def layer(module: str) -> int:
    if FAMILY_ENV.fullmatch(module):
        module = "msjgym.envs"
    best, depth = None, -1
    for i, names in enumerate(LAYERS):
        for prefix in names:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > depth:
                best, depth = i, len(prefix)
    assert best is not None, f"{module}: in no layer of LAYERS"
    return best


def test_no_import_cycle() -> None:
    assert cycles(graph()) == []


def test_dependencies_point_one_way() -> None:
    upward = [f"{a} (layer {layer(a)}) imports {b} (layer {layer(b)})" for a, targets in graph().items()
              for b in sorted(targets) if layer(b) > layer(a)]
    assert upward == []


def test_the_graph_is_read() -> None:
    """A control: the reader finds known edges, and a cycle in a toy graph."""
    g = graph()
    assert "msjgym.api" in g["msjgym.cli"]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
