"""The backfilling machinery of the HPC batch schedulers: the orders a waiting queue can be kept in, the head's
shadow time, the profile of free servers, conservative backfilling's kept profile with its compression, and the rules
that combine an order with a backfilling rule. The policies ``easy-backfilling``, ``conservative-backfilling`` and
``priority`` (``policies/msj/``) call it, and so does ``msjgym/JobScheduling-v0``'s decision path
(:mod:`msjgym.systems.msj.job_control`: ``priority`` with an agent choosing the head), which is why it lives with the
system rather than with one policy.

* **Orders** (``priority``'s ``order``; :func:`priority_key`): FCFS, SJF, SAF and F1 give each job a key fixed at
  its arrival (*static* orders, :data:`STATIC_ORDERS`); WFP3 and UNICEP grow with the waiting time.
* **Shadow time** (:func:`reservation`): Mu'alem & Feitelson, IEEE TPDS 12(6), 2001, §2 (EASY's reservation for the
  head: the earliest estimated completion by which enough servers are free, and the extra servers then).
* **Profile** (:func:`build_profile`, :func:`add_free`, :func:`earliest_fit`): the servers free from now on, as
  breakpoint arrays.
* **Conservative backfilling with a kept profile** (:func:`conservative`, :func:`kept_on_arrival`,
  :func:`kept_on_departure`): every waiting job holds a reservation; after every event the schedule is compressed in
  the waiting list's order (arrival order for ``conservative-backfilling``, any static order for ``priority``), the
  profile kept between events and only the jobs that can move placed again
  (``docs/modelling-choices.md#backfilling-kept-profile``). A new job enters the list at its place in the order.
* **The kept waiting list alone** (:func:`kept_first`, :func:`kept_drop_started`): the same list, kept in a static
  order without a profile, gives ``priority``'s ``easy-narrow`` its next head without ordering the queue again.
* **The rules in an order** (``priority``'s ``backfill``, :data:`BACKFILLS`): the waiting jobs in a heap by priority
  (:func:`heap_waiting`), started in order while they fit (:func:`start_in_order`), then EASY (:func:`easy`),
  conservative backfilling on a profile rebuilt at every event (:func:`conservative_sorted`, for the orders whose
  keys change with time) or RLScheduler's narrower rule (:func:`narrow`).
"""
from __future__ import annotations

import math

from msjgym.core.jit import njit
from msjgym.systems.msj.contract import OwnState, Sizes
from msjgym.systems.msj.state import (
    C_BOUND, INF, J_ARR, J_CLS, J_EST, J_HPOS, J_NEXT, J_REM, J_SEQ, J_SIZE, J_START, NJF, NJI, P_K, P_SERVERS, P_T0,
    S_BUSY, S_HEAPN, T_NOW, departed_job, estimated_end, estimated_remaining, next_in_arrival_order, oldest_waiting,
    start_job)


ORDERS = ("fcfs", "sjf", "saf", "f1", "wfp3", "unicep")
O_FCFS, O_SJF, O_SAF, O_F1, O_WFP3, O_UNICEP = range(6)
BACKFILLS = ("none", "easy", "conservative", "easy-narrow")
B_NONE, B_EASY, B_CONSERVATIVE, B_NARROW = range(4)
STATIC_ORDERS = (O_FCFS, O_SJF, O_SAF, O_F1)
"""The orders whose keys are fixed at a job's arrival (the others grow with the waiting time): a queue kept in such
an order stays sorted between events."""


# ---------------------------------------------------------------- the state the machinery keeps
# The policies that use it declare it (``state=STATE``, ``CONSERVATIVE_STATE`` or ``EASY_STATE``; the record's own
# areas, msjgym.systems.msj.contract):
# own_i[b]: [0, 8) the header: _VALID (the capacity the kept waiting list and profile were built for; another value,
#   0 in a new state, or a grown one: rebuild them from the jobs), _FIRST and _LAST (the kept waiting list's ends),
#   _NP (the kept profile's breakpoints), _HEAD and _HEAD_SEQ (``narrow``'s head: its slot + 1, 0: none; its arrival
#   sequence number); from _ARRAYS, the profile's free servers; the last ``capacity`` entries of the first
#   ``profile_size`` an order buffer (``heap_waiting``); then the heap of the running jobs by estimated end
#   (``heap_running``: the last ``servers`` entries, EASY_STATE's only ones).
# own_f[b]: [0, 4) the hulls of the times that gained free servers (_CARRY, _SINCE); from _ARRAYS the profile's
#   breakpoint times, then (``_maxima_at``) its prefix maxima during a compression.
# Per job: job_i[b, j, J_LINK] the next job of the kept waiting list (-1: the last); job_f[b, j, J_RES] its
# reservation (the time it is planned to start; inf until reserved, or ``narrow``'s head's shadow time); job_f[b, j,
# J_KEY] its sort key (``heap_waiting``), or its reservation's end (the kept profile).
J_LINK = NJI
J_RES = NJF
J_KEY = NJF + 1


def profile_size(servers: int, capacity: int) -> int:
    """Breakpoints a profile of future free servers may need: one per running job's end (at most ``servers``
    jobs run), two per waiting job's reservation, twice over (a job is placed again before its old breakpoints are
    dropped), and the first and last; then ``capacity`` more, whose ``own_i`` entries are an order buffer (the
    waiting jobs sorted by :func:`heap_waiting`). At least 8·capacity + 16: conservative backfilling keeps its profile
    between events from entry 8 (at most 4·capacity + 3 breakpoints) and, in ``own_f``, the profile's prefix maxima
    after it."""
    return max(2 * servers + 5 * capacity + 4, 8 * capacity + 16)


def _profile_entries(sizes: Sizes) -> int:
    return profile_size(sizes.servers, sizes.capacity)


def _all_ints(sizes: Sizes) -> int:
    return profile_size(sizes.servers, sizes.capacity) + sizes.servers


def _heap_ints(sizes: Sizes) -> int:
    return sizes.servers


STATE = OwnState(ints=_all_ints, floats=_profile_entries, job_ints=1, job_floats=2)
"""All of it: ``priority`` and ``msjgym/JobScheduling-v0``'s decision path."""
CONSERVATIVE_STATE = OwnState(ints=_profile_entries, floats=_profile_entries, job_ints=1, job_floats=2)
"""The kept waiting list and profile (no heap of running jobs): ``conservative-backfilling``."""
EASY_STATE = OwnState(ints=_heap_ints)
"""The heap of the running jobs only (the head's reservation, :func:`reservation`): ``easy-backfilling``."""


# ---------------------------------------------------------------- the orders
@njit
def priority_key(st, pr, b, j, order, now):
    """Job j's sort key under ``order`` at time ``now``: the smaller, the higher its priority (ties: arrival order)."""
    if order == O_FCFS:
        return float(st.job_i[b, j, J_SEQ])
    r = st.job_f[b, j, J_EST]
    n = float(pr.need[st.job_i[b, j, J_CLS]])
    if order == O_SJF:
        return r
    if order == O_SAF:
        return r * n
    s = st.job_f[b, j, J_ARR]
    if order == O_F1:  # the submit time in the trace's own clock (docs/modelling-choices.md#f1-time-origin)
        return math.log10(max(r, 1.0)) * n + 870.0 * math.log10(max(s + pr.floats[P_T0], 1.0))
    w = now - s
    if order == O_WFP3:
        x = w / r
        return -(x * x * x) * n
    return -(w + 1e-15) / (math.log2(n + 1e-15) * r)  # O_UNICEP



# ---------------------------------------------------------------- the head's reservation
@njit(inline="always")
def _before(st, b, i, j, now):
    return estimated_end(st, b, i, now) < estimated_end(st, b, j, now)


BY_END, BY_PRIORITY, BY_PRIORITY_LAST = 0, 1, 2
"""The heaps of :func:`sift_down`: the running jobs by estimated end (earliest on top); the waiting jobs by
priority (highest on top: :func:`heap_waiting`), or lowest on top (a max-heap, for the in-place sort of
:func:`sort_jobs`)."""


@njit(inline="always")
def _above(st, b, i, j, now, heap):
    """Whether job i goes above job j in a heap of kind ``heap`` (:data:`BY_END`, ...); ties: j stays above in the
    first two kinds, i goes above in the third."""
    if heap == BY_END:
        return _before(st, b, i, j, now)
    return _less(st, b, i, j) == (heap == BY_PRIORITY)


@njit(inline="always")
def sift_down(st, b, base, n, pos, now, heap):
    """Sift-down from ``pos`` in the binary heap ``own_i[b, base:base + n]`` of kind ``heap`` (:func:`_above`); the
    one sift-down of every heap here (``now``: the time estimated ends are read at, for :data:`BY_END`)."""
    buf = st.own_i
    while True:
        child = 2 * pos + 1
        if child >= n:
            return
        if child + 1 < n and _above(st, b, buf[b, base + child + 1], buf[b, base + child], now, heap):
            child += 1
        if not _above(st, b, buf[b, base + child], buf[b, base + pos], now, heap):
            return
        tmp = buf[b, base + pos]
        buf[b, base + pos] = buf[b, base + child]
        buf[b, base + child] = tmp
        pos = child


@njit(inline="always")
def heap_running(st, pr, b, now):
    """The running jobs (at most ``servers``) in a binary heap by estimated end in the last ``servers`` entries of
    ``own_i[b]``; returns (where it starts, its size)."""
    base = st.own_i.shape[1] - pr.ints[P_SERVERS]
    sc = st.own_i
    n = st.sys_i[b, S_HEAPN]
    for i in range(n):
        sc[b, base + i] = st.heap[b, i]
    for pos in range(n // 2 - 1, -1, -1):
        sift_down(st, b, base, n, pos, now, BY_END)
    return base, n


@njit(inline="always")
def pop_earliest_end(st, pr, b, base, n, now):
    """Pop every job of the heap of :func:`heap_running` whose estimated end is the earliest (equal ends free their
    servers together): (that end, the servers they free, the jobs left in the heap)."""
    sc = st.own_i
    t = estimated_end(st, b, sc[b, base], now)
    freed = 0
    while n > 0 and estimated_end(st, b, sc[b, base], now) == t:
        freed += pr.need[st.job_i[b, sc[b, base], J_CLS]]
        n -= 1
        sc[b, base] = sc[b, base + n]
        sift_down(st, b, base, n, 0, now, BY_END)
    return t, freed, n


@njit(inline="always")
def easy_backfill(st, pr, b, j, m, free, extra, shadow, now):
    """EASY's rule for waiting job j (need m, fitting in the ``free`` servers) behind a head reserved at ``shadow``
    with ``extra`` servers then: start it if it ends (by its estimate) by the shadow time, or if it fits in the
    extra servers (it then uses them); returns (free, extra) after."""
    if now + estimated_remaining(st, b, j, now) <= shadow:
        start_job(st, pr, b, j)
        return free - m, extra
    if m <= extra:
        start_job(st, pr, b, j)
        return free - m, extra - m
    return free, extra


@njit
def reservation(st, pr, b, need, free, now):
    """(shadow time, extra servers) of a job of ``need`` servers that does not fit in the ``free`` servers now: the
    earliest estimated completion time of running jobs by which ``need`` servers are free (jobs with equal estimated
    ends free their servers together), and the servers free then beyond ``need``.

    The running jobs are popped in order of estimated end from :func:`heap_running`: O(R + k log R) for the k jobs
    popped.
    """
    base, n = heap_running(st, pr, b, now)
    avail = free
    while n > 0:
        t, freed, n = pop_earliest_end(st, pr, b, base, n, now)
        avail += freed
        if avail >= need:
            return t, avail - need
    return INF, 0  # not reached: once every running job has ended, all servers are free


# ---------------------------------------------------------------- the profile of free servers, as arrays
# Breakpoints own_f[b, o] = now < own_f[b, o + 1] < ... < own_f[b, o + P - 1]; own_i[b, o + k] servers are free
# on [own_f[b, o + k], own_f[b, o + k + 1]) (the last segment extends to infinity). P is carried by the kernel, o
# is where the arrays start (0 for a profile rebuilt at every event; ``_ARRAYS`` for the kept one).
@njit(inline="always")
def _search(T, o, P, t):
    """The last breakpoint index k (from 0, of P) with T[o + k] < t; 0 if none (``T``: one system's times)."""
    lo = 0
    hi = P
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if T[o + mid] < t:
            lo = mid
        else:
            hi = mid
    return lo


@njit(inline="always")
def _breakpoint(st, b, P, t, o):
    """The index of a breakpoint at time t (>= now), inserted if missing; returns (index, new P)."""
    T = st.own_f[b]
    F = st.own_i[b]
    k = _search(T, o, P, t)  # the last breakpoint before t, or 0 (now)
    if k + 1 < P and T[o + k + 1] == t:
        return k + 1, P
    if T[o + k] == t:
        return k, P
    for i in range(o + P, o + k + 1, -1):
        T[i] = T[i - 1]
        F[i] = F[i - 1]
    T[o + k + 1] = t
    F[o + k + 1] = F[o + k]
    return k + 1, P + 1


@njit(inline="always")
def add_free(st, b, P, t0, t1, delta, o=0):
    """Add ``delta`` free servers over [t0, t1) (t0 < t1); returns the new P."""
    i0, P = _breakpoint(st, b, P, t0, o)
    i1, P = _breakpoint(st, b, P, t1, o)
    F = st.own_i[b]
    for k in range(o + i0, o + i1):
        F[k] += delta
    return P


@njit(inline="always")
def earliest_fit(st, b, P, m, d, o=0):
    """The earliest breakpoint time from which ``m`` servers are free for a duration ``d``."""
    T = st.own_f[b]
    F = st.own_i[b]
    k = o
    end = o + P
    while True:
        t = T[k]
        s = k
        while s < end and T[s] < t + d and F[s] >= m:
            s += 1
        if s == end or T[s] >= t + d:
            return t
        k = s + 1  # segment s has too few servers: no start before its end fits


@njit(inline="always")
def place_again(st, b, P, m, d, r, o=0):
    """Take a waiting job (need m, d estimated left, reserved at r; inf: not yet) out of the profile and place it at
    the earliest time it fits among the others' reservations (a step of the compression); returns (that time, the
    new P)."""
    if r < INF:
        P = add_free(st, b, P, r, r + d, m, o)
    new = earliest_fit(st, b, P, m, d, o)
    P = add_free(st, b, P, new, new + d, -m, o)
    return new, P


# ---------------------------------------------------------------- the state kept between events
# own_i[b, 0:4]: _VALID (the capacity they were built for; else rebuild from the jobs), the waiting list in the
# order (first and last job; each job's next in J_LINK, -1 last), _NP the breakpoints of the profile kept as arrays
# at _ARRAYS; own_f[b, 0:4]: the hulls [lo, hi) of the times at which free servers increased during the last
# compression (_CARRY) and since it, by early completions (_SINCE). The profile's prefix maxima (during a
# compression) in own_f[b] after the arrays' room. Room: every breakpoint but now is a planned start or end after now
# (at most 2·capacity once equal neighbours are merged), and a compression adds at most 2 per waiting job:
# ``profile_size`` leaves more than 2 · (4·capacity + 4) + 8.
_VALID, _FIRST, _LAST, _NP, _HEAD, _HEAD_SEQ = 0, 1, 2, 3, 4, 5
_CARRY_LO, _CARRY_HI, _SINCE_LO, _SINCE_HI = 0, 1, 2, 3
_ARRAYS = 8


@njit(inline="always")
def _maxima_at(st):
    """Where the prefix maxima start in ``own_f[b]``."""
    return _ARRAYS + 4 * st.job_i.shape[1] + 4


@njit(inline="always")
def _widen(st, b, k, lo, hi):
    """Add [lo, hi) to the hull at own_f[b, k:k + 2] (nothing if empty)."""
    if lo < hi:
        if lo < st.own_f[b, k]:
            st.own_f[b, k] = lo
        if hi > st.own_f[b, k + 1]:
            st.own_f[b, k + 1] = hi


@njit(inline="always")
def _plan(st, b, j, r, d):
    """Record job j's reservation [r, r + d); returns its end."""
    st.job_f[b, j, J_RES] = r
    st.job_f[b, j, J_KEY] = r + d
    return r + d


@njit
def _advance(st, b, now):
    """The kept profile from now on: the breakpoints before now dropped (the segment holding now starts now) and
    equal neighbours merged, in one pass; returns P."""
    T = st.own_f[b]
    F = st.own_i[b]
    o = _ARRAYS
    P = F[_NP]
    k = _search(T, o, P, now)
    if k + 1 < P and T[o + k + 1] == now:
        k += 1
    w = o
    T[w] = now
    F[w] = F[o + k]
    for i in range(o + k + 1, o + P):
        if F[i] != F[w]:
            w += 1
            T[w] = T[i]
            F[w] = F[i]
    return w + 1 - o


@njit(inline="always")
def _after(st, pr, b, j, key, k, order):
    """Whether waiting job j (its key ``key`` in the static ``order``) comes after waiting job k (ties: the older
    first)."""
    kk = priority_key(st, pr, b, k, order, 0.0)
    return key > kk or (key == kk and st.job_i[b, j, J_SEQ] > st.job_i[b, k, J_SEQ])


@njit
def _insert(st, pr, b, j, order):
    """Put job j into the waiting list at its place in ``order``: appended in FCFS order (the newest job), else
    after every job that comes before it (O(Q))."""
    st.job_i[b, j, J_LINK] = -1
    last = st.own_i[b, _LAST]
    if last < 0:
        st.own_i[b, _FIRST] = j
        st.own_i[b, _LAST] = j
        return
    key = priority_key(st, pr, b, j, order, 0.0)
    if order == O_FCFS or _after(st, pr, b, j, key, last, order):
        st.job_i[b, last, J_LINK] = j
        st.own_i[b, _LAST] = j
        return
    prev = -1
    k = st.own_i[b, _FIRST]
    while k >= 0 and _after(st, pr, b, j, key, k, order):
        prev = k
        k = st.job_i[b, k, J_LINK]
    st.job_i[b, j, J_LINK] = k
    if prev < 0:
        st.own_i[b, _FIRST] = j
    else:
        st.job_i[b, prev, J_LINK] = j


@njit
def _rebuild(st, pr, b, order):
    """Build the waiting list from the jobs (a new or grown state), in ``order``; the profile is then built by a full
    compression."""
    K = pr.ints[P_K]
    for c in range(K):
        st.scratch[b, K + c] = st.cls_i[b, c, C_BOUND]
    st.own_i[b, _FIRST] = -1
    st.own_i[b, _LAST] = -1
    while True:
        c = next_in_arrival_order(st, pr, b, pr.ints[P_SERVERS])
        if c < 0:
            break
        j = st.scratch[b, K + c]
        st.scratch[b, K + c] = st.job_i[b, j, J_NEXT]
        _insert(st, pr, b, j, order)
    for k in range(4):
        st.own_f[b, k] = INF if k % 2 == 0 else -INF
    st.own_i[b, _VALID] = st.job_i.shape[1]


@njit
def kept_on_arrival(st, pr, b, j, order):
    """Put the new job into the waiting list at its place in ``order`` (it has no reservation yet)."""
    if st.own_i[b, _VALID] != st.job_i.shape[1]:
        return
    _insert(st, pr, b, j, order)


@njit
def kept_on_departure(st, pr, b, c):
    """If the job that left ended before its estimated end, the servers it would have held until then are free in
    the kept profile: an increase of free servers since the last compression."""
    if st.own_i[b, _VALID] != st.job_i.shape[1]:
        return
    j = departed_job(st, b)
    now = st.sys_f[b, T_NOW]
    end = st.job_f[b, j, J_START] + (st.job_f[b, j, J_EST] - (st.job_f[b, j, J_SIZE] - st.job_f[b, j, J_REM]))
    if end > now:
        P = _advance(st, b, now)
        st.own_i[b, _NP] = add_free(st, b, P, now, end, pr.need[c], _ARRAYS)
        _widen(st, b, _SINCE_LO, now, end)


@njit(inline="always")
def _unlink(st, b, prev, nxt):
    """Take the job between ``prev`` and ``nxt`` (-1: none) out of the waiting list (in the order, linked through
    ``J_LINK``; its ends in ``own_i[b, _FIRST]`` and ``own_i[b, _LAST]``)."""
    if prev < 0:
        st.own_i[b, _FIRST] = nxt
    else:
        st.job_i[b, prev, J_LINK] = nxt
    if nxt < 0:
        st.own_i[b, _LAST] = prev


@njit(inline="always")
def _start_if_due(st, pr, b, j, r, now, m, free, prev, nxt):
    """In a walk of the kept waiting list (``prev`` the job before j, ``nxt`` the one after): start job j (need m) if
    its reservation r is now and it fits in the ``free`` servers, taking it out of the list; returns (the free
    servers, the job before the next one)."""
    if r == now and m <= free:
        start_job(st, pr, b, j)
        _unlink(st, b, prev, nxt)
        return free - m, prev
    return free, j


# ---------------------------------------------------------------- the kept waiting list alone (easy-narrow)
@njit
def kept_first(st, pr, b, order):
    """The first job of the waiting list kept in the static ``order`` that has not started, -1 if none (the list is
    built from the jobs first in a new or grown state). A job started since the last :func:`kept_drop_started` is
    still listed and skipped here. For a rule that needs only the highest-priority waiting job (``priority``'s
    ``easy-narrow``): the list is kept by :func:`kept_on_arrival` as for conservative backfilling, without a
    profile."""
    if st.own_i[b, _VALID] != st.job_i.shape[1]:
        _rebuild(st, pr, b, order)
    j = st.own_i[b, _FIRST]
    while j >= 0 and st.job_i[b, j, J_HPOS] >= 0:
        j = st.job_i[b, j, J_LINK]
    return j


@njit
def kept_drop_started(st, b, n):
    """Take the ``n`` jobs started since the last call out of the kept waiting list, walking it from its first job
    until all n are found (O(position of the last one); a job started by a rule in priority order is near the
    front). Call it in the same scheduling call as the starts, before any job can leave and free its slot."""
    prev = -1
    j = st.own_i[b, _FIRST]
    while n > 0 and j >= 0:
        nxt = st.job_i[b, j, J_LINK]
        if st.job_i[b, j, J_HPOS] >= 0:
            _unlink(st, b, prev, nxt)
            n -= 1
        else:
            prev = j
        j = nxt


# ---------------------------------------------------------------- the three ways to compress
@njit
def _compress_full(st, pr, b, now):
    """The compression as defined, on the profile rebuilt from the jobs (``build_profile``), each job taken out and
    placed at its earliest place: O((R + Q)·P). Used when the kept profile cannot be trusted (a new or grown state)
    or when a reservation has passed (a job ran past its estimate: free counts may then be below 0)."""
    n = pr.ints[P_SERVERS]
    o = _ARRAYS
    P = build_profile(st, pr, b, now, o)
    free = n - st.sys_i[b, S_BUSY]
    prev = -1
    j = st.own_i[b, _FIRST]
    while j >= 0:
        nxt = st.job_i[b, j, J_LINK]
        m = pr.need[st.job_i[b, j, J_CLS]]
        d = estimated_remaining(st, b, j, now)
        r = st.job_f[b, j, J_RES]
        if d > 0.0:
            new, P = place_again(st, b, P, m, d, r, o)
            if new != r:
                old_end = st.job_f[b, j, J_KEY]
                end = _plan(st, b, j, new, d)
                if r < INF:
                    cut = end if end > r else r
                    _widen(st, b, _CARRY_LO, cut if new < r else r, old_end)
        else:
            new = now
            st.job_f[b, j, J_RES] = now
        free, prev = _start_if_due(st, pr, b, j, new, now, m, free, prev, nxt)
        j = nxt
    st.own_i[b, _NP] = P


@njit(inline="always")
def _prefix_max(st, b, P, q, k0=0):
    """own_f[b, q + k] = the most servers free at any of the breakpoints 0..k, for k from k0 (those before are
    kept)."""
    F = st.own_i[b]
    M = st.own_f[b]
    hi = M[q + k0 - 1] if k0 > 0 else -1
    for k in range(k0, P):
        v = F[_ARRAYS + k]
        if v > hi:
            hi = v
        M[q + k] = hi


@njit(inline="always")
def _target(st, b, P, q, m, d, r):
    """Where the waiting job reserved at r (need m, d estimated left) moves in the compression: the earliest
    breakpoint t < r with at least m servers free over [t, min(t + d, r)), or r if none.

    This is the earliest place among the others' without taking the job out of the profile: on [r, t + d) its own
    servers are free (every free count of a profile whose reservations all fit is >= 0). A job is ruled out by one
    binary search when no breakpoint before r has m servers free (the prefix maxima at ``q``), else the runs of
    breakpoints with m free are walked from the first one."""
    T = st.own_f[b]
    F = st.own_i[b]
    o = _ARRAYS
    lo = 0
    hi = P
    while lo < hi:  # the first breakpoint with m free (prefix maxima are nondecreasing)
        mid = (lo + hi) >> 1
        if T[q + mid] >= m:
            hi = mid
        else:
            lo = mid + 1
    if lo == P or T[o + lo] >= r:
        return r
    k = o + lo  # m free here: a run of at least m free starts
    end = o + P
    start = T[k]
    lim = min(start + d, r)
    k += 1
    while k < end:
        if T[k] >= lim:  # the run lasted until the window's end
            return start
        if F[k] < m:  # too few: the next run starts at the next breakpoint with m free
            k += 1
            while k < end and F[k] < m:
                k += 1
            if k == end:
                return r
            start = T[k]
            if start >= r:
                return r
            lim = min(start + d, r)
        k += 1
    return start  # the last segment lasts for ever


@njit
def _compress_kept(st, pr, b, now, moves):
    """The compression on the kept profile (O(P)), when every reservation is still ahead: a new job is placed at the
    earliest place among all the others' and the jobs reserved now start. ``moves``: free servers increased since
    the last compression, so each waiting job in the list's order is also tested where it stands (``_target``) and
    a job that moves is placed again; the hull of the times that gained servers follows the moves. Without
    ``moves`` every reservation is already the earliest the compression would give."""
    n = pr.ints[P_SERVERS]
    o = _ARRAYS
    q = _maxima_at(st)
    P = _advance(st, b, now)
    if moves:
        _prefix_max(st, b, P, q)
    free = n - st.sys_i[b, S_BUSY]
    prev = -1
    j = st.own_i[b, _FIRST]
    while j >= 0:
        nxt = st.job_i[b, j, J_LINK]
        m = pr.need[st.job_i[b, j, J_CLS]]
        d = estimated_remaining(st, b, j, now)
        r = st.job_f[b, j, J_RES]
        if d <= 0.0:
            st.job_f[b, j, J_RES] = now
            r = now
        elif r == INF:  # a new job: the earliest place among all the others'
            r, P = place_again(st, b, P, m, d, r, o)
            if moves:
                _prefix_max(st, b, P, q, _search(st.own_f[b], o, P, r))
            _plan(st, b, j, r, d)
        elif moves and r > now:
            t = _target(st, b, P, q, m, d, r)
            if t < r:
                old_end = st.job_f[b, j, J_KEY]
                P = add_free(st, b, P, r, old_end, m, o)
                P = add_free(st, b, P, t, t + d, -m, o)
                _prefix_max(st, b, P, q, _search(st.own_f[b], o, P, t))
                end = _plan(st, b, j, t, d)
                _widen(st, b, _CARRY_LO, end if end > r else r, old_end)
                r = t
        free, prev = _start_if_due(st, pr, b, j, r, now, m, free, prev, nxt)
        j = nxt
    st.own_i[b, _NP] = P


@njit
def conservative(st, pr, b, order):
    """Compress the schedule in ``order`` (the waiting list's; a static order) and start the jobs whose reservation
    is now
    (``docs/modelling-choices.md#backfilling-conservative-compression``; how: ``#backfilling-kept-profile``).

    The profile is kept between events as arrays (O(P) to update; every event walks the Q waiting jobs anyway). If
    no time from now on gained free servers since the last compression (no early completion, no job moved to an
    earlier place then) and no reservation has passed (a job ran past its estimate), every reservation is already
    the earliest the compression would give: only a new job is placed and the jobs reserved now start. If free
    servers increased, only the jobs that can move are placed again (``_compress_kept``). If a reservation has
    passed, or the state is new, the compression runs as defined on a profile rebuilt from the jobs
    (``_compress_full``).
    """
    now = st.sys_f[b, T_NOW]
    full = False
    if st.own_i[b, _VALID] != st.job_i.shape[1]:
        _rebuild(st, pr, b, order)
        full = True
    j = st.own_i[b, _FIRST]
    while j >= 0 and not full:  # a reservation now past (a job ran past its estimate)
        if st.job_f[b, j, J_RES] < now:
            full = True
        j = st.job_i[b, j, J_LINK]
    hi = max(st.own_f[b, _CARRY_HI], st.own_f[b, _SINCE_HI])
    for k in range(4):
        st.own_f[b, k] = INF if k % 2 == 0 else -INF
    if full:
        _compress_full(st, pr, b, now)
        return
    if hi > now:
        _compress_kept(st, pr, b, now, True)
        return
    _compress_kept(st, pr, b, now, False)


@njit
def build_profile(st, pr, b, now, o=0):
    """The profile of free servers from now on, built from scratch in the arrays from ``o``: the running jobs until
    their estimated ends and the waiting jobs at their reservations (a reservation already past is moved to now);
    returns P, its number of breakpoints."""
    K = pr.ints[P_K]
    st.own_f[b, o] = now
    st.own_i[b, o] = pr.ints[P_SERVERS]
    P = 1
    for i in range(st.sys_i[b, S_HEAPN]):
        j = st.heap[b, i]
        end = estimated_end(st, b, j, now)
        if end > now:
            P = add_free(st, b, P, now, end, -pr.need[st.job_i[b, j, J_CLS]], o)
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
                    P = add_free(st, b, P, r, r + d, -pr.need[c], o)
            j = st.job_i[b, j, J_NEXT]
    return P


# ---------------------------------------------------------------- the rules in an order: the order buffer
@njit(inline="always")
def _less(st, b, i, j):
    ki = st.job_f[b, i, J_KEY]
    kj = st.job_f[b, j, J_KEY]
    return ki < kj or (ki == kj and st.job_i[b, i, J_SEQ] < st.job_i[b, j, J_SEQ])


@njit(inline="always")
def order_buffer(st, pr):
    """Where the order buffer starts in ``own_i[b]``: the last ``capacity`` entries before the running jobs' heap."""
    return st.own_i.shape[1] - pr.ints[P_SERVERS] - st.job_i.shape[1]


@njit(inline="always")
def narrow_head(st, b):
    """``narrow``'s head (-1: none, or it started or left)."""
    h = st.own_i[b, _HEAD] - 1
    if h >= 0 and (st.job_i[b, h, J_SEQ] != st.own_i[b, _HEAD_SEQ] or st.job_i[b, h, J_HPOS] >= 0):
        return -1
    return h


@njit(inline="always")
def set_narrow_head(st, b, j):
    """Make waiting job j ``narrow``'s head (-1: none)."""
    st.own_i[b, _HEAD] = j + 1
    if j >= 0:
        st.own_i[b, _HEAD_SEQ] = st.job_i[b, j, J_SEQ]


@njit
def heap_waiting(st, pr, b, order, now):
    """Put the waiting jobs of system b into a min-heap by priority (highest on top) in the order buffer (the last
    ``capacity`` entries of the first ``profile_size`` of ``own_i[b]``, :func:`order_buffer`); returns (its offset,
    their number). Each job's key is left in ``job_f[b, j, J_KEY]``. O(Q) for Q waiting jobs."""
    base = order_buffer(st, pr)
    q = 0
    for c in range(pr.ints[P_K]):
        j = st.cls_i[b, c, C_BOUND]
        while j >= 0:
            st.job_f[b, j, J_KEY] = priority_key(st, pr, b, j, order, now)
            st.own_i[b, base + q] = j
            q += 1
            j = st.job_i[b, j, J_NEXT]
    for pos in range(q // 2 - 1, -1, -1):
        sift_down(st, b, base, q, pos, 0.0, BY_PRIORITY)
    return base, q


@njit
def pop_first(st, b, base, q):
    """Remove the top of the min-heap ``own_i[b, base:base + q]``; returns it (the heap then has q - 1 jobs)."""
    top = st.own_i[b, base]
    st.own_i[b, base] = st.own_i[b, base + q - 1]
    sift_down(st, b, base, q - 1, 0, 0.0, BY_PRIORITY)
    return top


@njit
def sort_jobs(st, b, base, q):
    """Sort ``own_i[b, base:base + q]`` (job slots with their keys in ``J_KEY``) into priority order, in place
    (heapsort, O(q log q))."""
    for pos in range(q // 2 - 1, -1, -1):
        sift_down(st, b, base, q, pos, 0.0, BY_PRIORITY_LAST)
    for end in range(q - 1, 0, -1):
        tmp = st.own_i[b, base]
        st.own_i[b, base] = st.own_i[b, base + end]
        st.own_i[b, base + end] = tmp
        sift_down(st, b, base, end, 0, 0.0, BY_PRIORITY_LAST)


# ---------------------------------------------------------------- backfilling rules
@njit
def start_in_order(st, pr, b, base, q, free):
    """Start the jobs on top of the heap while they fit; returns (jobs left in the heap, free servers)."""
    while q > 0:
        j = st.own_i[b, base]
        m = pr.need[st.job_i[b, j, J_CLS]]
        if m > free:
            break
        pop_first(st, b, base, q)
        q -= 1
        start_job(st, pr, b, j)
        free -= m
    return q, free


@njit
def easy(st, pr, b, base, q, free, now):
    """EASY in priority order: the head (the top of the heap ``own_i[b, base:base + q]``) does not fit in the
    ``free`` servers. The jobs that fit now are the only candidates: they are sorted by priority, and each starts if
    it ends by the shadow time or fits in the extra servers."""
    head = st.own_i[b, base]
    n = 0
    for k in range(1, q):  # compact the candidates to the front (the head is kept in ``head``)
        j = st.own_i[b, base + k]
        if pr.need[st.job_i[b, j, J_CLS]] <= free:
            st.own_i[b, base + n] = j
            n += 1
    if n == 0:
        return
    sort_jobs(st, b, base, n)
    shadow, extra = reservation(st, pr, b, pr.need[st.job_i[b, head, J_CLS]], free, now)
    for k in range(n):
        if free == 0:
            return
        j = st.own_i[b, base + k]
        m = pr.need[st.job_i[b, j, J_CLS]]
        if m <= free:
            free, extra = easy_backfill(st, pr, b, j, m, free, extra, shadow, now)


@njit
def conservative_sorted(st, pr, b, base, q, now):
    """Conservative backfilling, the schedule compressed in priority order (``conservative_backfilling.schedule``
    with the sorted order buffer in place of arrival order)."""
    sort_jobs(st, b, base, q)
    free = pr.ints[P_SERVERS] - st.sys_i[b, S_BUSY]
    P = build_profile(st, pr, b, now)
    for k in range(q):
        j = st.own_i[b, base + k]
        m = pr.need[st.job_i[b, j, J_CLS]]
        d = estimated_remaining(st, b, j, now)
        r = st.job_f[b, j, J_RES]
        if d > 0.0:
            r, P = place_again(st, b, P, m, d, r, 0)
        else:
            r = now
        st.job_f[b, j, J_RES] = r
        if r == now and m <= free:
            start_job(st, pr, b, j)
            free -= m


@njit
def narrow(st, pr, b, order, now):
    """RLScheduler's rule (module docstring): a fixed head with its shadow time, backfilling in arrival order only
    jobs that end strictly before it. The head is remembered in ``own_i[b, _HEAD]`` (its slot + 1; 0: none) and
    ``own_i[b, _HEAD_SEQ]`` (its arrival sequence number; :func:`narrow_head`), its shadow time in its ``J_RES``. The waiting jobs are
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
    """``narrow`` but for the kept list's upkeep; returns the number of jobs it started."""
    free = pr.ints[P_SERVERS] - st.sys_i[b, S_BUSY]
    started = 0
    base = 0
    q = -1  # the heap, once built
    while True:
        head = narrow_head(st, b)  # -1 if it started or left (a reset system)
        fresh = head < 0
        if fresh:
            if order == O_FCFS:
                head = oldest_waiting(st, pr, b)
            elif order <= O_F1:  # a static order: the waiting list kept between events
                head = kept_first(st, pr, b, order)
            else:
                if q < 0:
                    base, q = heap_waiting(st, pr, b, order, now)
                while q > 0 and st.job_i[b, st.own_i[b, base], J_HPOS] >= 0:
                    pop_first(st, b, base, q)  # started in this call
                    q -= 1
                head = st.own_i[b, base] if q > 0 else -1
            if head < 0:
                set_narrow_head(st, b, -1)
                return started
        m = pr.need[st.job_i[b, head, J_CLS]]
        if m <= free:
            start_job(st, pr, b, head)
            started += 1
            free -= m
            set_narrow_head(st, b, -1)
            continue
        if fresh:
            set_narrow_head(st, b, head)
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
    base = order_buffer(st, pr)
    n = 0
    for c in range(pr.ints[P_K]):
        if pr.need[c] <= free:
            j = st.cls_i[b, c, C_BOUND]
            while j >= 0:
                if j != head and now + estimated_remaining(st, b, j, now) < shadow:
                    st.job_f[b, j, J_KEY] = 0.0
                    st.own_i[b, base + n] = j
                    n += 1
                j = st.job_i[b, j, J_NEXT]
    sort_jobs(st, b, base, n)
    started = 0
    for k in range(n):
        if free == 0:
            break
        j = st.own_i[b, base + k]
        m = pr.need[st.job_i[b, j, J_CLS]]
        if m <= free:
            start_job(st, pr, b, j)
            started += 1
            free -= m
    return started
