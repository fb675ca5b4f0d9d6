"""EASY backfilling (aggressive backfilling): FCFS, and a later job may start early if it does not delay the first.

Jobs are served in arrival order (FCFS) while the oldest waiting job (the *head*) fits. When the head does not fit,
it gets a reservation: the *shadow time*, the earliest time at which, by the running jobs' estimated completion
times, enough servers will be free for it, and the *extra* servers, those free at the shadow time beyond the head's
need. A later waiting job, taken in arrival order, starts now (is *backfilled*) if it fits in the servers free now and
either its estimated completion (now + its runtime estimate) is no later than the shadow time, or it needs no more
than the extra servers (which it then uses up). So a backfilled job never delays the head's reservation (by the
estimates); it may delay the jobs behind the head. Non-preemptive.

Estimates: each job's runtime estimate is set by the scenario's ``estimate`` (exact by default; see
``msjgym.systems.msj.scenarios``). A job that runs past its estimate is seen as ending now (0 estimated time left)
until it completes (``docs/modelling-choices.md#backfilling-overrun``).

Sources: D. Lifka, "The ANL/IBM SP scheduling system", JSSPP 1995, LNCS 949 (EASY); A. W. Mu'alem and D. G.
Feitelson, "Utilization, predictability, workloads, and user runtime estimates in scheduling the IBM SP2 with
backfilling", IEEE TPDS 12(6), 2001, §2 (the shadow time and extra nodes rule stated above). The backfilling
policy of the multiserver-job simulator of Olliaro, Anggraito, Ajmone Marsan, Balsamo & Marin (mjqm-simulator)
backfills only jobs that end by the shadow time, with exact durations; this is the full EASY rule.

No agent form: the ``msjgym/MSJ-v0`` observation shows estimates only for its window's jobs (``estimates=True``;
``EstimatesNotObservedAgent``); the kernel is tested decision for decision against a pure-Python reference of the
rule above (``tests/test_backfilling.py``).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.msj.state import (
    C_BOUND, J_CLS, J_NEXT, P_K, P_SERVERS, S_BUSY, T_NOW, next_in_arrival_order, oldest_waiting)
from msjgym.systems.msj.contract import Policy

from .agent_forms import EstimatesNotObservedAgent
from msjgym.systems.msj.backfilling import EASY_STATE, easy_backfill, reservation
from .common import ORDER_ARRIVAL, admit


# ---------------------------------------------------------------- compiled kernel
@njit
def schedule(st, pr, b):
    """FCFS while the head fits; then backfill, in arrival order, the waiting jobs that fit now and end (by their
    estimates) by the head's shadow time or fit in its extra servers.

    Cost: O(K) per job started in FCFS order; when the head is blocked and some waiting job fits now, O(R log R) for
    the reservation (R running jobs) and O(K) per waiting job scanned (the classes' waiting lists merged by arrival
    order, skipping classes that do not fit). Scratch: ``[K, 2K)`` walk pointers; own state (``EASY_STATE``): the heap.
    """
    admit(st, pr, b, ORDER_ARRIVAL, True)
    K = pr.ints[P_K]
    free = pr.ints[P_SERVERS] - st.sys_i[b, S_BUSY]
    head = oldest_waiting(st, pr, b)
    if head < 0 or free == 0:
        return
    candidates = False
    for c in range(K):
        ptr = st.cls_i[b, c, C_BOUND]
        st.scratch[b, K + c] = ptr
        if ptr >= 0 and pr.need[c] <= free:  # the head's class does not fit: its jobs are not candidates
            candidates = True
    if not candidates:
        return
    now = st.sys_f[b, T_NOW]
    shadow, extra = reservation(st, pr, b, pr.need[st.job_i[b, head, J_CLS]], free, now)
    while free > 0:
        c = next_in_arrival_order(st, pr, b, free)
        if c < 0:
            return
        j = st.scratch[b, K + c]
        st.scratch[b, K + c] = st.job_i[b, j, J_NEXT]  # read before start_job relinks j
        free, extra = easy_backfill(st, pr, b, j, pr.need[c], free, extra, shadow, now)


# ---------------------------------------------------------------- agent form
class EasyBackfillingAgent(EstimatesNotObservedAgent):
    """``easy-backfilling`` has no agent form (see ``EstimatesNotObservedAgent``)."""

    policy_name = "easy-backfilling"


# ---------------------------------------------------------------- declaration
EASY_BACKFILLING = Policy(
    name="easy-backfilling",
    summary="EASY backfilling: FCFS; a later job starts early if, by runtime estimates, it does not delay the head",
    preemptive=False,
    source="Lifka, \"The ANL/IBM SP scheduling system\", JSSPP 1995 (EASY); Mu'alem & Feitelson, IEEE TPDS 12(6), "
           "2001, §2 (shadow time and extra nodes)",
    schedule=schedule,
    agent_class=EasyBackfillingAgent,
    estimates=True,
    state=EASY_STATE,
)
