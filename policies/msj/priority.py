"""The priority-plus-backfilling family of HPC batch schedulers: one job ordering combined with one backfilling rule.

Parameters (``--param order=sjf --param backfill=easy``; from Python ``POLICIES["priority"].bind(order="f1")``):

``order``, the priority of a waiting job (highest first; ties: the older job first). r is the job's runtime estimate
(a replayed trace's requested time, SWF field 9: ``msjgym.systems.msj.traces``; else the scenario's ``estimate``), n the
servers it needs (after scaling to the simulated machine), s its arrival time, w = now − s its waiting time:

* ``fcfs``: arrival order.
* ``sjf``: the smallest r (shortest job first by requested time).
* ``saf``: the smallest area r·n (smallest area first).
* ``f1``: the smallest log10(r)·n + 870·log10(s), the first (F1) of the four priority functions learned by
  Carastan-Santos & de Camargo, "Obtaining dynamic scheduling policies with simulation and machine learning",
  SC'17; fitted with times in seconds; s here is the submit time as the trace file states it (SWF field 2: the same
  in a whole replay and in every ``--windows`` window, as RLScheduler and the paper's simulator use it; a scenario
  without a trace counts from time 0; docs/modelling-choices.md#f1-time-origin); r and s below 1 count as 1.
* ``wfp3``: the largest (w/r)³·n, the WFP utility function of Tang, Lan, Desai & Buettner, "Fault-aware,
  utility-based job scheduling on Blue Gene/P systems", IEEE Cluster 2009 (used by Argonne's Cobalt scheduler).
* ``unicep``: the largest w / (log2(n)·r), the UNICEP utility function of the same paper. log2(1) = 0: as in RLScheduler (Zhang et al.,
  SC'20), the score is computed as (w + 1e-15) / (log2(n + 1e-15)·r), so one-server jobs come first.

WFP3 and UNICEP grow with the waiting time: every ordering is recomputed at every event (an arrival or completions).

``backfill``, what happens when the highest-priority waiting job (the *head*) does not fit:

* ``none``: nothing: jobs start in priority order while they fit; the first that does not fit blocks the others.
* ``easy``: EASY backfilling (Lifka 1995; Mu'alem & Feitelson, IEEE TPDS 12(6), 2001, §2) in priority order: the head
  gets a reservation at its *shadow time* (the earliest estimated completion by which enough servers are free) and
  the *extra* servers (free then beyond its need); another waiting job, in priority order, starts now if it fits
  and either ends (by its estimate) by the shadow time or needs no more than the extra servers (it then uses them).
  With ``order = "fcfs"`` this is ``easy-backfilling``, decision for decision.
* ``conservative``: conservative backfilling (Mu'alem & Feitelson §2) in priority order: every waiting job holds a
  reservation on the profile of future free servers; after every event the schedule is compressed in priority order
  (each job takes the earliest reservation that fits among the others' current ones), and a job whose reservation is
  now starts. With ``order = "fcfs"`` this is ``conservative-backfilling``, decision for decision; with a dynamic
  order a job may be placed after a younger one that now has a higher priority.
* ``easy-narrow``: the narrower rule of RLScheduler's HPCSim (Zhang, Dai, He, Bao & Xie, "RLScheduler: an automated
  HPC batch job scheduler using reinforcement learning", SC'20; its ``moveforward_for_resources_backfill_greedy``)
  and of the simulators built on it, so their published numbers can be reproduced: (1) a job backfills only if it
  ends (by its estimate) strictly before the shadow time: the extra servers are never used; (2) candidates are
  taken in arrival order whatever ``order`` is; (3) the head, once chosen, stays the head with the shadow time
  computed then, until it starts (a higher-priority arrival or an early completion does not change it).
  ``docs/modelling-choices.md#backfilling-narrow``.

Estimates: a job that runs past its estimate is seen as ending now (``docs/modelling-choices.md#backfilling-overrun``).
Non-preemptive. No agent form (``EstimatesNotObservedAgent``: the observation shows estimates only for its window,
and a start action starts the oldest job of a class); the kernel is checked decision for decision against a
plain-Python statement of each rule (``tests/test_priority.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

from msjgym.core.jit import njit
from msjgym.policies import Choice
from msjgym.systems.msj.model import MSJModel
from msjgym.systems.msj.state import (
    C_BOUND, INF, J_CLS, J_HPOS, J_KEY, J_NEXT, J_RES, J_SEQ, P_ARG, P_K, P_SERVERS, S_BUSY, T_NOW,
    estimated_remaining, start_job)
from msjgym.systems.msj.contract import Policy

from .agent_forms import EstimatesNotObservedAgent
from .backfilling import (
    O_F1, O_FCFS, ORDERS, add_free, build_profile, conservative, earliest_fit, kept_drop_started, kept_first,
    kept_on_arrival, kept_on_departure, priority_key, reservation)
from .common import oldest_waiting

BACKFILLS = ("none", "easy", "conservative", "easy-narrow")
B_NONE, B_EASY, B_CONSERVATIVE, B_NARROW = range(4)


# ---------------------------------------------------------------- the order buffer (time-dependent orders)
@njit(inline="always")
def _less(st, b, i, j):
    ki = st.job_f[b, i, J_KEY]
    kj = st.job_f[b, j, J_KEY]
    return ki < kj or (ki == kj and st.job_i[b, i, J_SEQ] < st.job_i[b, j, J_SEQ])


@njit(inline="always")
def _sift(st, b, base, n, pos, up):
    """Sift-down in the heap ``prof_f[b, base:base + n]`` from ``pos``: a min-heap (highest priority on top) if
    ``up``, else a max-heap (for an in-place sort into priority order)."""
    buf = st.prof_f
    while True:
        child = 2 * pos + 1
        if child >= n:
            return
        c2 = child + 1
        if c2 < n and _less(st, b, buf[b, base + c2], buf[b, base + child]) == up:
            child = c2
        if _less(st, b, buf[b, base + child], buf[b, base + pos]) != up:
            return
        tmp = buf[b, base + pos]
        buf[b, base + pos] = buf[b, base + child]
        buf[b, base + child] = tmp
        pos = child


@njit
def heap_waiting(st, pr, b, order, now):
    """Put the waiting jobs of system b into a min-heap by priority (highest on top) in the order buffer (the last
    ``capacity`` entries of ``prof_f[b]``, see ``msjgym.systems.msj.state.profile_size``); returns (its offset,
    their number). Each job's key is left in ``job_f[b, j, J_KEY]``. O(Q) for Q waiting jobs."""
    base = st.prof_f.shape[1] - st.job_i.shape[1]
    q = 0
    for c in range(pr.ints[P_K]):
        j = st.cls_i[b, c, C_BOUND]
        while j >= 0:
            st.job_f[b, j, J_KEY] = priority_key(st, pr, b, j, order, now)
            st.prof_f[b, base + q] = j
            q += 1
            j = st.job_i[b, j, J_NEXT]
    for pos in range(q // 2 - 1, -1, -1):
        _sift(st, b, base, q, pos, True)
    return base, q


@njit
def pop_first(st, b, base, q):
    """Remove the top of the min-heap ``prof_f[b, base:base + q]``; returns it (the heap then has q - 1 jobs)."""
    top = st.prof_f[b, base]
    st.prof_f[b, base] = st.prof_f[b, base + q - 1]
    _sift(st, b, base, q - 1, 0, True)
    return top


@njit
def sort_jobs(st, b, base, q):
    """Sort ``prof_f[b, base:base + q]`` (job slots with their keys in ``J_KEY``) into priority order, in place
    (heapsort, O(q log q))."""
    for pos in range(q // 2 - 1, -1, -1):
        _sift(st, b, base, q, pos, False)
    for end in range(q - 1, 0, -1):
        tmp = st.prof_f[b, base]
        st.prof_f[b, base] = st.prof_f[b, base + end]
        st.prof_f[b, base + end] = tmp
        _sift(st, b, base, end, 0, False)


# ---------------------------------------------------------------- backfilling rules
@njit
def _start_in_order(st, pr, b, base, q, free):
    """Start the jobs on top of the heap while they fit; returns (jobs left in the heap, free servers)."""
    while q > 0:
        j = st.prof_f[b, base]
        m = pr.need[st.job_i[b, j, J_CLS]]
        if m > free:
            break
        pop_first(st, b, base, q)
        q -= 1
        start_job(st, pr, b, j)
        free -= m
    return q, free


@njit
def _easy(st, pr, b, base, q, free, now):
    """EASY in priority order: the head (the top of the heap ``prof_f[b, base:base + q]``) does not fit in the
    ``free`` servers. The jobs that fit now are the only candidates: they are sorted by priority, and each starts if
    it ends by the shadow time or fits in the extra servers."""
    head = st.prof_f[b, base]
    n = 0
    for k in range(1, q):  # compact the candidates to the front (the head is kept in ``head``)
        j = st.prof_f[b, base + k]
        if pr.need[st.job_i[b, j, J_CLS]] <= free:
            st.prof_f[b, base + n] = j
            n += 1
    if n == 0:
        return
    sort_jobs(st, b, base, n)
    shadow, extra = reservation(st, pr, b, pr.need[st.job_i[b, head, J_CLS]], free, now)
    for k in range(n):
        if free == 0:
            return
        j = st.prof_f[b, base + k]
        m = pr.need[st.job_i[b, j, J_CLS]]
        if m > free:
            continue
        if now + estimated_remaining(st, b, j, now) <= shadow:
            start_job(st, pr, b, j)
            free -= m
        elif m <= extra:
            start_job(st, pr, b, j)
            free -= m
            extra -= m


@njit
def _conservative(st, pr, b, base, q, now):
    """Conservative backfilling, the schedule compressed in priority order (``conservative_backfilling.schedule``
    with the sorted order buffer in place of arrival order)."""
    sort_jobs(st, b, base, q)
    free = pr.ints[P_SERVERS] - st.sys_i[b, S_BUSY]
    P = build_profile(st, pr, b, now)
    for k in range(q):
        j = st.prof_f[b, base + k]
        m = pr.need[st.job_i[b, j, J_CLS]]
        d = estimated_remaining(st, b, j, now)
        r = st.job_f[b, j, J_RES]
        if d > 0.0:
            if r < INF:
                P = add_free(st, b, P, r, r + d, m)
            r = earliest_fit(st, b, P, m, d)
            P = add_free(st, b, P, r, r + d, -m)
        else:
            r = now
        st.job_f[b, j, J_RES] = r
        if r == now and m <= free:
            start_job(st, pr, b, j)
            free -= m


@njit
def _narrow(st, pr, b, order, now):
    """RLScheduler's rule (module docstring): a fixed head with its shadow time, backfilling in arrival order only
    jobs that end strictly before it. The head is remembered in ``scratch[b, 2K]`` (its slot + 1; 0: none) and
    ``scratch[b, 2K + 1]`` (its arrival sequence number), its shadow time in its ``J_RES``. The waiting jobs are
    ordered only when a new head is chosen: in FCFS order the oldest (O(K)); in another static order (sjf, saf, f1)
    the first of the waiting list kept in that order between events (``backfilling.kept_first``: each arrival
    inserted at its place, O(Q); the jobs started here taken out of the list before returning); WFP3 and UNICEP,
    whose keys grow with the waiting time, from a heap of every waiting job built then (O(Q)) and popped for each
    head started in this call."""
    started = _narrow_starts(st, pr, b, order, now)
    if started > 0 and order != O_FCFS and order <= O_F1:
        kept_drop_started(st, b, started)


@njit
def _narrow_starts(st, pr, b, order, now):
    """``_narrow`` but for the kept list's upkeep; returns the number of jobs it started."""
    K = pr.ints[P_K]
    free = pr.ints[P_SERVERS] - st.sys_i[b, S_BUSY]
    started = 0
    base = 0
    q = -1  # the heap, once built
    while True:
        head = st.scratch[b, 2 * K] - 1
        if head >= 0 and (st.job_i[b, head, J_SEQ] != st.scratch[b, 2 * K + 1] or st.job_i[b, head, J_HPOS] >= 0):
            head = -1  # it started or left (a reset system)
        fresh = head < 0
        if fresh:
            if order == O_FCFS:
                head = oldest_waiting(st, pr, b)
            elif order <= O_F1:  # a static order: the waiting list kept between events
                head = kept_first(st, pr, b, order)
            else:
                if q < 0:
                    base, q = heap_waiting(st, pr, b, order, now)
                while q > 0 and st.job_i[b, st.prof_f[b, base], J_HPOS] >= 0:
                    pop_first(st, b, base, q)  # started in this call
                    q -= 1
                head = st.prof_f[b, base] if q > 0 else -1
            if head < 0:
                st.scratch[b, 2 * K] = 0
                return started
        m = pr.need[st.job_i[b, head, J_CLS]]
        if m <= free:
            start_job(st, pr, b, head)
            started += 1
            free -= m
            st.scratch[b, 2 * K] = 0
            continue
        if fresh:
            st.scratch[b, 2 * K] = head + 1
            st.scratch[b, 2 * K + 1] = st.job_i[b, head, J_SEQ]
            shadow, _ = reservation(st, pr, b, m, free, now)
            st.job_f[b, head, J_RES] = shadow
        break
    if free == 0:
        return started
    return started + _backfill_before(st, pr, b, head, st.job_f[b, head, J_RES], free, now)


@njit
def _backfill_before(st, pr, b, head, shadow, free, now):
    """Start, in arrival order, the waiting jobs (but the head) that fit and end (by their estimates) strictly before
    ``shadow``; returns how many started. Only the jobs that could start, those that fit in the ``free`` servers now
    and end before the shadow time, are gathered (in the order buffer, with equal keys so that ``sort_jobs`` orders
    them by arrival, its tie rule): O(Q + F log F) for F of them, where a K-way merge of the classes would take O(K)
    per waiting job visited. Free servers only decrease here, so a job that no longer fits once others have started
    would not fit later either: it is passed over."""
    base = st.prof_f.shape[1] - st.job_i.shape[1]
    n = 0
    for c in range(pr.ints[P_K]):
        if pr.need[c] <= free:
            j = st.cls_i[b, c, C_BOUND]
            while j >= 0:
                if j != head and now + estimated_remaining(st, b, j, now) < shadow:
                    st.job_f[b, j, J_KEY] = 0.0
                    st.prof_f[b, base + n] = j
                    n += 1
                j = st.job_i[b, j, J_NEXT]
    sort_jobs(st, b, base, n)
    started = 0
    for k in range(n):
        if free == 0:
            break
        j = st.prof_f[b, base + k]
        m = pr.need[st.job_i[b, j, J_CLS]]
        if m <= free:
            start_job(st, pr, b, j)
            started += 1
            free -= m
    return started


# ---------------------------------------------------------------- compiled kernel
@njit
def schedule(st, pr, b):
    """Order the waiting jobs, start them in that order while they fit, then apply the backfilling rule.

    Cost per event, Q waiting and R running jobs: O(Q) to key and heap the waiting jobs, O(log Q) per job started in
    order; ``easy`` adds O(R log R) for the head's reservation and O(F log F) to order the F jobs that fit now;
    ``conservative`` O(Q log Q) to order every waiting job and O((R + Q)·P) for the profile (P <= 1 + R + 4Q
    breakpoints). In a static order ``conservative`` keeps its profile and waiting list between events
    (``backfilling.conservative``). ``easy-narrow`` orders nothing at an event that keeps its head; a new head is
    the oldest job (FCFS), the first of the waiting list kept in a static order, or the top of a heap of every
    waiting job (WFP3, UNICEP: O(Q)); backfilling then costs O(Q + F log F) for the F jobs that could start
    (``_backfill_before``); each arrival costs O(Q) for its place in a kept list.
    """
    order = pr.ints[P_ARG]
    rule = pr.ints[P_ARG + 1]
    now = st.sys_f[b, T_NOW]
    if rule == B_CONSERVATIVE and order <= O_F1:  # a static order: the profile kept between events
        conservative(st, pr, b, order)
        return
    if rule == B_NARROW:
        _narrow(st, pr, b, order, now)
        return
    base, q = heap_waiting(st, pr, b, order, now)
    if q == 0:
        return
    if rule == B_CONSERVATIVE:
        _conservative(st, pr, b, base, q, now)
        return
    q, free = _start_in_order(st, pr, b, base, q, pr.ints[P_SERVERS] - st.sys_i[b, S_BUSY])
    if q > 0 and rule == B_EASY and free > 0:
        _easy(st, pr, b, base, q, free, now)


@njit
def on_arrival(st, pr, b, j):
    """Conservative backfilling in a static order, and ``easy-narrow`` in a static order but FCFS (whose head is the
    oldest job), keep their waiting list: the new job enters at its place."""
    order = pr.ints[P_ARG]
    rule = pr.ints[P_ARG + 1]
    if order <= O_F1 and (rule == B_CONSERVATIVE or (rule == B_NARROW and order != O_FCFS)):
        kept_on_arrival(st, pr, b, j, order)


@njit
def on_departure(st, pr, b, c):
    """Conservative backfilling in a static order keeps its profile: an early completion frees servers in it."""
    if pr.ints[P_ARG + 1] == B_CONSERVATIVE and pr.ints[P_ARG] <= O_F1:
        kept_on_departure(st, pr, b, c)


# ---------------------------------------------------------------- agent form and declaration
class PriorityAgent(EstimatesNotObservedAgent):
    """``priority`` has no agent form (see ``EstimatesNotObservedAgent``)."""

    policy_name = "priority"


@dataclass(frozen=True, kw_only=True)
class _Priority(Policy):
    def uses_estimates(self) -> bool:
        """Every order but FCFS sorts by estimates, and every backfilling rule plans with them."""
        return self.value("order") != "fcfs" or self.value("backfill") != "none"

    def scratch_size(self, model: MSJModel) -> int:
        """The heap of running jobs by estimated end of the head's reservation: at most ``servers`` jobs run."""
        return int(model.servers)


PRIORITY = _Priority(
    name="priority",
    summary="HPC priority scheduling: an order (fcfs, sjf, saf, f1, wfp3, unicep) with none, easy, conservative or "
            "easy-narrow backfilling",
    preemptive=False,
    source="Carastan-Santos & de Camargo, SC'17 (F1); Tang, Lan, Desai & Buettner, IEEE Cluster 2009 "
           "(WFP3, UNICEP); Lifka, JSSPP 1995 and Mu'alem & Feitelson, IEEE TPDS 12(6), 2001, §2 (EASY, "
           "conservative); Zhang et al., RLScheduler, SC'20 (easy-narrow)",
    params=(Choice("order", "sjf", "the priority order: " + ", ".join(ORDERS), choices=ORDERS),
            Choice("backfill", "easy", "the backfilling rule: " + ", ".join(BACKFILLS), choices=BACKFILLS)),
    schedule=schedule,
    on_arrival=on_arrival,
    on_departure=on_departure,
    agent_class=PriorityAgent,
)
