"""The compiled MSJ scheduler, generated from the discovered declarations: one branch per built-in policy.

The event loop (:mod:`msjgym.systems.msj.engine`) calls ``on_arrival`` after a job joins, ``on_departure`` after a job
leaves, and ``schedule`` after every event; each branches on the policy's kernel id (``params.ints[P_POLICY]``) to
the kernels its declaration names (``Policy.schedule``, ``Policy.on_arrival``, ``Policy.on_departure``). They are
inlined into the event loop (numba passes a state record as a few hundred flattened arguments, so a call per event
would cost more than the work); a heavy kernel declared as a plain ``njit`` (ServerFilling-divisible, MaxWeight)
stays an ordinary call. ``schedule_call`` is ``schedule`` as a plain call, for callers outside the event loop.

Kernel ids are the positions of the declarations that have a kernel in ``msjgym.policies.msj.POLICIES`` (discovery
order): never written by hand. The module ``_gen_scheduler.py`` beside this one is generated from them by
:func:`render` at import (see :mod:`msjgym.policies._codegen` for why a file, and how numba's cache stays valid).
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from msjgym.policies import _codegen

GENERATED = Path(__file__).with_name("_gen_scheduler.py")


def kernel_ids(policies: Mapping) -> dict[str, int]:
    """Each declaration with a kernel, by name: its kernel id (its position among them, in discovery order)."""
    return {name: i for i, name in enumerate(n for n, p in policies.items() if p.schedule is not None)}


def kernel_id(policy) -> int:
    """The kernel id of a built-in declaration (-1: none, a policy of the user's decides)."""
    return _codegen.kernel_id(policy, "msj", "schedule", kernel_ids)


def render(policies: Mapping) -> str:
    """The source of the generated scheduler module for ``policies`` (name -> ``Policy``, in discovery order)."""
    from msjgym.policies._codegen import Imports, branch_chain

    ids = kernel_ids(policies)
    imports = Imports()

    def chain(hook: str, args: str) -> list[str]:
        return branch_chain(ids, {name: getattr(policies[name], hook) for name in ids}, args, imports)

    body = [
        "", "", "@njit(inline=\"always\")", "def schedule(st, pr, b):",
        "    \"\"\"Update the set of jobs in service of system b after an event.\"\"\"",
        "    p = pr.ints[P_POLICY]", *chain("schedule", "st, pr, b"),
        "", "", "@njit", "def schedule_call(st, pr, b):",
        "    \"\"\"``schedule`` as a plain call (callers outside the event loop: the loop keeps the only inline "
        "copy).\"\"\"",
        "    schedule(st, pr, b)",
        "", "", "@njit(inline=\"always\")", "def on_arrival(st, pr, b, j):",
        "    \"\"\"Policy bookkeeping when job j joins system b (before ``schedule``).\"\"\"",
        "    p = pr.ints[P_POLICY]", *chain("on_arrival", "st, pr, b, j"),
        "", "", "@njit(inline=\"always\")", "def on_departure(st, pr, b, c):",
        "    \"\"\"Policy bookkeeping when a class-c job leaves system b (before ``schedule``).\"\"\"",
        "    p = pr.ints[P_POLICY]", *chain("on_departure", "st, pr, b, c"),
    ]
    head = [
        "\"\"\"The compiled MSJ scheduler: one branch per built-in policy (see msjgym.policies.msj.scheduler).\"\"\"",
        "from msjgym.core.jit import njit",
        "from msjgym.systems.msj.state import P_POLICY",
        *imports.lines(),
        "", f"KERNEL_IDS = {ids!r}",
    ]
    return "\n".join(head + body) + "\n"


def generate(policies: Mapping):
    """Write (when changed) and import the generated scheduler module for ``policies``."""
    from msjgym.policies._codegen import load

    return load("msjgym.policies.msj._gen_scheduler", GENERATED, render(policies))
