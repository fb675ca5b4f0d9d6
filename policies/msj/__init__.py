"""The built-in multiserver-job scheduling policies (family ``msj``), one declaration per policy.

``POLICIES`` holds every module-level :class:`~msjgym.policies.msj.base.Policy` of this package, discovered from its
modules (:func:`msjgym.policies.discover`); ``get_policy(name)`` returns one by its command-line name. Each policy's
kernels are compiled on their first use and plugged into the event loop (:mod:`msjgym.systems.msj.loop`). Adding a policy is adding
one module here: see ``docs/extending.md``.
"""
from __future__ import annotations

from msjgym.policies import discover, lookup

from .base import Policy

POLICIES: dict[str, Policy] = discover(__name__, "msj")
"""Every built-in MSJ policy, by name, in discovery order (modules by name, declarations in order)."""

BUILTIN_POLICIES = POLICIES  # the name the MSJ code has used


def get_policy(name: str) -> Policy:
    """The built-in MSJ policy called ``name``; ``PolicyError`` listing the valid names otherwise."""
    return lookup(POLICIES, name, "msj")


__all__ = ["Policy", "POLICIES", "BUILTIN_POLICIES", "get_policy"]
