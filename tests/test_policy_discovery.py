"""One declaration per built-in policy, discovered from its module: every family's ``POLICIES``, kernel ids assigned
by discovery order, the generated dispatchers up to date with the declarations, and their place in the kernel cache
key."""
from __future__ import annotations

import importlib
import sys
from dataclasses import replace

import pytest

from msjgym import api
from msjgym.core import jit
from msjgym.errors import PolicyError
from msjgym.policies import BuiltinPolicy, discover, registered
from msjgym.policies._codegen import MARKER
from msjgym.policies.dispatch import chooser
from msjgym.policies.finite_skip import allocator
from msjgym.policies.loss import widths
from msjgym.policies.msj import scheduler

FAMILIES = {"msj": scheduler, "dispatch": chooser, "loss": widths, "finite-skip": allocator}
GENERATED = {"dispatch": chooser, "loss": widths, "finite-skip": allocator}  # the MSJ loops: test_specialize.py


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_discovers_its_declarations(family):
    policies = registered(family)
    assert policies and all(isinstance(p, api.PolicySpec) and p.family == family for p in policies.values())
    assert all(name == p.name for name, p in policies.items())
    assert api.family(family).policies() is policies  # what the CLI, list and sweeps read


@pytest.mark.parametrize("family, generator", FAMILIES.items())
def test_kernel_ids_are_discovery_positions(family, generator):
    policies = registered(family)
    ids = generator.kernel_ids(policies)
    assert list(ids.values()) == list(range(len(ids)))
    assert all(policies[name].kernel_id == i for name, i in ids.items())


@pytest.mark.parametrize("family, generator", GENERATED.items())
def test_the_generated_dispatcher_is_current(family, generator):
    policies = registered(family)
    text = generator.GENERATED.read_text()
    assert text.startswith(MARKER) and text.endswith(generator.render(policies))


def test_generated_files_are_left_out_of_the_cache_key_and_policy_files_are_in():
    roots = [r for r in jit._ROOTS]
    assert any(r.rstrip("/").endswith("policies") for r in roots)
    assert jit._package_stamp() == jit._STAMP  # regenerating the dispatchers did not change the key


def test_a_declaration_outside_the_package_has_no_kernel_id():
    from msjgym.policies.msj import Policy, get_policy

    assert Policy(name="agent", summary="", preemptive=False, source="").kernel_id == -1  # decisions from outside
    fake = replace(get_policy("fcfs"), schedule=get_policy("msf").schedule)
    with pytest.raises(PolicyError, match="not a discovered built-in"):
        fake.kernel_id


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
        from msjgym import policies
        policies._REGISTRY.pop("toy", None)


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
