"""The built-in policies of the finite-skip systems (family ``finite-skip``): heterogeneous M/G/k, LPS, threshold
parallelism, and multiserver jobs as a rate model; one file per policy (or per family of variants of one rule).

``POLICIES`` holds every module-level :class:`~msjgym.systems.finite_skip.contract.FiniteSkipPolicy` of this
package, discovered from its modules (:func:`msjgym.policies.discover`); look one up with
:func:`msjgym.api.policy_spec`. Each carries its compiled kernel (``allocate``), which the family's one event loop
(:mod:`msjgym.systems.finite_skip.loop`) calls at its address, and its agent form (``rates``, run by
:class:`~msjgym.systems.finite_skip.contract.FiniteSkipAgent`). The system codes and the names of the policies the
simulator and the theory treat apart (``FSF``, ``FSF_MINMIG``, ``SF_EXP``, ``SF_DIV``) are the system's
(:mod:`msjgym.systems.finite_skip.contract`), re-exported here.
"""
from __future__ import annotations

from msjgym.policies import discover
from msjgym.systems.finite_skip.contract import (FSF, FSF_MINMIG, HET, LPS, MSJ, SF_DIV, SF_EXP, SYSTEM_NAMES,
                                                THRESHOLD, FiniteSkipAgent, FiniteSkipPolicy)

POLICIES: dict[str, FiniteSkipPolicy] = discover(__name__, "finite-skip")
"""Every built-in finite-skip policy, by name, in discovery order."""

__all__ = ["FiniteSkipPolicy", "FiniteSkipAgent", "POLICIES", "HET", "LPS", "MSJ", "THRESHOLD", "SYSTEM_NAMES", "FSF",
           "FSF_MINMIG", "SF_DIV", "SF_EXP"]
