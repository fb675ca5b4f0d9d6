"""The built-in policies of the finite-skip systems (family ``finite-skip``): heterogeneous M/G/k, LPS, threshold
parallelism, and multiserver jobs as a rate model.

``POLICIES`` holds every module-level :class:`~msjgym.policies.finite_skip.finite_skip.FiniteSkipPolicy` of this
package, discovered from its modules (:func:`msjgym.policies.discover`). Each carries its compiled kernel
(``allocate``), which the family's one event loop (:mod:`msjgym.systems.finite_skip.simulate`) calls at its address;
the agent forms are :class:`~msjgym.policies.finite_skip.finite_skip_agents.FiniteSkipAgent`. ``FSF``, ``FSF_MINMIG``,
``SF_EXP`` and ``SF_DIV`` name the policies the simulator and the theory treat apart.
"""
from __future__ import annotations

from msjgym.policies import discover, lookup

from .finite_skip import FSF, FSF_MINMIG, HET, LPS, MSJ, SF_DIV, SF_EXP, SYSTEM_NAMES, THRESHOLD, FiniteSkipPolicy

POLICIES: dict[str, FiniteSkipPolicy] = discover(__name__, "finite-skip")
"""Every built-in finite-skip policy, by name, in discovery order."""

FINITE_SKIP_POLICIES = POLICIES  # the name the finite-skip code has used


def get_finite_skip_policy(name: str) -> FiniteSkipPolicy:
    """The finite-skip policy called ``name``; ``PolicyError`` listing the valid names otherwise."""
    return lookup(POLICIES, name, "finite-skip")


__all__ = ["FiniteSkipPolicy", "POLICIES", "FINITE_SKIP_POLICIES", "get_finite_skip_policy", "HET", "LPS",
           "MSJ", "THRESHOLD", "SYSTEM_NAMES", "FSF", "FSF_MINMIG", "SF_DIV", "SF_EXP"]
