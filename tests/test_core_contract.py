"""msjgym.core.contract: a family's kernel-slot table gives the compile units and the addresses its loop calls."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from numba import types

from msjgym.core.contract import KernelTable, Slot
from msjgym.core.jit import njit

SIG = types.int64(types.int64)


@njit
def _double(x):
    return 2 * x


@njit
def _loop(x):
    return x


TABLE = KernelTable(family="toy", loop_label="the toy loop", policy_label="policy",
                    slots=(Slot("first", SIG), Slot("extra.kernel", SIG, optional=True)))


def test_units_name_the_loop_and_each_present_kernel():
    policy = SimpleNamespace(name="p", first=_double, extra=None)
    units = TABLE.units(policy, loops=[(_loop, SIG)])
    assert [(u.label, u.kind) for u in units] == [("the toy loop", "toy loop"), ("policy p", "toy policy")]


def test_addresses_follow_the_table_and_empty_optional_slots_are_zero():
    nested = SimpleNamespace(name="q", first=_double, extra=SimpleNamespace(kernel=_double))
    first, extra = TABLE.addresses(nested)
    assert first > 0 and extra == first  # one kernel, one address
    assert TABLE.addresses(SimpleNamespace(name="p", first=_double, extra=None))[1] == 0


def test_a_missing_required_kernel_is_named():
    with pytest.raises(TypeError, match="'first'"):
        TABLE.units(SimpleNamespace(name="p"))
