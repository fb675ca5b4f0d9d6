"""Kernel ids of the built-in MSJ policies: the positions of the declarations that have a kernel.

Each policy runs in an event loop compiled for it alone (:mod:`msjgym.systems.msj.specialize` generates one per
policy, calling the kernels its declaration names: ``Policy.schedule``, ``Policy.on_arrival``,
``Policy.on_departure``), so a run compiles the kernels of its own policy only. The kernel id
(``params.ints[P_POLICY]``) names the policy inside that loop; ids are the positions of the declarations that have a
kernel in ``msjgym.policies.msj.POLICIES`` (discovery order), never written by hand.
"""
from __future__ import annotations

from collections.abc import Mapping

from msjgym.policies import _codegen


def kernel_ids(policies: Mapping) -> dict[str, int]:
    """Each declaration with a kernel, by name: its kernel id (its position among them, in discovery order)."""
    return {name: i for i, name in enumerate(n for n, p in policies.items() if p.schedule is not None)}


def kernel_id(policy) -> int:
    """The kernel id of a built-in declaration (-1: none, a policy of the user's decides)."""
    return _codegen.kernel_id(policy, "msj", "schedule", kernel_ids)
