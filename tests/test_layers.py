"""The layering of msjgym: its module import graph has no cycle, and dependencies point one way,
errors, core, api → theory → systems → policies → evaluate → envs, reproduce → cli (policies sit above systems: a
policy imports its family's contract, a system reaches its built-in policies only through the registry,
:func:`msjgym.core.policy_registry.registered`, never by an import; theory is plain formulas and imports no system);
and every run goes through
``msjgym.evaluate``: no module outside ``msjgym/evaluate/`` loops over replications or computes a confidence interval.

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
    ("msjgym.theory",),
    ("msjgym.systems",),
    ("msjgym.policies",),
    ("msjgym.evaluate",),
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


FAMILY_ENV = re.compile(r"msjgym\.systems\.\w+\.env(_search)?")
"""A family's environment modules (``msjgym/systems/<family>/env.py``, and ``env_search.py``, a policy search over the
environment's job-scoring network) live in the family's folder but build on ``msjgym.envs``, so they sit in its layer."""


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


def upward_imports(g: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The edges (importer, imported) of ``g`` that point from a layer to a layer below it in :data:`LAYERS`."""
    return [(a, b) for a, targets in sorted(g.items()) for b in sorted(targets) if layer(b) > layer(a)]


def _shown(edges: list[tuple[str, str]]) -> str:
    return "\n".join(f"{a} (layer {layer(a)}) imports {b} (layer {layer(b)})" for a, b in edges)


def test_no_import_cycle() -> None:
    assert cycles(graph()) == []


def test_dependencies_point_one_way() -> None:
    upward = upward_imports(graph())
    assert not upward, "imports against the layer order (docs/layout.md):\n" + _shown(upward)


def test_the_layer_order_can_fail() -> None:
    """A control: a synthetic graph with a system importing a policy, and theory importing a system, is caught."""
    toy = {"msjgym.systems.toy.loop": {"msjgym.policies.toy.fifo", "msjgym.core.jit"},
           "msjgym.theory.toy": {"msjgym.systems.toy.model"}, "msjgym.policies.toy.fifo": {"msjgym.systems.toy.contract"}}
    assert upward_imports(toy) == [("msjgym.systems.toy.loop", "msjgym.policies.toy.fifo"),
                                   ("msjgym.theory.toy", "msjgym.systems.toy.model")]


# ---------------------------------------------------------------------------------------------------------------------
# No system imports a policy: a system reaches its built-in policies through the registry (policy_registry.registered),
# never by an import statement, not even one inside a function. Checked line by line, so the message names each one.

SYSTEMS = "msjgym.systems"
POLICIES = "msjgym.policies"


def policy_imports(name: str, source: str) -> list[str]:
    """``name:LINE: the statement`` for every import in ``source`` (module ``name``) that names ``msjgym.policies``
    (absolute, or relative up to it), at module level or inside a function."""
    package = name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        if any(t == POLICIES or t.startswith(POLICIES + ".") for t in targets):
            found.append(f"{name}:{node.lineno}: {ast.get_source_segment(source, node)}")
    return found


def _system_modules() -> dict[str, Path]:
    return {name: path for name, path in modules().items() if name == SYSTEMS or name.startswith(SYSTEMS + ".")}


def test_no_system_imports_a_policy() -> None:
    """No module under msjgym/systems/ imports msjgym.policies, not even inside a function (a family's env.py
    included, though its layer is above the policies'); the message names each offending import line."""
    found = [line for name, path in _system_modules().items() for line in policy_imports(name, path.read_text())]
    assert not found, "a system imports msjgym.policies (use msjgym.core.policy_registry.registered):\n" + \
        "\n".join(found)


SHARED = ("msjgym.errors", "msjgym.core", "msjgym.api", "msjgym.theory", "msjgym.evaluate", "msjgym.envs", "msjgym.cli",
          "msjgym.__main__")
"""The shared layers: they name no family (a family's ``env.py`` lives in its folder, not in ``msjgym/envs/``)."""


def family_imports(g: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The edges of ``g`` from a shared module (:data:`SHARED`, or the package ``msjgym`` itself) into one family's
    system or policies (``msjgym.systems.<family>...``, ``msjgym.policies.<family>...``)."""
    def shared(name: str) -> bool:
        return name == "msjgym" or any(name == p or name.startswith(p + ".") for p in SHARED)
    return [(a, b) for a, targets in sorted(g.items()) if shared(a) for b in sorted(targets)
            if b.startswith((SYSTEMS + ".", POLICIES + "."))]


def test_shared_modules_import_no_family() -> None:
    """The shared layers ask the registry (``msjgym.api.families()``) and never import a family's modules: a render
    hook, option or policy list is the family's own declaration."""
    found = family_imports(graph())
    assert not found, "a shared module imports a family (ask msjgym.api's registry instead):\n" + \
        "\n".join(f"{a} imports {b}" for a, b in found)


def test_the_family_import_check_can_fail() -> None:
    toy = {"msjgym.envs.render": {"msjgym.systems.msj.observation", "msjgym.core.observation"},
           "msjgym.systems.msj.env": {"msjgym.systems.msj.observation"}, "msjgym.api": {"msjgym.core.paths"}}
    assert family_imports(toy) == [("msjgym.envs.render", "msjgym.systems.msj.observation")]


def test_the_system_import_check_can_fail() -> None:
    """A control: a synthetic system module importing a policy, at module level, lazily and relatively, is caught
    with its line; one that asks the registry is not."""
    source = ("from msjgym.core.policy_registry import registered\n"
              "import msjgym.policies.toy.fifo\n"
              "def policies():\n"
              "    from msjgym.policies.toy import POLICIES\n"
              "    from ...policies import discover\n"
              "    return registered('toy')\n")
    assert policy_imports("msjgym.systems.toy.family", source) == [
        "msjgym.systems.toy.family:2: import msjgym.policies.toy.fifo",
        "msjgym.systems.toy.family:4: from msjgym.policies.toy import POLICIES",
        "msjgym.systems.toy.family:5: from ...policies import discover"]


def test_the_graph_is_read() -> None:
    """A control: the reader finds known edges, and a cycle in a toy graph."""
    g = graph()
    assert "msjgym.api" in g["msjgym.cli"]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]


# ---------------------------------------------------------------------------------------------------------------------
# Every run goes through msjgym.evaluate: no module outside msjgym/evaluate/ runs replications or computes intervals.

EVALUATE = "msjgym.evaluate"
INTERVALS = "msjgym.evaluate.intervals"
"""The module that computes confidence intervals (Student-t over replications or batch means)."""


def _outside_evaluate() -> dict[str, Path]:
    return {name: path for name, path in modules().items()
            if name != EVALUATE and not name.startswith(EVALUATE + ".")}


def replication_loops(tree: ast.AST) -> list[int]:
    """Lines of loops (``for`` statements and comprehensions) over ``range(...)`` of a replication count: an
    argument that names ``reps`` (a variable, an attribute ``x.reps``, a keyword) -- the shape of a loop that runs
    replications one after the other."""
    lines = []
    for node in ast.walk(tree):
        iters = ([node.iter] if isinstance(node, (ast.For, ast.AsyncFor)) else
                 [g.iter for g in node.generators] if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp,
                                                                           ast.GeneratorExp)) else [])
        for it in iters:
            calls = [c for c in ast.walk(it) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                     and c.func.id == "range"]
            for call in calls:
                names = {n.id for a in call.args for n in ast.walk(a) if isinstance(n, ast.Name)}
                names |= {n.attr for a in call.args for n in ast.walk(a) if isinstance(n, ast.Attribute)}
                if any(n == "reps" or n.endswith("_reps") for n in names):
                    lines.append(node.lineno)
    return lines


def interval_code(tree: ast.AST, imported: set[str]) -> list[str]:
    """What in a module (its syntax ``tree``, the msjgym modules it ``imported``) computes confidence intervals: an
    import of :data:`INTERVALS`, or of Student's t (``from scipy.stats import t``, ``stats.t.ppf``)."""
    found = []
    if INTERVALS in imported:
        found.append(f"imports {INTERVALS}")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "scipy.stats" and any(a.name == "t" for a in node.names):
            found.append(f"line {node.lineno}: from scipy.stats import t")
        if (isinstance(node, ast.Attribute) and node.attr == "t" and isinstance(node.value, ast.Name)
                and node.value.id == "stats"):
            found.append(f"line {node.lineno}: stats.t")
    return found


def test_only_evaluate_runs_replications_and_computes_intervals() -> None:
    """Every run goes through ``msjgym.evaluate`` (docs/layout.md): outside ``msjgym/evaluate/`` no module loops over
    replications or computes a confidence interval (a reproduction that needs many runs uses the sweep runner or
    ``evaluate``; a family builds one replication's streams and state, the evaluator runs them)."""
    known = set(modules())
    offenders = []
    for name, path in _outside_evaluate().items():
        offenders += [f"{name}: {what}" for what in interval_code(ast.parse(path.read_text()),
                                                                 imports(name, path, known))]
        offenders += [f"{name}: line {line}: a loop over replications"
                      for line in replication_loops(ast.parse(path.read_text()))]
    assert offenders == []


def test_the_replication_and_interval_checks_can_fail() -> None:
    """The controls: the evaluator itself has both (so the checks see what they look for), and a module shaped like
    the parallel stacks this replaced (its own loop over replications and its own t-intervals) is caught."""
    known = set(modules())
    evaluator = modules()["msjgym.evaluate.evaluator"]
    assert replication_loops(ast.parse(evaluator.read_text()))
    assert interval_code(ast.parse(evaluator.read_text()), imports("msjgym.evaluate.evaluator", evaluator, known))
    stack = ast.parse("from scipy.stats import t\n"
                      "def simulate(model, reps):\n"
                      "    out = [run(model, r) for r in range(reps)]\n"
                      "    for b in range(settings.reps):\n"
                      "        out.append(b)\n"
                      "    return t.ppf(0.975, reps - 1)\n")
    assert len(replication_loops(stack)) == 2
    assert interval_code(stack, set()) == ["line 1: from scipy.stats import t"]
    assert interval_code(ast.parse("import scipy.stats as stats\nq = stats.t.ppf(0.975, 9)\n"), set())
