"""First-fit packing in arrival order: non-preemptive backfilling, and its preemptive variant.

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis", §7.3
(Preemptive First Fit: FCFS with skipping, re-evaluated at every arrival and completion).
"""
from __future__ import annotations

import numpy as np

from msjgym.core.jit import njit
from msjgym.systems.msj.state import C_HEAD, J_NEXT, J_SEQ, P_K, P_SERVERS, apply_targets
from msjgym.systems.msj.contract import Policy
from .agent_forms import SetAgent, SetView, StartAgent
from .common import ORDER_ARRIVAL, admit, clear_targets


@njit(inline="always")
def schedule(st, pr, b):
    """Start every waiting job that fits, scanning in arrival order (skip jobs that do not fit)."""
    admit(st, pr, b, ORDER_ARRIVAL, False)


@njit(inline="always")
def schedule_preemptive(st, pr, b):
    """Serve the jobs a first-fit scan of all jobs in arrival order places (skip misfits); preempt the rest.

    Within a class every job has the same need, so the placed jobs of each class are its oldest: a K-way merge by
    arrival order suffices. Cost O(K) per job placed.
    """
    K = pr.ints[P_K]
    free = pr.ints[P_SERVERS]
    sc = st.scratch  # [b, c]: target count; [b, K + c]: next class-c job to place
    clear_targets(st, pr, b)
    for c in range(K):
        sc[b, K + c] = st.cls_i[b, c, C_HEAD]
    while True:
        best = -1
        for c in range(K):
            j = sc[b, K + c]
            if j < 0 or pr.need[c] > free:
                continue
            if best < 0 or st.job_i[b, j, J_SEQ] < st.job_i[b, sc[b, K + best], J_SEQ]:
                best = c
        if best < 0:
            break
        sc[b, best] += 1
        free -= pr.need[best]
        sc[b, K + best] = st.job_i[b, sc[b, K + best], J_NEXT]
    apply_targets(st, pr, b)


# ---------------------------------------------------------------- agent form
class FirstFitAgent(StartAgent):
    """``first-fit``: start the oldest waiting job that fits (skip the others)."""

    policy_name = "first-fit"

    def pick(self, obs: np.ndarray, free: int, waiting: list[int]) -> int:
        fit = [c for c in range(self.K) if waiting[c] > 0 and self.need[c] <= free]
        return self._oldest_head(obs, fit, waiting) if fit else -1


class PreemptiveFirstFitAgent(SetAgent):
    """``preemptive-first-fit``: place the jobs in arrival order, skipping those that do not fit what is left."""

    policy_name = "preemptive-first-fit"

    def targets(self, view: SetView) -> list[int]:
        need = self.need
        targets = [0] * self.K
        seen = [0] * self.K
        free = self.n
        for c in view.seq:
            seen[c] += 1
            if need[c] <= free:
                targets[c] += 1
                free -= need[c]
        if view.truncated:  # jobs beyond the window: only classes that still fit matter (free only decreases)
            rest = {c: view.N[c] - seen[c] for c in range(self.K) if view.N[c] > seen[c] and need[c] <= free}
            if len(rest) == 1:
                (c, r), = rest.items()
                targets[c] += min(r, free // need[c])
            elif sum(r * need[c] for c, r in rest.items()) <= free:  # all of them fit, in any order
                for c, r in rest.items():
                    targets[c] += r
            else:
                raise self._not_enough(f"jobs of classes {sorted(rest)} beyond the window would fit the {free} "
                                       f"servers left, in an arrival order not shown")
        return targets


# ---------------------------------------------------------------- declaration
FIRST_FIT = Policy(
    name="first-fit",
    summary="First-fit backfilling (non-preemptive): start any waiting job that fits, oldest first",
    preemptive=False,
    source="Grosof, Harchol-Balter & Scheller-Wolf, finite-skip §7.3 (non-preemptive counterpart of PFF)",
    schedule=schedule,
    agent_class=FirstFitAgent,
)

PREEMPTIVE_FIRST_FIT = Policy(
    name="preemptive-first-fit",
    summary="Preemptive first fit: at every event, serve the jobs a first-fit scan in arrival order places",
    preemptive=True,
    source="Grosof, Harchol-Balter & Scheller-Wolf, finite-skip §7.3 (PFF)",
    schedule=schedule_preemptive,
    agent_class=PreemptiveFirstFitAgent,
)
