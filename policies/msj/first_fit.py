"""First-fit packing in arrival order: non-preemptive backfilling, and its preemptive variant.

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis", §7.3
(Preemptive First Fit: FCFS with skipping, re-evaluated at every arrival and completion).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.msj.state import C_HEAD, J_NEXT, J_SEQ, P_K, P_SERVERS, apply_targets
from .agents import FirstFitAgent, PreemptiveFirstFitAgent
from .base import Policy
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
