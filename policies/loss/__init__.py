"""The built-in policies of the loss systems with adaptive multiserver jobs (family ``loss``).

``POLICIES`` holds every module-level :class:`~msjgym.policies.loss.loss.LossPolicy` of this package, discovered
from its modules (:func:`msjgym.policies.discover`). Each carries its compiled kernels (width, P(block | state),
P(width d | state)), which the family's one event loop (:mod:`msjgym.systems.loss.kernel`) calls at their addresses.
"""
from __future__ import annotations

from msjgym.policies import discover, lookup

from .loss import LossPolicy

POLICIES: dict[str, LossPolicy] = discover(__name__, "loss")
"""Every built-in loss policy, by name, in discovery order."""

LOSS_POLICIES = POLICIES  # the name the loss code has used


def get_loss_policy(name: str) -> LossPolicy:
    """The loss-system policy called ``name``; ``PolicyError`` listing the valid names otherwise."""
    return lookup(POLICIES, name, "loss")


__all__ = ["LossPolicy", "POLICIES", "LOSS_POLICIES", "get_loss_policy"]
