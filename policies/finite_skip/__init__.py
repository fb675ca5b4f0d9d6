"""The built-in policies of the finite-skip systems (family ``finite-skip``): heterogeneous M/G/k, LPS, threshold
parallelism, and multiserver jobs as a rate model.

``POLICIES`` holds every module-level :class:`~msjgym.policies.finite_skip.finite_skip.FiniteSkipPolicy` of this
package, discovered from its modules (:func:`msjgym.policies.discover`). Importing the package (re)generates the
compiled ``allocate`` that branches to the policies' kernels (:mod:`msjgym.policies.finite_skip.allocator`); the
agent forms are :class:`~msjgym.policies.finite_skip.finite_skip_agents.FiniteSkipAgent`.
"""
from __future__ import annotations

from msjgym.policies import discover, lookup

from .finite_skip import HET, LPS, MSJ, SYSTEM_NAMES, THRESHOLD, FiniteSkipPolicy

POLICIES: dict[str, FiniteSkipPolicy] = discover(__name__, "finite-skip")
"""Every built-in finite-skip policy, by name, in discovery order."""

FINITE_SKIP_POLICIES = POLICIES  # the name the finite-skip code has used

from .allocator import generate as _generate  # noqa: E402

allocate = _generate(POLICIES).allocate
"""The compiled allocator: ``allocate(pid, n, cls, prm, srv, speeds, k, levels, taken, rates, rng)``."""

# kernel ids the theory and the simulator compare with (assigned by discovery)
FSF = POLICIES["fsf"].kernel_id
FSF_MINMIG = POLICIES["fsf-minmig"].kernel_id
SF_EXP = POLICIES["server-filling"].kernel_id
SF_DIV = POLICIES["server-filling-divisible"].kernel_id


def get_finite_skip_policy(name: str) -> FiniteSkipPolicy:
    """The finite-skip policy called ``name``; ``PolicyError`` listing the valid names otherwise."""
    return lookup(POLICIES, name, "finite-skip")


__all__ = ["FiniteSkipPolicy", "POLICIES", "FINITE_SKIP_POLICIES", "get_finite_skip_policy", "allocate", "HET", "LPS",
           "MSJ", "THRESHOLD", "SYSTEM_NAMES", "FSF", "FSF_MINMIG", "SF_DIV", "SF_EXP"]
