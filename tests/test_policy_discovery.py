"""One declaration per built-in policy, discovered from its module: every family's ``POLICIES`` (each policy's
kernels are its own functions, plugged into its family's one event loop: no ids, no generated dispatchers), and the
policy files' place in the kernel cache key."""
from __future__ import annotations

import dataclasses
import importlib
import sys

import pytest

from msjgym import api
from msjgym.core import jit
from msjgym.errors import PolicyError
from msjgym.policies import BuiltinPolicy, discover, registered

FAMILIES = [f.name for f in api.families()]
"""Every family of the registry (a new family is covered without editing this file)."""


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_discovers_its_declarations(family):
    policies = registered(family)
    assert policies and all(isinstance(p, api.PolicySpec) and p.family == family for p in policies.values())
    assert all(name == p.name for name, p in policies.items())
    assert api.family(family).policies() is policies  # what the CLI, list and sweeps read


def kernels(policy: api.PolicySpec) -> dict[str, object]:
    """A declaration's compiled kernels: its fields holding a numba-compiled function (``py_func``), by field."""
    values = {f.name: getattr(policy, f.name) for f in dataclasses.fields(policy)}
    return {name: v for name, v in values.items() if hasattr(v, "py_func")}


@pytest.mark.parametrize("family", FAMILIES)
def test_every_builtin_carries_its_own_compiled_kernels(family):
    """No kernel ids: the loop calls each policy's own kernels, defined in the policy's module (keyed by its file), or
    a kernel several policies share, defined in their family's contract module."""
    shared = f"msjgym.systems.{family.replace('-', '_')}.contract"
    for policy in registered(family).values():
        for field, kernel in kernels(policy).items():
            assert hasattr(kernel, "compile"), field
            module = kernel.py_func.__module__
            assert module.startswith("msjgym.policies.") or module == shared, (field, module)
        assert not hasattr(policy, "kernel_id")


def test_the_kernel_reader_finds_kernels():
    """A control: the families with compiled policies are seen to have them."""
    assert {f for f in FAMILIES if any(kernels(p) for p in registered(f).values())} >= {"dispatch", "loss"}


def test_policy_files_are_keyed_like_the_package():
    roots = [r for r in jit._ROOTS]
    assert any(r.rstrip("/").endswith("policies") for r in roots)


def test_discover_registers_every_module_level_declaration(tmp_path, monkeypatch):
    """A new module in a family's folder is all it takes: its declarations are found, in order, and a name used twice
    is refused."""
    pkg = tmp_path / "toyfamily"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "b_two.py").write_text(
        "from msjgym.policies import BuiltinPolicy\n"
        "X = BuiltinPolicy(name='x', summary='', family='toy', preemptive=False, source='')\n"
        "Y = BuiltinPolicy(name='y', summary='', family='toy', preemptive=True, source='')\n")
    (pkg / "a_one.py").write_text(
        "from msjgym.policies import BuiltinPolicy\n"
        "W = BuiltinPolicy(name='w', summary='', family='toy', preemptive=False, source='')\n"
        "OTHER = BuiltinPolicy(name='o', summary='', family='other', preemptive=False, source='')\n")
    (pkg / "_private.py").write_text("raise RuntimeError('not imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert list(discover("toyfamily", "toy")) == ["w", "x", "y"]
        (pkg / "c_three.py").write_text(
            "from msjgym.policies import BuiltinPolicy\n"
            "X = BuiltinPolicy(name='x', summary='again', family='toy', preemptive=False, source='')\n")
        importlib.invalidate_caches()
        with pytest.raises(PolicyError, match="two built-in toy policies are called 'x'"):
            discover("toyfamily", "toy")
    finally:
        for name in [m for m in sys.modules if m == "toyfamily" or m.startswith("toyfamily.")]:
            del sys.modules[name]
        from msjgym.core import policy_registry
        policy_registry._REGISTRY.pop("toy", None)


def test_bind_checks_each_parameter_against_its_range():
    from msjgym.api import Param

    spec = BuiltinPolicy(name="p", summary="", family="toy", preemptive=False, source="",
                         params=(Param("k", 2, "a count", low=1, integer=True), Param("r", 0.5, "a rate", low=0.0)))
    assert spec.arguments() == (2, 0.5) and spec.label == "p"
    bound = spec.bind(k=3)
    assert bound.arguments() == (3, 0.5) and bound.label == "p(k=3)" and spec.value("k") == 2
    with pytest.raises(PolicyError, match=r"k = 0: must be an integer >= 1"):
        spec.bind(k=0)
    with pytest.raises(PolicyError, match="no parameter 'z'; its parameters: k, r"):
        spec.bind(z=1)


def loop_module(family: str) -> str:
    """The family's event loop: ``loop.py`` of its folder (every family has the same skeleton)."""
    return type(api.family(family)).__module__.rpartition(".")[0] + ".loop"




@pytest.mark.parametrize("family", FAMILIES)
def test_the_event_loop_is_keyed_on_no_policy_file(family):
    """The loop's cache key (its file and the modules it imports, msjgym.core.jit) names no policy file, so an edit
    of a policy recompiles that policy's kernels only, never the loop; the policy's kernels are keyed on their file."""
    loop = importlib.import_module(loop_module(family))
    policies_dir = str(jit._POLICIES_DIR)
    assert not [f for f in jit.dependencies(loop.__file__) if f.startswith(policies_dir)]
    for policy in registered(family).values():
        for kernel in kernels(policy).values():  # its own file's, or one its family's contract shares
            assert (kernel.py_func.__code__.co_filename.startswith(policies_dir)
                    or kernel.py_func.__module__.endswith(".contract"))
