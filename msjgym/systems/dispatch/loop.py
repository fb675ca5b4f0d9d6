"""The compiled event loop of the large-scale dispatch system: one replication per call.

Events and their cost (N servers; none scans the servers):

* arrival (Poisson, rate λN; water filling: batches of M at rate λN/M): the policy picks a server (O(1) or O(d);
  water filling O(K + M) per batch); the job joins its FIFO queue; an idle server starts it (heap insert, O(log N));
* completion (the earliest completion time, top of a 4-ary heap, O(log N)): the next waiting job starts;
  pull: with probability δ₁ the server sends its queue length;
* probe (push, rate δN): a uniformly random server reports its queue length (e_i := q_i);
* idle tick (pull, rate δ₀ × idle servers): a uniformly random idle server reports 0;
* token (resource pooling, rate pN): a job leaves a uniformly random longest queue at once (a waiting job chosen by
  ``REMOVE_*``, or the job in service when the longest queue holds one job).

The exogenous events (arrival, probe, tick, token) are competing exponential clocks: one clock of the total rate
whose type is drawn at expiry. Completions come from the heap of completion times (any size law), or, for
exponential sizes, from one more competing clock at a uniformly random busy server (``S_CLOCKS``: no heap, no
size draws; selected by ``P_CLOCKS``). Under pull the total rate changes with the number of idle servers; the residual
time is then rescaled by old/new rate (exact, by memorylessness), so no draw is wasted.

Measurement window (the paper's protocol, HKV §8; docs/modelling-choices.md#lb-protocol): arrivals
``warmup .. jobs - 1`` are measured; time averages (the queue-length distribution, messages) cover the interval from the
first measured arrival to the arrival after the window; the run then continues (with arrivals) until every measured job
has left, so the per-job mean is not biased toward short jobs.
"""
from __future__ import annotations

import math

from numba import types

from msjgym.core import rng
from msjgym.core.jit import njit
from msjgym.core.plug import call_int, ref
from msjgym.core.sampling import sample
from msjgym.systems.dispatch.contract import (
    BATCH, F_SPEEDS, INFO_IDLE_QUEUE, INFO_POOLING, INFO_PULL, INFO_PUSH, INFO_QUEUE_ORDER, P_BATCH, P_INFO, P_K,
    P_LCAP, P_N, PARAMS)
from msjgym.systems.dispatch.state import (
    BAD_SERVER, DONE, F_SUMR, F_SUMR2, J_ARR, J_MEAS, J_NEXT, J_PREV, J_SIZE, NEED_JOBS, NEED_LEVELS, RUNNING, S_BAD,
    S_CLOCKS, S_EVENTS, S_HEAPN, S_MEAS, S_MSG, S_NARR, S_NDONE, S_NFREE, S_NIDLE, S_PHASE, S_QORDER, S_STATUS, T_EXO,
    T_NOW, T_RATE, T_WIN0, T_WIN1, V_E, V_HEAD, V_IDPOS, V_POS, V_Q, V_TAIL, W_CT, W_PEND, bucket_down,
    bucket_pick_max, bucket_reset, bucket_up, heap_pop, heap_push, heap_replace_top, heap_top, idle_add,
    STATE, idle_remove, job_alloc, job_free, job_unlink)

# params.ints (P_N .. P_LCAP, which the dispatchers read, are declared in msjgym.systems.dispatch.contract)
P_JOBS = 6  # arrivals in the run (measured: warmup .. jobs - 1)
P_WARMUP = 7
P_DKIND = 8  # job-size law kind (msjgym.core.sampling)
P_REMOVE = 9  # resource pooling: which waiting job a token removes
P_CLOCKS = 10  # 1: completions by competing clocks (exponential sizes only), 0: completion heap
P_SPEEDS = 11  # 1: per-server speeds (floats[F_SPEEDS + i]); 0: every server at F_SPEED (one value, hot in cache)
NPI = 12

# params.floats
F_LAM = 0  # arrival rate per server λ (jobs per unit time)
F_DELTA = 1  # push probe rate per server δ
F_DELTA0 = 2  # pull: update rate of an idle server δ₀
F_DELTA1 = 3  # pull: update probability at a completion δ₁
F_P = 4  # resource pooling: central server's share p of the capacity
F_SPEED = 5  # service rate of a server (1, or 1 - p under resource pooling; 1 with per-server speeds)
F_MU = 6  # completion rate of a busy server, speed / E[size] (clock mode: equal speeds only)
NPF = 7
# then floats[F_SPEEDS + i] (= NPF + i): server i's speed (F_SPEED for every server unless speeds are given); a job of
# size x takes x / speed time units there (heap mode; clock mode needs equal speeds)
assert F_SPEEDS == NPF

REMOVE_LAST = 0  # the last job in line (default)
REMOVE_NEXT = 1  # the first waiting job (next to start)
REMOVE_RANDOM = 2  # a uniformly random waiting job (O(queue length))

assert P_JOBS == P_LCAP + 1

RUN = types.int64(STATE, PARAMS, types.int64, types.int64, types.int64)
"""The signature the event loop :func:`run` is compiled for, once per machine (cached), whatever the dispatcher."""
RESET = types.none(STATE, PARAMS, types.int64)
"""The signature of :func:`reset`."""


@njit(inline="always")
def speed(pr, i):
    """Server i's speed (work per unit time)."""
    return pr.floats[F_SPEEDS + i] if pr.ints[P_SPEEDS] else pr.floats[F_SPEED]


# ---------------------------------------------------------------- statistics
@njit(inline="always")
def _touch(st, k, now):
    """Integrate the number of servers at level k up to now (only inside the window)."""
    if st.si[S_PHASE] == 1:
        st.area[k] += st.qcnt[k] * (now - st.last[k])
        st.last[k] = now


@njit(inline="always")
def _record(st, j, now):
    """Job j leaves now."""
    if st.jobi[j, J_MEAS]:
        r = now - st.jobf[j, J_ARR]
        st.sf[F_SUMR] += r
        st.sf[F_SUMR2] += r * r
        st.si[S_NDONE] += 1
        st.si[S_MEAS] -= 1


@njit(inline="always")
def _window(st, pr, idx, now):
    """Open the window at arrival ``warmup``, close it at arrival ``jobs``."""
    if idx == pr.ints[P_WARMUP]:
        st.si[S_PHASE] = 1
        st.sf[T_WIN0] = now
        for k in range(st.last.size):
            st.last[k] = now
            st.area[k] = 0.0
        st.si[S_MSG] = 0
    if idx == pr.ints[P_JOBS]:
        for k in range(st.last.size):
            _touch(st, k, now)
        st.si[S_PHASE] = 2
        st.sf[T_WIN1] = now


# ---------------------------------------------------------------- queue changes
@njit(inline="always")
def _level(st, i, k, up, now):
    """Server i's queue length goes from k to k + 1 (``up``) or k - 1."""
    k2 = k + 1 if up else k - 1
    _touch(st, k, now)
    _touch(st, k2, now)
    st.qcnt[k] -= 1
    st.qcnt[k2] += 1
    if st.si[S_QORDER]:
        if up:
            bucket_up(st.srv, V_Q, V_POS, st.qord, st.qstart, i)
        else:
            bucket_down(st.srv, V_Q, V_POS, st.qord, st.qstart, i)
    else:
        st.srv[i, V_Q] = k2


@njit(inline="always")
def _enqueue(st, pr, b, i, now, measured):
    """A new job joins server i's queue now."""
    k = st.srv[i, V_Q]
    j = job_alloc(st)
    if j < 0:
        st.si[S_STATUS] = NEED_JOBS
        return
    if k + 1 > pr.ints[P_LCAP]:
        st.si[S_STATUS] = NEED_LEVELS
        return
    clocks = st.si[S_CLOCKS]
    size = 0.0 if clocks else sample(pr.ints[P_DKIND], pr.ddata, 0, st.rng, b)
    st.jobf[j, J_ARR] = now
    st.jobf[j, J_SIZE] = size
    st.jobi[j, J_MEAS] = measured
    if measured:
        st.si[S_MEAS] += 1
    st.jobi[j, J_NEXT] = -1
    last = st.srv[i, V_TAIL]
    st.jobi[j, J_PREV] = last
    if last >= 0:
        st.jobi[last, J_NEXT] = j
    else:
        st.srv[i, V_HEAD] = j
    st.srv[i, V_TAIL] = j
    _level(st, i, k, True, now)
    if k == 0:
        idle_remove(st, i)
        if not clocks:
            t = now + size / speed(pr, i)
            st.srvf[i, W_CT] = t
            if not heap_push(st, i, t):
                st.si[S_STATUS] = NEED_JOBS
    elif not clocks:
        st.srvf[i, W_PEND] += size


@njit(inline="always")
def _becomes_idle(st, pr, i):
    """Server i has no job left (its heap entry is popped by the caller, or left stale by a token)."""
    st.srvf[i, W_CT] = math.inf
    idle_add(st, i)
    if pr.ints[P_INFO] == INFO_IDLE_QUEUE and st.si[S_PHASE] == 1:
        st.si[S_MSG] += 1  # the server joins the dispatcher's idle queue


@njit(inline="always")
def _report(st, i):
    """Server i's true queue length reaches the dispatcher: e_i := q_i (e_i >= q_i always)."""
    q = st.srv[i, V_Q]
    while st.srv[i, V_E] > q:
        bucket_down(st.srv, V_E, V_POS, st.eord, st.estart, i)
    if st.si[S_PHASE] == 1:
        st.si[S_MSG] += 1


# ---------------------------------------------------------------- events
@njit(inline="always")
def _arrive(st, pr, b, i, now):
    idx = st.si[S_NARR]
    st.si[S_NARR] = idx + 1
    _window(st, pr, idx, now)
    _enqueue(st, pr, b, i, now, pr.ints[P_WARMUP] <= idx < pr.ints[P_JOBS])


@njit(inline="always")
def _arrival(st, pr, b, choose, refs, now):
    """The dispatcher's kernel at address ``choose`` places the arrival (or, returning ``BATCH``, a batch: ``batch[j]``
    jobs on ``perm[j]``); ``refs``: the state and the parameters by reference."""
    i = call_int(choose, refs[0], refs[1], b, now)
    batch = i == BATCH
    if not batch and (i < 0 or i >= pr.ints[P_N]) and st.si[S_STATUS] == RUNNING:
        st.si[S_STATUS] = BAD_SERVER  # a compiled dispatcher of the user's returned no server: stop, say so
        st.si[S_BAD] = i
    if not batch and st.si[S_STATUS] != RUNNING:
        return
    for j in range(pr.ints[P_K] if batch else 1):  # one place where a job joins (compiled once)
        server = st.perm[j] if batch else i
        for _ in range(st.batch[j] if batch else 1):
            _arrive(st, pr, b, server, now)


@njit(inline="always")
def _completion(st, pr, b, i, now):
    j = st.srv[i, V_HEAD]
    _record(st, j, now)
    job_unlink(st, i, j)
    job_free(st, j)
    _level(st, i, st.srv[i, V_Q], False, now)
    h = st.srv[i, V_HEAD]
    if st.si[S_CLOCKS]:
        if h < 0:
            _becomes_idle(st, pr, i)
    elif h >= 0:
        size = st.jobf[h, J_SIZE]
        st.srvf[i, W_PEND] -= size
        t = now + size / speed(pr, i)
        st.srvf[i, W_CT] = t
        heap_replace_top(st, t)
    else:
        heap_pop(st)
        _becomes_idle(st, pr, i)
    if pr.ints[P_INFO] == INFO_PULL:
        d1 = pr.floats[F_DELTA1]
        if d1 > 0.0 and (d1 >= 1.0 or rng.uniform(st.rng, b) < d1):
            _report(st, i)


@njit(inline="always")
def _token(st, pr, b, now):
    """Resource pooling: remove one job from a uniformly random longest queue (wasted if all are empty)."""
    n = pr.ints[P_N]
    i = bucket_pick_max(st.srv, V_Q, st.qord, st.qstart, n, rng.uniform(st.rng, b))
    kmax = st.srv[i, V_Q]
    if kmax == 0:
        return
    if kmax >= 2:
        mode = pr.ints[P_REMOVE]
        if mode == REMOVE_NEXT:
            j = st.jobi[st.srv[i, V_HEAD], J_NEXT]
        elif mode == REMOVE_RANDOM:
            j = st.jobi[st.srv[i, V_HEAD], J_NEXT]
            for _ in range(rng.below(st.rng, b, kmax - 1)):
                j = st.jobi[j, J_NEXT]
        else:
            j = st.srv[i, V_TAIL]
        st.srvf[i, W_PEND] -= st.jobf[j, J_SIZE]
    else:
        j = st.srv[i, V_HEAD]
    _record(st, j, now)
    job_unlink(st, i, j)
    job_free(st, j)
    _level(st, i, kmax, False, now)
    if kmax < 2:
        _becomes_idle(st, pr, i)


@njit(inline="always")
def _exo_rate(st, pr):
    """Total rate of the exogenous events now."""
    n = pr.ints[P_N]
    info = pr.ints[P_INFO]
    r = pr.floats[F_LAM] * n / pr.ints[P_BATCH]
    if info == INFO_PUSH:
        r += pr.floats[F_DELTA] * n
    elif info == INFO_POOLING:
        r += pr.floats[F_P] * n
    elif info == INFO_PULL:
        r += pr.floats[F_DELTA0] * st.si[S_NIDLE]
    return r


# ---------------------------------------------------------------- reset and run
@njit
def reset(st, pr, b):
    """Empty system at time 0 (state arrays are reused across replications)."""
    n = pr.ints[P_N]
    for x in range(st.si.size):
        st.si[x] = 0
    for x in range(st.sf.size):
        st.sf[x] = 0.0
    info = pr.ints[P_INFO]
    st.si[S_QORDER] = 1 if info == INFO_QUEUE_ORDER or info == INFO_POOLING else 0
    st.si[S_CLOCKS] = pr.ints[P_CLOCKS]
    bucket_reset(st.srv, V_Q, V_POS, st.qord, st.qstart, n)
    bucket_reset(st.srv, V_E, V_POS, st.eord, st.estart, n)
    for k in range(st.qcnt.size):
        st.qcnt[k] = 0
    st.qcnt[0] = n
    for i in range(n):
        st.srv[i, V_HEAD] = -1
        st.srv[i, V_TAIL] = -1
        st.srv[i, V_IDPOS] = i
        st.srvf[i, W_CT] = math.inf
        st.srvf[i, W_PEND] = 0.0
        st.idl[i] = i
        st.perm[i] = i
    st.si[S_NIDLE] = n
    cap = st.jfree.size
    for j in range(cap):
        st.jfree[j] = cap - 1 - j
    st.si[S_NFREE] = cap
    for k in range(st.area.size):
        st.area[k] = 0.0
        st.last[k] = 0.0
    for x in range(st.own.size):
        st.own[x] = 0
    st.si[S_STATUS] = RUNNING
    r = _exo_rate(st, pr)
    st.sf[T_RATE] = r
    st.sf[T_EXO] = rng.exponential(st.rng, b) / r
    st.sf[T_NOW] = 0.0


@njit(inline="always")
def _non_arrival(st, pr, b, now):
    """The exogenous event at ``now`` that is not an arrival: a probe, an idle tick or a token."""
    info = pr.ints[P_INFO]
    if info == INFO_PUSH:
        _report(st, rng.below(st.rng, b, pr.ints[P_N]))
    elif info == INFO_PULL:
        m = st.si[S_NIDLE]
        if m > 0:
            _report(st, st.idl[rng.below(st.rng, b, m)])
    elif info == INFO_POOLING:
        _token(st, pr, b, now)


@njit(inline="always")
def _after_exogenous(st, pr, b, now):
    """Schedule the next exogenous event (heap mode; with competing clocks every event draws its own time)."""
    if not st.si[S_CLOCKS]:
        r = _exo_rate(st, pr) if pr.ints[P_INFO] == INFO_PULL else st.sf[T_RATE]
        st.sf[T_RATE] = r
        st.sf[T_EXO] = now + rng.exponential(st.rng, b) / r


NEXT_STOPPED = 0  # the run is not RUNNING (DONE, or an array overflow): nothing was processed
NEXT_EVENT = 1  # one event was processed
NEXT_ARRIVAL = 2  # an arrival is pending at T_NOW: the caller dispatches it (``place_arrival``, or ``run``'s choose)


@njit(inline="always")
def next_event(st, pr, b):
    """Process the next event of replication b up to (not including) the dispatch of an arrival; returns NEXT_*.

    Completions come from the heap, or (``S_CLOCKS``) from a clock competing with the exogenous ones. At an arrival
    the time is advanced to it and the caller chooses the server: :func:`run` by the dispatcher's ``choose``, the
    agent's path by :func:`place_arrival` (consuming the stream exactly as ``choose`` would in between: the twin
    path), then the next exogenous event is scheduled.
    """
    if st.si[S_STATUS] != RUNNING:
        return NEXT_STOPPED
    if st.si[S_PHASE] == 2 and st.si[S_MEAS] == 0:
        st.si[S_STATUS] = DONE
        return NEXT_STOPPED
    st.si[S_EVENTS] += 1
    done = -1  # the server whose job completes now, if the event is a completion
    clocks = st.si[S_CLOCKS]
    t_exo = st.sf[T_EXO]
    x = 0.0
    if clocks:
        n = pr.ints[P_N]
        mu = pr.floats[F_MU]
        idle = st.si[S_NIDLE]
        r_done = mu * (n - idle)
        r_exo = _exo_rate(st, pr)
        now = st.sf[T_NOW] + rng.exponential(st.rng, b) / (r_done + r_exo)
        st.sf[T_NOW] = now
        x = rng.uniform(st.rng, b) * (r_done + r_exo)
        if x < r_done:
            k = idle + int(x / mu)
            done = st.idl[k if k < n else n - 1]
        else:
            x -= r_done
    elif st.si[S_HEAPN] > 0 and st.hp[0, 0] <= t_exo:
        now, done = heap_top(st)
        if st.srvf[done, W_CT] != now:  # stale: that job was removed by a token (resource pooling)
            heap_pop(st)
            st.si[S_EVENTS] -= 1
            return NEXT_EVENT
        st.sf[T_NOW] = now
    else:
        now = t_exo
        st.sf[T_NOW] = now
        x = rng.uniform(st.rng, b) * st.sf[T_RATE]
    if done >= 0:  # one place where a job completes (compiled once)
        _completion(st, pr, b, done, now)
        if not clocks and pr.ints[P_INFO] == INFO_PULL:
            r_old = st.sf[T_RATE]
            r_new = _exo_rate(st, pr)
            if r_new != r_old:
                st.sf[T_EXO] = now + (t_exo - now) * (r_old / r_new)
                st.sf[T_RATE] = r_new
        return NEXT_EVENT
    if x < pr.floats[F_LAM] * pr.ints[P_N] / pr.ints[P_BATCH]:
        return NEXT_ARRIVAL
    _non_arrival(st, pr, b, now)
    _after_exogenous(st, pr, b, now)
    return NEXT_EVENT


@njit(inline="always")
def place_arrival(st, pr, b, i):
    """The pending arrival (``NEXT_ARRIVAL``) joins server i; the next exogenous event is scheduled."""
    now = st.sf[T_NOW]
    _arrive(st, pr, b, i, now)
    _after_exogenous(st, pr, b, now)


@njit
def run(st, pr, b, choose, max_events):
    """Advance replication b (stream ``st.rng[b]``) by up to ``max_events`` events, the arrivals placed by the
    dispatcher's kernel at address ``choose`` (``contract.KERNELS.addresses(policy)[0]``); returns S_STATUS.

    DONE when every measured job has left; NEED_LEVELS / NEED_JOBS when the arrays are too small (rerun larger).
    Compiled once, for :data:`RUN` (``contract.KERNELS.units(policy, loops=LOOPS)``), whatever the dispatcher.
    """
    refs = (ref(st), ref(pr))
    for _ in range(max_events):
        ev = next_event(st, pr, b)
        if ev == NEXT_STOPPED:
            break
        if ev == NEXT_ARRIVAL:
            now = st.sf[T_NOW]
            _arrival(st, pr, b, choose, refs, now)
            _after_exogenous(st, pr, b, now)
    return st.si[S_STATUS]



LOOPS = ((run, RUN), (reset, RESET))
"""The loop's entry points with their signatures: the loop units of ``contract.KERNELS.units(policy, loops=LOOPS)``,
compiled once per machine whatever the dispatcher."""
