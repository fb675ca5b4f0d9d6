"""The built-in policies of every system family (importable as ``msjgym.policies``), one subpackage per family.

==========================================  ==========================================================================
subpackage                                  family (``PolicySpec.family``)
==========================================  ==========================================================================
:mod:`msjgym.policies.msj`                  ``msj``: multiserver-job scheduling (FCFS, ServerFilling, MSF, SMASH, ...)
:mod:`msjgym.policies.dispatch`             ``dispatch``: large-scale load balancing (JSQ(d), JIQ, push, pull, ...)
:mod:`msjgym.policies.loss`                 ``loss``: loss systems with adaptive multiserver jobs (greedy, ...)
:mod:`msjgym.policies.finite_skip`          ``finite-skip``: the finite-skip models (FSF, LPS, IF/EF, ...)
==========================================  ==========================================================================

A built-in policy is one declaration: a module-level instance of a subclass of :class:`msjgym.api.PolicySpec` (name,
summary, family, preemptive, source, parameters with ranges) that also carries its compiled decision kernel and its
agent form. Each family subpackage exposes ``POLICIES: dict[str, PolicySpec]``, built by :func:`discover`: every
module of the subpackage is imported and every module-level ``PolicySpec`` instance in it is registered, in module
order (modules sorted by name, declarations in the order they appear). Adding a policy is adding one file; see
``docs/extending.md``.
"""
from __future__ import annotations

from msjgym.core.policy_registry import BuiltinPolicy, Choice, discover, registered

__all__ = ["BuiltinPolicy", "Choice", "discover", "registered"]
