"""Conservative backfilling: every waiting job holds a reservation; a job starts early only if that delays no one.

Every waiting job holds a reservation (a planned start time) on a *profile* of the servers free in the future, built
from the running jobs' estimated completion times and the other waiting jobs' reservations (each occupying its
need from its reservation for its runtime estimate). A job's reservation is the earliest time at which it fits in the
profile for its whole estimated runtime. After every event (an arrival or completions) the schedule is compressed in
arrival order: each waiting job in turn leaves the profile and takes the earliest reservation that fits among all the
other jobs' current reservations, which is never later than its previous one (its old place is still free); a new job
gets its first reservation the same way, after every older job. A job whose reservation is now starts now. So a job
starts before older ones (is backfilled) only where that delays no earlier job's reservation, by the estimates.
Non-preemptive.

Estimates: each job's runtime estimate is set by the scenario's ``estimate`` (exact by default; see
``msjgym.systems.msj.scenarios``). A job that runs past its estimate is seen as ending now (0 estimated time left)
until it completes, so the reservations planned on its servers may slip; a job reserved now that does not fit in the
servers actually free keeps its reservation and waits (``docs/modelling-choices.md#backfilling-overrun``). The
compression: ``docs/modelling-choices.md#backfilling-conservative-compression``.

Source: A. W. Mu'alem and D. G. Feitelson, "Utilization, predictability, workloads, and user runtime estimates in
scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6), 2001, §2 (conservative backfilling: reservations for
all queued jobs, the profile of free nodes, and compression of the schedule when jobs end before their estimates).

No agent form: the ``msjgym/MSJ-v0`` observation shows no estimates (``EstimatesNotObservedAgent``); the kernel is
tested decision for decision against a pure-Python reference of the rule above (``tests/test_backfilling.py``).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.msj.state import (
    C_BOUND, INF, J_CLS, J_NEXT, J_RES, P_K, P_SERVERS, S_BUSY, S_HEAPN, T_NOW, estimated_end,
    estimated_remaining, start_job)

from .agents import EstimatesNotObservedAgent
from .base import Policy
from .common import next_in_arrival_order, oldest_waiting


# ---------------------------------------------------------------- the profile of free servers
# Breakpoints prof_t[b, 0] = now < prof_t[b, 1] < ... < prof_t[b, P - 1]; prof_f[b, k] servers are free on
# [prof_t[b, k], prof_t[b, k + 1]) (the last segment extends to infinity). P is carried by the kernel.
@njit(inline="always")
def _breakpoint(st, b, P, t):
    """The index of a breakpoint at time t (>= now), inserted if missing; returns (index, new P)."""
    k = P - 1
    while st.prof_t[b, k] > t:
        k -= 1
    if st.prof_t[b, k] == t:
        return k, P
    for i in range(P, k + 1, -1):
        st.prof_t[b, i] = st.prof_t[b, i - 1]
        st.prof_f[b, i] = st.prof_f[b, i - 1]
    st.prof_t[b, k + 1] = t
    st.prof_f[b, k + 1] = st.prof_f[b, k]
    return k + 1, P + 1


@njit(inline="always")
def _add(st, b, P, t0, t1, delta):
    """Add ``delta`` free servers over [t0, t1) (t0 < t1); returns the new P."""
    i0, P = _breakpoint(st, b, P, t0)
    i1, P = _breakpoint(st, b, P, t1)
    for k in range(i0, i1):
        st.prof_f[b, k] += delta
    return P


@njit(inline="always")
def _earliest(st, b, P, m, d):
    """The earliest breakpoint time from which ``m`` servers are free for a duration ``d``."""
    k = 0
    while True:
        t = st.prof_t[b, k]
        s = k
        while s < P and st.prof_t[b, s] < t + d and st.prof_f[b, s] >= m:
            s += 1
        if s == P or st.prof_t[b, s] >= t + d:
            return t
        k = s + 1  # segment s has too few servers: no start before its end fits


# ---------------------------------------------------------------- compiled kernel
@njit
def schedule(st, pr, b):
    """Build the profile (running jobs by estimated end, waiting jobs by reservation), compress it in arrival order
    and start the jobs whose reservation is now.

    Cost O((R + Q)·P) per event for R running and Q waiting jobs, P <= 1 + R + 4Q breakpoints. Memory: the state's
    ``prof_t``/``prof_f`` (grown with the job capacity); scratch ``[K, 2K)`` walk pointers.
    """
    if oldest_waiting(st, pr, b) < 0:
        return
    K = pr.ints[P_K]
    n = pr.ints[P_SERVERS]
    now = st.sys_f[b, T_NOW]
    P = build_profile(st, pr, b, now)
    # compress in arrival order
    free = n - st.sys_i[b, S_BUSY]
    for c in range(K):
        st.scratch[b, K + c] = st.cls_i[b, c, C_BOUND]
    while True:
        c = next_in_arrival_order(st, pr, b, n)
        if c < 0:
            return
        j = st.scratch[b, K + c]
        st.scratch[b, K + c] = st.job_i[b, j, J_NEXT]  # read before start_job relinks j
        m = pr.need[c]
        d = estimated_remaining(st, b, j, now)
        r = st.job_f[b, j, J_RES]
        if d > 0.0:
            if r < INF:
                P = _add(st, b, P, r, r + d, m)
            r = _earliest(st, b, P, m, d)
            P = _add(st, b, P, r, r + d, -m)
        else:
            r = now
        st.job_f[b, j, J_RES] = r
        if r == now and m <= free:
            start_job(st, pr, b, j)
            free -= m


@njit
def build_profile(st, pr, b, now):
    """The profile of free servers from now on, built from scratch: the running jobs until their estimated ends and
    the waiting jobs at their reservations (a reservation already past is moved to now); returns P, its number of
    breakpoints."""
    K = pr.ints[P_K]
    st.prof_t[b, 0] = now
    st.prof_f[b, 0] = pr.ints[P_SERVERS]
    P = 1
    for i in range(st.sys_i[b, S_HEAPN]):
        j = st.heap[b, i]
        end = estimated_end(st, b, j, now)
        if end > now:
            P = _add(st, b, P, now, end, -pr.need[st.job_i[b, j, J_CLS]])
    for c in range(K):
        j = st.cls_i[b, c, C_BOUND]
        while j >= 0:
            r = st.job_f[b, j, J_RES]
            if r < INF:
                if r < now:
                    r = now
                    st.job_f[b, j, J_RES] = now
                d = estimated_remaining(st, b, j, now)
                if d > 0.0:
                    P = _add(st, b, P, r, r + d, -pr.need[c])
            j = st.job_i[b, j, J_NEXT]
    return P


# ---------------------------------------------------------------- agent form
class ConservativeBackfillingAgent(EstimatesNotObservedAgent):
    """``conservative-backfilling`` has no agent form (see ``EstimatesNotObservedAgent``)."""

    policy_name = "conservative-backfilling"


# ---------------------------------------------------------------- declaration
CONSERVATIVE_BACKFILLING = Policy(
    name="conservative-backfilling",
    summary="Conservative backfilling: every waiting job holds a reservation; start a job early only if it delays "
            "no reservation",
    preemptive=False,
    source="Mu'alem & Feitelson, \"Utilization, predictability, workloads, and user runtime estimates in scheduling "
           "the IBM SP2 with backfilling\", IEEE TPDS 12(6), 2001, §2",
    schedule=schedule,
    agent_class=ConservativeBackfillingAgent,
)
