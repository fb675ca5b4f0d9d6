"""Most-Servers-First and Least-Servers-First: priority by server need, oldest first within a need.

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis", §7.3 (MSF and
LSF, simulated preemptively: all jobs sorted by need, placed greedily, non-fitting jobs skipped, re-evaluated at
every arrival and completion). The non-preemptive variants apply the same order to waiting jobs only.
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.msj.state import P_GROUPS, P_SERVERS, apply_targets
from .base import Policy
from .common import ORDER_LARGEST, ORDER_SMALLEST, admit, group_count, split_group, clear_targets

MSF_ID = 3
LSF_ID = 4
MSF_NP_ID = 5
LSF_NP_ID = 6


@njit(inline="always")
def schedule_preemptive(st, pr, b, largest_first):
    """Fill servers need group by need group (largest or smallest need first), oldest first; O(K) per event."""
    G = pr.ints[P_GROUPS]
    free = pr.ints[P_SERVERS]
    clear_targets(st, pr, b)
    for i in range(G):
        g = i if largest_first else G - 1 - i
        v = pr.grp_need[g]
        count = min(group_count(st, pr, b, g), free // v)
        free -= count * v
        split_group(st, pr, b, g, count)
    apply_targets(st, pr, b)


@njit(inline="always")
def schedule_nonpreemptive(st, pr, b, largest_first):
    """Start waiting jobs by need priority while they fit (skip misfits); never preempt."""
    admit(st, pr, b, ORDER_LARGEST if largest_first else ORDER_SMALLEST, False)


_SRC = "Grosof, Harchol-Balter & Scheller-Wolf, finite-skip §7.3"

MSF = Policy("msf", "Most Servers First (preemptive): largest need first, oldest first within a need",
             True, MSF_ID, _SRC)
LSF = Policy("lsf", "Least Servers First (preemptive): smallest need first, oldest first within a need",
             True, LSF_ID, _SRC)
MSF_NONPREEMPTIVE = Policy(
    "msf-nonpreemptive", "Most Servers First, non-preemptive: start waiting jobs largest need first while they fit",
    False, MSF_NP_ID, _SRC + " (non-preemptive variant)")
LSF_NONPREEMPTIVE = Policy(
    "lsf-nonpreemptive", "Least Servers First, non-preemptive: start waiting jobs smallest need first while they fit",
    False, LSF_NP_ID, _SRC + " (non-preemptive variant)")
