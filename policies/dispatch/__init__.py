"""The built-in dispatchers of the large-scale load-balancing system (family ``dispatch``).

``POLICIES`` holds every module-level :class:`~msjgym.policies.dispatch.load_balancing.DispatchPolicy` of this
package, discovered from its modules (:func:`msjgym.policies.discover`). Each carries its compiled decision
(``choose``), a small kernel the family's one event loop (:mod:`msjgym.systems.dispatch.kernel`) takes as an
argument; the agent forms are in :mod:`msjgym.policies.dispatch.load_balancing_agents`.
"""
from __future__ import annotations

from msjgym.policies import discover, lookup

from .load_balancing import DispatchPolicy

POLICIES: dict[str, DispatchPolicy] = discover(__name__, "dispatch")
"""Every built-in dispatcher, by name (as the API and the command line spell them), in discovery order."""


def get_dispatch_policy(name: str) -> DispatchPolicy:
    """The dispatcher called ``name``; ``PolicyError`` listing the valid names otherwise."""
    return lookup(POLICIES, name, "dispatch")


__all__ = ["DispatchPolicy", "POLICIES", "get_dispatch_policy"]
