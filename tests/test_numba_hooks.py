"""The numba internals the compile machinery relies on (msjgym.core.numba_hooks, docs/compile-machinery.md): the
installed numba has every one and is in the tested range pyproject.toml pins, a missing one is one line saying how to
fix it, and the list names every private attribute that msjgym.core.jit, plug and fast_call use."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import numba
import pytest
from packaging.specifiers import SpecifierSet

from msjgym.core import numba_hooks
from msjgym.errors import MsjgymError

ROOT = Path(__file__).resolve().parents[1]
USERS = tuple(ROOT / "msjgym" / "core" / name for name in ("jit.py", "plug.py", "fast_call.py"))
OWN = {"_module", "_fields", "_python_twin", "_entry", "_fingerprints"}
"""Private names of msjgym's own (set by jit.py, fast_call.py) or public API (a namedtuple's ``_fields``), not numba's."""


def test_the_installed_numba_has_every_hook() -> None:
    assert numba_hooks.problem() is None, numba_hooks.problem()


def test_the_installed_numba_is_in_the_tested_range() -> None:
    assert numba.__version__ in SpecifierSet(numba_hooks.TESTED), (
        f"numba {numba.__version__} is outside the tested range: pip install 'numba{numba_hooks.TESTED}'")


def test_pyproject_pins_the_tested_range() -> None:
    pins = re.findall(r'"numba([^"]*)"', (ROOT / "pyproject.toml").read_text())
    assert pins == [numba_hooks.TESTED]


def test_a_missing_hook_is_one_line_saying_how_to_fix_it() -> None:
    """A control: hooks the installed numba lacks (a class, an attribute, an instance attribute, a module)."""
    gone = (numba_hooks.Hook("numba.core.caching", "NoSuchLocator", "jit: a test"),
            numba_hooks.Hook("numba.core.caching", "Cache.no_such_attribute", "jit: a test", init=True),
            numba_hooks.Hook("numba.no_such_module", "x", "jit: a test"))
    assert numba_hooks.missing(gone) == list(gone)
    with pytest.raises(MsjgymError) as info:
        numba_hooks.check(gone + numba_hooks.HOOKS)
    line = str(info.value)
    assert "\n" not in line and line == (
        f"numba {numba.__version__} lacks numba.core.caching.NoSuchLocator (and 2 more), which msjgym's compile "
        f"machinery uses (jit: a test; docs/compile-machinery.md): pip install 'numba{numba_hooks.TESTED}'")


def private_names(path: Path) -> set[str]:
    """The private attribute names (``_x``, not dunders) a module reads or writes: ``a._x`` and ``getattr(a, "_x")``."""
    tree = ast.parse(path.read_text())
    names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {n.args[1].value for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
              and n.func.id in ("getattr", "hasattr") and len(n.args) > 1 and isinstance(n.args[1], ast.Constant)
              and isinstance(n.args[1].value, str)}
    return {n for n in names if n.startswith("_") and not n.endswith("__")}


def test_every_private_name_used_is_listed() -> None:
    """jit.py and plug.py use no private name of numba that the list (and so the check and the docs) leaves out."""
    listed = {h.name.rpartition(".")[2] for h in numba_hooks.HOOKS}
    used = set().union(*(private_names(p) for p in USERS)) - OWN
    assert used - listed == set(), "add them to msjgym.core.numba_hooks.HOOKS and docs/compile-machinery.md"
    assert {"_load_index", "_locator_classes", "_cache_file"} <= used  # a control: the reader sees them


def test_the_docs_page_lists_every_hook() -> None:
    page = (ROOT / "docs" / "compile-machinery.md").read_text()
    assert [h for h in numba_hooks.HOOKS if f"`{h.module}.{h.name}`" not in page] == []
    assert f"numba{numba_hooks.TESTED}" in page
