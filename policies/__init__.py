"""The papers' scheduling policies as built-in agents (importable as ``msjgym.policies``).

Every built-in policy runs inside the compiled fast path; ``get_policy(name)`` returns it by its command-line name.
"""
from __future__ import annotations

from msjgym.errors import PolicyError

from .base import Policy
from .fcfs import FCFS
from .first_fit import FIRST_FIT, PREEMPTIVE_FIRST_FIT
from .maxweight import MAXWEIGHT
from .need_priority import LSF, LSF_NONPREEMPTIVE, MSF, MSF_NONPREEMPTIVE
from .server_filling import SERVER_FILLING, SERVER_FILLING_DIVISIBLE

BUILTIN_POLICIES: dict[str, Policy] = {
    p.name: p
    for p in (FCFS, FIRST_FIT, PREEMPTIVE_FIRST_FIT, MSF, LSF, MSF_NONPREEMPTIVE, LSF_NONPREEMPTIVE,
              SERVER_FILLING, SERVER_FILLING_DIVISIBLE, MAXWEIGHT)
}


def get_policy(name: str) -> Policy:
    """The built-in policy called ``name``; ``PolicyError`` listing the valid names otherwise."""
    try:
        return BUILTIN_POLICIES[name]
    except KeyError:
        raise PolicyError(f"--policy {name!r}: unknown policy; valid: {', '.join(BUILTIN_POLICIES)}") from None


__all__ = ["Policy", "BUILTIN_POLICIES", "get_policy"] + [p.upper().replace("-", "_") for p in BUILTIN_POLICIES]
