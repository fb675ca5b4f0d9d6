"""Most-Servers-First and Least-Servers-First: priority by server need, oldest first within a need.

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis", §7.3 (MSF and
LSF, simulated preemptively: all jobs sorted by need, placed greedily, non-fitting jobs skipped, re-evaluated at
every arrival and completion). The non-preemptive variants apply the same order to waiting jobs only.
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.msj.state import P_GROUPS, P_SERVERS, apply_targets
from .agents import LSFAgent, LSFNonpreemptiveAgent, MSFAgent, MSFNonpreemptiveAgent
from .base import Policy
from .common import ORDER_LARGEST, ORDER_SMALLEST, admit, group_count, split_group, clear_targets


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


@njit(inline="always")
def schedule_msf(st, pr, b):
    """MSF: ``schedule_preemptive`` largest need first."""
    schedule_preemptive(st, pr, b, True)


@njit(inline="always")
def schedule_lsf(st, pr, b):
    """LSF: ``schedule_preemptive`` smallest need first."""
    schedule_preemptive(st, pr, b, False)


@njit(inline="always")
def schedule_msf_nonpreemptive(st, pr, b):
    """MSF, non-preemptive: ``schedule_nonpreemptive`` largest need first."""
    schedule_nonpreemptive(st, pr, b, True)


@njit(inline="always")
def schedule_lsf_nonpreemptive(st, pr, b):
    """LSF, non-preemptive: ``schedule_nonpreemptive`` smallest need first."""
    schedule_nonpreemptive(st, pr, b, False)


_SRC = "Grosof, Harchol-Balter & Scheller-Wolf, finite-skip §7.3"

MSF = Policy(name="msf", summary="Most Servers First (preemptive): largest need first, oldest first within a need",
             preemptive=True, source=_SRC, schedule=schedule_msf, agent_class=MSFAgent)
LSF = Policy(name="lsf", summary="Least Servers First (preemptive): smallest need first, oldest first within a need",
             preemptive=True, source=_SRC, schedule=schedule_lsf, agent_class=LSFAgent)
MSF_NONPREEMPTIVE = Policy(
    name="msf-nonpreemptive",
    summary="Most Servers First, non-preemptive: start waiting jobs largest need first while they fit",
    preemptive=False, source=_SRC + " (non-preemptive variant)", schedule=schedule_msf_nonpreemptive,
    agent_class=MSFNonpreemptiveAgent)
LSF_NONPREEMPTIVE = Policy(
    name="lsf-nonpreemptive",
    summary="Least Servers First, non-preemptive: start waiting jobs smallest need first while they fit",
    preemptive=False, source=_SRC + " (non-preemptive variant)", schedule=schedule_lsf_nonpreemptive,
    agent_class=LSFNonpreemptiveAgent)
