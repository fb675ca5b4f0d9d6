"""The built-in policies of the loss systems with adaptive multiserver jobs (family ``loss``).

``POLICIES`` holds every module-level :class:`~msjgym.policies.loss.loss.LossPolicy` of this package, discovered
from its modules (:func:`msjgym.policies.discover`). Importing the package (re)generates the compiled
``policy_width``, ``block_prob`` and ``width_d_prob`` that branch to the policies' kernels
(:mod:`msjgym.policies.loss.widths`).
"""
from __future__ import annotations

from msjgym.policies import discover, lookup

from .loss import LossPolicy

POLICIES: dict[str, LossPolicy] = discover(__name__, "loss")
"""Every built-in loss policy, by name, in discovery order."""

LOSS_POLICIES = POLICIES  # the name the loss code has used

from .widths import generate as _generate, kernel_ids as _kernel_ids  # noqa: E402

POLICY_IDS: dict[str, int] = _kernel_ids(POLICIES)
"""Policy names and their kernel ids (the loss kernels' ``policy`` argument)."""

_generated = _generate(POLICIES)
policy_width = _generated.policy_width
block_prob = _generated.block_prob
width_d_prob = _generated.width_d_prob


def get_loss_policy(name: str) -> LossPolicy:
    """The loss-system policy called ``name``; ``PolicyError`` listing the valid names otherwise."""
    return lookup(POLICIES, name, "loss")


__all__ = ["LossPolicy", "POLICIES", "LOSS_POLICIES", "POLICY_IDS", "get_loss_policy", "policy_width", "block_prob",
           "width_d_prob"]
