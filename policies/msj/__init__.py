"""The built-in multiserver-job scheduling policies (family ``msj``), one declaration per policy.

``POLICIES`` holds every module-level :class:`~msjgym.systems.msj.contract.Policy` of this package, discovered from its
modules (:func:`msjgym.policies.discover`); one is looked up by its command-line name with
``msjgym.api.policy_spec(family, name)`` (or ``POLICIES[name]``). Each policy's kernels are compiled on their first
use and plugged into the event loop (:mod:`msjgym.systems.msj.loop`). Adding a policy is adding one module here: see
``docs/extending.md``.
"""
from __future__ import annotations

from msjgym.policies import discover

from msjgym.systems.msj.contract import Policy

POLICIES: dict[str, Policy] = discover(__name__, "msj")
"""Every built-in MSJ policy, by name, in discovery order (modules by name, declarations in order)."""

__all__ = ["Policy", "POLICIES"]
