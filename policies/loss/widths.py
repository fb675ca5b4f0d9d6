"""The compiled loss-system decisions, generated from the discovered declarations: one branch per built-in policy.

``policy_width(policy, m, d, s, b)`` (the width of an arrival whose sample shows m idle servers), ``block_prob(pmf,
b, d, policy)`` and ``width_d_prob(pmf, b, d, policy)`` (P(block | state), P(width d | state)) call the kernels of the
policy whose kernel id is ``policy`` (``LossPolicy.width_kernel``, ``.block_probability``,
``.full_width_probability``). Kernel ids are the positions of the declarations in ``msjgym.policies.loss.POLICIES``
(discovery order). The module ``_gen_widths.py`` beside this one is generated at import (see
:mod:`msjgym.policies._codegen`).
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from msjgym.policies import _codegen

GENERATED = Path(__file__).with_name("_gen_widths.py")


def kernel_ids(policies: Mapping) -> dict[str, int]:
    """Every declaration, by name: its kernel id (its position in discovery order)."""
    return {name: i for i, name in enumerate(policies)}


def kernel_id(policy) -> int:
    """The kernel id of a built-in declaration (-1: none, a policy of the user's decides)."""
    return _codegen.kernel_id(policy, "loss", "width_kernel", kernel_ids)


def render(policies: Mapping) -> str:
    """The source of the generated module for ``policies`` (name -> ``LossPolicy``, in discovery order)."""
    from msjgym.policies._codegen import Imports, branch_chain

    ids = kernel_ids(policies)
    imports = Imports()

    def chain(field: str, args: str) -> list[str]:
        lines = branch_chain(ids, {n: getattr(p, field) for n, p in policies.items()}, args, imports, var="policy")
        return [f"        return {line.strip()}" if line.startswith("        ") else line for line in lines]

    body = ["", "", "@njit", "def policy_width(policy, m, d, s, b):",
            "    \"\"\"The width (0 = block) for a sample showing m = min(l, d) idle servers.\"\"\"",
            *chain("width_kernel", "m, d, s, b"), "    return 0",
            "", "", "@njit", "def block_prob(pmf, b, d, policy):",
            "    \"\"\"P(block | state), from pmf[b, j] = P(m = j | state).\"\"\"",
            *chain("block_probability", "pmf, b, d"), "    return 0.0",
            "", "", "@njit", "def width_d_prob(pmf, b, d, policy):",
            "    \"\"\"P(width d | state), from pmf[b, j] = P(m = j | state).\"\"\"",
            *chain("full_width_probability", "pmf, b, d"), "    return 0.0"]
    head = ["\"\"\"The compiled loss-system decisions: one branch per built-in policy (see "
            "msjgym.policies.loss.widths).\"\"\"",
            "from msjgym.core.jit import njit", *imports.lines(), "", f"KERNEL_IDS = {ids!r}"]  # after the chains
    return "\n".join(head + body) + "\n"


def generate(policies: Mapping):
    """Write (when changed) and import the generated module for ``policies``."""
    from msjgym.policies._codegen import load

    return load("msjgym.policies.loss._gen_widths", GENERATED, render(policies))
