"""The built-in dispatchers of the large-scale load-balancing system (family ``dispatch``).

``POLICIES`` holds every module-level :class:`~msjgym.policies.dispatch.load_balancing.DispatchPolicy` of this
package, discovered from its modules (:func:`msjgym.policies.discover`); ``POLICY_IDS`` their kernel ids. Importing
the package (re)generates the compiled ``choose`` that branches to the dispatchers' kernels
(:mod:`msjgym.policies.dispatch.chooser`); the agent forms are in
:mod:`msjgym.policies.dispatch.load_balancing_agents`.
"""
from __future__ import annotations

from msjgym.policies import discover, lookup

from .load_balancing import DispatchPolicy

POLICIES: dict[str, DispatchPolicy] = discover(__name__, "dispatch")
"""Every built-in dispatcher, by name, in discovery order."""

from .chooser import generate as _generate, kernel_ids as _kernel_ids  # noqa: E402

POLICY_IDS: dict[str, int] = _kernel_ids(POLICIES)
"""Dispatcher names (as the API and the command line spell them) and their kernel ids (``params.ints[P_POLICY]``)."""

choose = _generate(POLICIES).choose
"""The compiled decision: ``choose(st, pr, b, now) -> server`` (inlined into the event loop)."""


def get_dispatch_policy(name: str) -> DispatchPolicy:
    """The dispatcher called ``name``; ``PolicyError`` listing the valid names otherwise."""
    return lookup(POLICIES, name, "dispatch")


__all__ = ["DispatchPolicy", "POLICIES", "POLICY_IDS", "choose", "get_dispatch_policy"]
