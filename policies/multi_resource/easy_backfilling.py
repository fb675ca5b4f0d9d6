"""EASY backfilling on resource vectors: FCFS, and a later job may start early if it does not delay the first.

Jobs start in arrival order while the oldest waiting job (the *head*) fits. When it does not, it gets a reservation:
the *shadow time*, the earliest estimated completion of running jobs by which every resource it demands is free
(jobs with equal estimated ends free theirs together), and the *extra* amounts, those free at the shadow time beyond
its demand (a vector). A later waiting job, in arrival order, starts now if it fits the free amounts now and either
it ends (by its runtime estimate) by the shadow time, or its demand fits the extra amounts (which it then uses up).
Non-preemptive. With several nodes the head is reserved on one node (the first where it fits at the shadow
time): a later job that does not end by the shadow time starts on another node if it fits one (it cannot delay the
head there), else on the reserved node only within the extra amounts.

The machinery is MSJ's (:mod:`msjgym.systems.msj.backfilling`): the running jobs' heap by estimated end
(``heap_running``, its state ``EASY_STATE``), estimates (``estimated_end``, ``estimated_remaining``); only the
amounts are vectors. With one resource it is ``msj``'s ``easy-backfilling``, bit for bit.

Sources: D. Lifka, "The ANL/IBM SP scheduling system", JSSPP 1995, LNCS 949 (EASY); A. W. Mu'alem and D. G.
Feitelson, "Utilization, predictability, workloads, and user runtime estimates in scheduling the IBM SP2 with
backfilling", IEEE TPDS 12(6), 2001, §2 (shadow time and extra nodes), whose servers become a vector here: the
head reserves every resource it demands, and "extra" is a vector of amounts.
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.msj.backfilling import BY_END, EASY_STATE, sift_down, heap_running
from msjgym.systems.msj.state import (
    C_BOUND, INF, J_CLS, J_NEXT, J_SEQ, P_K, T_NOW, estimated_end, estimated_remaining, oldest_waiting)
from msjgym.systems.multi_resource.contract import MultiResourcePolicy
from msjgym.systems.multi_resource.state import first_node, fits_on, start_on

from .fcfs import schedule as fcfs


@njit(inline="always")
def _pop_earliest_end(st, pr, b, base, n, now):
    """Pop every job of ``heap_running``'s heap whose estimated end is the earliest, adding their demands to the
    amounts available on their nodes (``res_work[b, node]``): (that end, the jobs left in the heap)."""
    sc = st.own_i
    t = estimated_end(st, b, sc[b, base], now)
    while n > 0 and estimated_end(st, b, sc[b, base], now) == t:
        j = sc[b, base]
        c = st.job_i[b, j, J_CLS]
        node = st.res_node[b, j]
        for r in range(pr.res_cap.shape[0]):
            st.res_work[b, node, r] += pr.res_demand[c, r]
        n -= 1
        sc[b, base] = sc[b, base + n]
        sift_down(st, b, base, n, 0, now, BY_END)
    return t, n


@njit(inline="always")
def _fits_available(st, pr, b, c, node):
    for r in range(pr.res_cap.shape[0]):
        if pr.res_demand[c, r] > st.res_work[b, node, r]:
            return False
    return True


@njit
def reservation(st, pr, b, c, now):
    """(shadow time, node) of a class-c head that fits no node now: the earliest estimated completion of running jobs
    by which it fits some node (the first such node); sets the extra amounts on that node, ``res_work[b, N]``."""
    R = pr.res_cap.shape[0]
    nodes = st.res_used.shape[1]
    for node in range(nodes):
        for r in range(R):
            st.res_work[b, node, r] = pr.res_cap[r] - st.res_used[b, node, r]
    base, n = heap_running(st, pr, b, now)
    shadow = INF  # not reached: once every running job has ended, everything is free
    chosen = 0
    while n > 0 and shadow == INF:
        t, n = _pop_earliest_end(st, pr, b, base, n, now)
        for node in range(nodes):
            if _fits_available(st, pr, b, c, node):
                shadow = t
                chosen = node
                break
    for r in range(R):
        st.res_work[b, nodes, r] = st.res_work[b, chosen, r] - pr.res_demand[c, r]
    return shadow, chosen


@njit(inline="always")
def _next_fitting(st, pr, b):
    """The class whose next candidate (walk pointer ``scratch[b, K + c]``) is oldest among those that fit a node
    now."""
    K = pr.ints[P_K]
    best = -1
    for c in range(K):
        j = st.scratch[b, K + c]
        if j >= 0 and first_node(st, pr, b, c) >= 0 and (
                best < 0 or st.job_i[b, j, J_SEQ] < st.job_i[b, st.scratch[b, K + best], J_SEQ]):
            best = c
    return best


@njit(inline="always")
def _first_node_but(st, pr, b, c, skip):
    """The first node other than ``skip`` a class-c job fits on (-1: none)."""
    for node in range(st.res_used.shape[1]):
        if node != skip and fits_on(st, pr, b, c, node):
            return node
    return -1


@njit
def schedule(st, pr, b):
    """FCFS while the head fits; then backfill, in arrival order, the waiting jobs that fit a node now: a job that
    ends by the head's shadow time on the first node it fits, else on the first node other than the head's reserved
    one, else on the reserved node if it fits its extra amounts. Scratch: ``[K, 2K)`` walk pointers; ``res_work``:
    the amounts available per node and the extra amounts."""
    fcfs(st, pr, b)
    K = pr.ints[P_K]
    head = oldest_waiting(st, pr, b)
    if head < 0:
        return
    candidates = False
    for c in range(K):
        ptr = st.cls_i[b, c, C_BOUND]
        st.scratch[b, K + c] = ptr
        if ptr >= 0 and first_node(st, pr, b, c) >= 0:
            candidates = True
    if not candidates:
        return
    now = st.sys_f[b, T_NOW]
    shadow, reserved = reservation(st, pr, b, st.job_i[b, head, J_CLS], now)
    R = pr.res_cap.shape[0]
    extra = st.res_used.shape[1]  # the row of the extra amounts
    while True:
        c = _next_fitting(st, pr, b)
        if c < 0:
            return
        j = st.scratch[b, K + c]
        st.scratch[b, K + c] = st.job_i[b, j, J_NEXT]  # read before start_on relinks j
        if now + estimated_remaining(st, b, j, now) <= shadow:
            start_on(st, pr, b, j, first_node(st, pr, b, c))
            continue
        node = _first_node_but(st, pr, b, c, reserved)
        if node >= 0:  # another node: the head's reservation is untouched
            start_on(st, pr, b, j, node)
            continue
        if not fits_on(st, pr, b, c, reserved):
            continue
        fits = True
        for r in range(R):
            if pr.res_demand[c, r] > st.res_work[b, extra, r]:
                fits = False
        if fits:
            for r in range(R):
                st.res_work[b, extra, r] -= pr.res_demand[c, r]
            start_on(st, pr, b, j, reserved)


EASY_BACKFILLING = MultiResourcePolicy(
    name="easy-backfilling",
    summary="EASY backfilling on resource vectors: FCFS; a later job starts early if, by runtime estimates, it does "
            "not delay the head's reservation of every resource",
    preemptive=False,
    source="Lifka, JSSPP 1995 (EASY); Mu'alem & Feitelson, IEEE TPDS 12(6), 2001, §2 (shadow time and extra nodes), "
           "on every resource",
    schedule=schedule,
    estimates=True,
    state=EASY_STATE,
)
