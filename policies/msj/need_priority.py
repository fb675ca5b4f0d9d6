"""Most-Servers-First and Least-Servers-First: priority by server need, oldest first within a need.

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis", §7.3 (MSF and
LSF, simulated preemptively: all jobs sorted by need, placed greedily, non-fitting jobs skipped, re-evaluated at
every arrival and completion). The non-preemptive variants apply the same order to waiting jobs only.
"""
from __future__ import annotations

import numpy as np

from msjgym.core.jit import njit
from msjgym.systems.msj.state import P_GROUPS, P_SERVERS, apply_targets
from msjgym.systems.msj.contract import Policy
from .agent_forms import SetAgent, SetView, StartAgent
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


# ---------------------------------------------------------------- agent form
class NeedPriorityStartAgent(StartAgent):
    """``msf-nonpreemptive`` / ``lsf-nonpreemptive``: among the waiting jobs that fit, the largest (smallest) need
    first, the oldest first within a need (classes sharing a need merged by arrival order)."""

    largest_first = True

    def pick(self, obs: np.ndarray, free: int, waiting: list[int]) -> int:
        fit = [c for c in range(self.K) if waiting[c] > 0 and self.need[c] <= free]
        if not fit:
            return -1
        best = (max if self.largest_first else min)(self.need[c] for c in fit)
        return self._oldest_head(obs, [c for c in fit if self.need[c] == best], waiting)


class MSFNonpreemptiveAgent(NeedPriorityStartAgent):
    policy_name = "msf-nonpreemptive"
    largest_first = True


class LSFNonpreemptiveAgent(NeedPriorityStartAgent):
    policy_name = "lsf-nonpreemptive"
    largest_first = False


class NeedPriorityAgent(SetAgent):
    """``msf`` / ``lsf``: fill the servers need group by need group (largest or smallest need first), the oldest
    jobs first within a group."""

    largest_first = True

    def targets(self, view: SetView) -> list[int]:
        G = len(self.grp_need)
        free = self.n
        targets = [0] * self.K
        for i in range(G):
            g = i if self.largest_first else G - 1 - i
            v = self.grp_need[g]
            count = min(self.group_count(view, g), free // v)
            free -= count * v
            self.split_group(view, g, count, targets)
        return targets


class MSFAgent(NeedPriorityAgent):
    policy_name = "msf"
    largest_first = True


class LSFAgent(NeedPriorityAgent):
    policy_name = "lsf"
    largest_first = False


# ---------------------------------------------------------------- declaration
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
