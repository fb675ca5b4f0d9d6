"""The built-in policies of the loss systems with adaptive multiserver jobs (family ``loss``), one file each.

``POLICIES`` holds every module-level :class:`~msjgym.systems.loss.contract.LossPolicy` of this package, discovered
from its modules (:func:`msjgym.policies.discover`); look one up with :func:`msjgym.api.policy_spec`. Each carries
its compiled kernels (width, P(block | state), P(width d | state): the slots of the family's contract,
:data:`msjgym.systems.loss.contract.KERNELS`), which the family's one event loop (:mod:`msjgym.systems.loss.loop`)
calls at their addresses, and its rule (the agent form).
"""
from __future__ import annotations

from msjgym.policies import discover
from msjgym.systems.loss.contract import LossPolicy

POLICIES: dict[str, LossPolicy] = discover(__name__, "loss")
"""Every built-in loss policy, by name, in discovery order."""

__all__ = ["LossPolicy", "POLICIES"]
