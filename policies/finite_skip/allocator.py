"""The compiled finite-skip allocator, generated from the discovered declarations: one branch per built-in policy.

``allocate(pid, n, cls, prm, srv, speeds, k, levels, taken, rates, rng)`` zeroes ``rates[0:n]`` and, when jobs are
present, calls the kernel of the policy whose kernel id is ``pid`` (``FiniteSkipPolicy.allocate``, signature in
:mod:`msjgym.policies.finite_skip.finite_skip`). Kernel ids are the positions of the declarations that have a kernel
in ``msjgym.policies.finite_skip.POLICIES`` (discovery order). The module ``_gen_allocate.py`` beside this one is
generated at import (see :mod:`msjgym.policies._codegen`).
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from msjgym.policies import _codegen

GENERATED = Path(__file__).with_name("_gen_allocate.py")


def kernel_ids(policies: Mapping) -> dict[str, int]:
    """Each declaration with a kernel, by name: its kernel id (its position among them, in discovery order)."""
    return {name: i for i, name in enumerate(n for n, p in policies.items() if p.allocate is not None)}


def kernel_id(policy) -> int:
    """The kernel id of a built-in declaration (-1: none, a policy of the user's decides)."""
    return _codegen.kernel_id(policy, "finite-skip", "allocate", kernel_ids)


def render(policies: Mapping) -> str:
    """The source of the generated allocator module for ``policies`` (name -> ``FiniteSkipPolicy``)."""
    from msjgym.policies._codegen import Imports, branch_chain

    ids = kernel_ids(policies)
    imports = Imports()
    chain = branch_chain(ids, {name: policies[name].allocate for name in ids},
                         "n, cls, prm, srv, speeds, k, levels, taken, rates, rng", imports, var="pid")
    head = ["\"\"\"The compiled finite-skip allocator: one branch per built-in policy (see "
            "msjgym.policies.finite_skip.allocator).\"\"\"",
            "from msjgym.core.jit import njit", *imports.lines(), "", f"KERNEL_IDS = {ids!r}"]
    body = ["", "", "@njit", "def allocate(pid, n, cls, prm, srv, speeds, k, levels, taken, rates, rng):",
            "    \"\"\"Write the service rate (fraction of capacity) of each of the n jobs (arrival order) under "
            "policy pid.\"\"\"",
            "    for j in range(n):", "        rates[j] = 0.0", "    if n == 0:", "        return", *chain]
    return "\n".join(head + body) + "\n"


def generate(policies: Mapping):
    """Write (when changed) and import the generated allocator module for ``policies``."""
    from msjgym.policies._codegen import load

    return load("msjgym.policies.finite_skip._gen_allocate", GENERATED, render(policies))
