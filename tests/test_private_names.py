"""No module uses another module's underscore names: what two modules share is public and documented where it is
defined. An AST scan of msjgym/ and policies/ (no import): ``from M import _name`` and ``alias._name`` where alias is
a module, for any M other than the importing module itself; a package's ``__init__`` may import its own private
submodules. The few uses left are listed with the reason they stay for now."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"msjgym": ROOT / "msjgym", "policies": ROOT / "policies"}  # policies is installed as msjgym.policies

ALLOWED = {
    # the MSJ event loop's own kernels (loop, control, transitions): shared among its three files; a rename touches
    # every compiled kernel of the family and is left to a change of those files
    ("msjgym/systems/msj/loop.py", "_checkpoint"), ("msjgym/systems/msj/loop.py", "_draw_job"),
    ("msjgym/systems/msj/loop.py", "_flush"), ("msjgym/systems/msj/loop.py", "_progress"),
    ("msjgym/systems/msj/loop.py", "_record_admission"), ("msjgym/systems/msj/control.py", "_record_admission"),
    ("msjgym/systems/msj/control.py", "_arrival"), ("msjgym/systems/msj/control.py", "_completions"),
    # the job environment's helpers, shared by MSJ's and the multi-resource job environments
    ("msjgym/systems/msj/job_agent.py", "_outputs"), ("msjgym/systems/multi_resource/job_control.py", "_head"),
    ("msjgym/systems/multi_resource/job_control.py", "_episode_reward"),
}
"""(file, name) uses that stay for now."""


def _module_file(dotted: str) -> Path | None:
    """The source file of an msjgym (or policies) module named ``dotted``, or None (not ours, or not a module)."""
    parts = dotted.split(".")
    if parts[:2] == ["msjgym", "policies"]:
        parts = parts[1:]
    if parts[0] not in PACKAGES:
        return None
    base = PACKAGES[parts[0]].joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts[:-1]) if rel.name == "__init__" else list(rel.parts)
    return ".".join(parts)


def _uses(path: Path, here: str | None = None) -> list[tuple[int, str, str]]:
    """(line, name, the module it belongs to) for each underscore name of another module ``path`` (the module
    ``here``, by default its name in the tree) uses."""
    tree = ast.parse(path.read_text())
    here = here or _module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    modules: dict[str, str] = {}  # local alias -> module
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                modules[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            source = node.module or ""
            if node.level:  # relative: from the package, up level - 1 packages
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(up + ([source] if source else []))
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if _module_file(full) is not None:
                    modules[alias.asname or alias.name] = full
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                own_submodule = path.name == "__init__.py" and source == here
                if private and not own_submodule and source != here:
                    found.append((node.lineno, alias.name, source))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and node.attr.startswith("_") and not node.attr.startswith("__")
                and _module_file(modules[node.value.id]) is not None):
            found.append((node.lineno, node.attr, modules[node.value.id]))
    return found


def test_no_module_uses_another_modules_underscore_names():
    bad = []
    for root in PACKAGES.values():
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            bad += [f"{rel}:{line}: {name} of {module}" for line, name, module in _uses(path)
                    if (rel, name) not in ALLOWED]
    assert not bad, "make these public (documented) or move them:\n" + "\n".join(bad)


def test_the_scan_finds_a_private_import(tmp_path):
    """The scan is not vacuous: a module importing another's underscore name is found."""
    probe = tmp_path / "probe.py"
    probe.write_text("from msjgym.theory.saturated import _recurrent_class\n"
                     "from msjgym.theory import saturated as s\nx = s._with_unit_row\nfrom .queues import _x\n")
    found = _uses(probe, "msjgym.theory.probe")
    assert sorted((name, module) for _, name, module in found) == [
        ("_recurrent_class", "msjgym.theory.saturated"), ("_with_unit_row", "msjgym.theory.saturated"),
        ("_x", "msjgym.theory.queues")]
