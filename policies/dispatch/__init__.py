"""The built-in dispatchers of the large-scale load-balancing system (family ``dispatch``).

``POLICIES`` holds every module-level :class:`~msjgym.policies.dispatch.load_balancing.DispatchPolicy` of this
package, discovered from its modules (:func:`msjgym.policies.discover`). The compiled decisions are in
:mod:`msjgym.policies.dispatch.load_balancing` (``choose``, ``water_fill``), the agent forms in
:mod:`msjgym.policies.dispatch.load_balancing_agents`.
"""
from __future__ import annotations

from msjgym.policies import discover, lookup

from .load_balancing import POLICY_IDS, DispatchPolicy

POLICIES: dict[str, DispatchPolicy] = discover(__name__, "dispatch")
"""Every built-in dispatcher, by name, in discovery order."""


def get_dispatch_policy(name: str) -> DispatchPolicy:
    """The dispatcher called ``name``; ``PolicyError`` listing the valid names otherwise."""
    return lookup(POLICIES, name, "dispatch")


__all__ = ["DispatchPolicy", "POLICIES", "POLICY_IDS", "get_dispatch_policy"]
