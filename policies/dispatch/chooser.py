"""The compiled dispatch decision, generated from the discovered declarations: one branch per built-in dispatcher.

``choose(st, pr, b, now)`` returns the server of an arriving job under the dispatcher whose kernel id is
``params.ints[P_POLICY]``, by calling its ``DispatchPolicy.choose`` kernel (inlined; ``-1`` for a dispatcher
without one, water filling, whose batches the event loop places with ``water_fill``). Kernel ids are the positions of
the declarations in ``msjgym.policies.dispatch.POLICIES`` (discovery order); the event loop's information models
(probes, pull updates, the central server) compare with the same ids, by name (``POLICY_IDS["pull"]``). The module
``_gen_choose.py`` beside this one is generated at import (see :mod:`msjgym.policies._codegen`).
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from msjgym.policies import _codegen

GENERATED = Path(__file__).with_name("_gen_choose.py")


def kernel_ids(policies: Mapping) -> dict[str, int]:
    """Every declaration, by name: its kernel id (its position in discovery order)."""
    return {name: i for i, name in enumerate(policies)}


def kernel_id(policy) -> int:
    """The kernel id of a built-in declaration (-1: none, a policy of the user's decides)."""
    return _codegen.kernel_id(policy, "dispatch", "choose", kernel_ids)


def render(policies: Mapping) -> str:
    """The source of the generated module for ``policies`` (name -> ``DispatchPolicy``, in discovery order)."""
    from msjgym.policies._codegen import Imports, branch_chain

    ids = kernel_ids(policies)
    imports = Imports()
    chain = branch_chain(ids, {name: p.choose for name, p in policies.items()}, "st, pr, b, now", imports)
    chain = [f"        return {line.strip()}" if line.startswith("        ") else line for line in chain]
    head = ["\"\"\"The compiled dispatch decision: one branch per built-in dispatcher (see "
            "msjgym.policies.dispatch.chooser).\"\"\"",
            "from msjgym.core.jit import njit", "from msjgym.policies.dispatch.load_balancing import P_POLICY",
            *imports.lines(), "", f"KERNEL_IDS = {ids!r}"]
    body = ["", "", "@njit(inline=\"always\")", "def choose(st, pr, b, now):",
            "    \"\"\"The server of an arriving job (-1: the dispatcher places its jobs otherwise).\"\"\"",
            "    p = pr.ints[P_POLICY]", *chain, "    return -1"]
    return "\n".join(head + body) + "\n"


def generate(policies: Mapping):
    """Write (when changed) and import the generated module for ``policies``."""
    from msjgym.policies._codegen import load

    return load("msjgym.policies.dispatch._gen_choose", GENERATED, render(policies))
