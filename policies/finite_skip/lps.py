"""``lps``: limited processor sharing, the k oldest jobs share the capacity equally (finite-skip Fig. 3; Grosof,
Harchol-Balter & Scheller-Wolf §5.2)."""
from __future__ import annotations

import numpy as np

from msjgym.core.jit import njit

from msjgym.systems.finite_skip.contract import GHS, LPS, FiniteSkipAgent, FiniteSkipPolicy


@njit
def allocate_lps(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    m = min(n, k)
    for j in range(m):
        rates[j] = 1.0 / m


def _rates(agent: FiniteSkipAgent, p: list[int], srv: list[int]) -> np.ndarray:
    n = len(p)
    m = min(n, agent.k)
    return np.array([1.0 / m if j < m else 0.0 for j in range(n)])


LPS_K_POLICY = FiniteSkipPolicy(name="lps", system=LPS, preemptive=True, wcfs=True, allocate=allocate_lps,
                                rates=_rates, summary="limited processor sharing: the k oldest share the capacity",
                                source=f"{GHS} §5.2")
