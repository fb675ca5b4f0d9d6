"""Compiled event loop of the loss system with adaptive multiserver jobs (count-level, exact for Exp(1) sizes).

With Exp(1) inherent sizes the counts X_i (jobs on exactly i servers, i = 1..d) form a Markov chain: arrivals at
rate nλ, departures of an i-job at rate i·X_i (D = E/i). The loop draws the next event from these competing clocks
(O(d) per event, no event calendar). An arrival samples k of the n exchangeable servers without replacement: only
the number l of idle servers in the sample matters, l ~ Hypergeometric(n, idle, k), and a policy only uses
m = min(l, d); m is drawn by inversion from its pmf, which is cached per state (O(d) per state change, O(1) table
lookups of log-factorials: never O(n) or O(k) per arrival).

Every function takes the family's one state record ``st`` (:class:`msjgym.systems.loss.state.LossState`, a leading
batch axis B of replications or environments), its run parameters ``pr`` (:class:`~msjgym.systems.loss.state.
LossParams`, which hold the policy's kernel addresses) and the system ``b``. The environment (:mod:`msjgym.systems.
loss.control`) and the fast path call the same transitions, :func:`reset_system` (an empty system),
:func:`to_next_arrival` (run departures up to the next arrival and draw its sample) and :func:`resolve_arrival`
(place the job on ``width`` servers, 0 = block), so both paths give the same trajectory.

Statistics (per system and measurement batch, after a warm-up of ``pr.warmup`` arrivals, ``pr.jobs`` measured
arrivals): time and arrivals; blocked and accepted arrivals by width; Σ 1/width over accepted jobs (E[D | width] =
1/width: the response-time estimator conditions on the width, which removes the Exp(1) noise and keeps the mean);
time integrals of the number of jobs, busy servers, X_i, (λ − d x_d)², P(block | x), A_d(x) = P(width d | x) and
(1 − A_d)(λ − d x_d) (for the conservation and Stein identities of GMGM eqs. (1), (2), (9)).
"""
from __future__ import annotations

import math

from numba import types

from msjgym.core import rng
from msjgym.core.jit import njit
from msjgym.core.plug import call_float, call_int
from msjgym.core.sampling import sample
from msjgym.systems.loss.state import (F_AREA, F_NEXT_ARR, F_TIME, I_ARRIVALS, I_BUSY, I_EVENTS, I_HEAPN, I_M,
                                       I_MAXPART, I_PARTMASK, I_PENDING, I_TRACE, PARAMS, S_AD, S_ARR, S_BLOCK,
                                       S_BUSY, S_DEV2, S_INV, S_JOBS, S_PBLOCK, S_STEIN, S_TIME, S_WIDTH, STATE)

RUN = types.boolean(STATE, PARAMS, types.int64, types.int64)
"""The signature of :func:`run` and :func:`run_general` ``(st, pr, b, max_arrivals)``, compiled once per machine
(cached), whatever the policy."""
# pr.kernels[...]: the slots of msjgym.systems.loss.contract.KERNELS, in its order
_WIDTH, _BLOCK, _FULL = 0, 1, 2


@njit
def _log_choose(logfact, a, b):
    return logfact[a] - logfact[b] - logfact[a - b]


@njit
def censored_pmf(n, idle, k, d, logfact, out):
    """out[j] = P(min(l, d) = j), l ~ Hypergeometric(n, idle, k): O(d) terms from a log-factorial table."""
    for j in range(d + 1):
        out[j] = 0.0
    if k >= n:
        out[min(idle, d)] = 1.0
        return
    lo = max(0, k - (n - idle))
    hi = min(k, idle)
    if lo >= d:
        out[d] = 1.0
        return
    total = _log_choose(logfact, n, k)
    acc = 0.0
    top = min(hi, d - 1)
    for j in range(lo, top + 1):
        p = math.exp(_log_choose(logfact, idle, j) + _log_choose(logfact, n - idle, k - j) - total)
        out[j] = p
        acc += p
    if hi >= d:
        out[d] = max(0.0, 1.0 - acc)


@njit(inline="always")
def _draw_m(st, pr, b):
    """Draw m from the cached pmf by inversion (one uniform; none when the law is a point mass)."""
    pmf, d = st.pmf, pr.d
    for j in range(d + 1):
        if pmf[b, j] == 1.0:
            return j
    u = rng.uniform(st.rng, b)
    acc = 0.0
    last = 0
    for j in range(d + 1):
        if pmf[b, j] > 0.0:
            last = j
            acc += pmf[b, j]
            if u < acc:
                return j
    return last


@njit(inline="always")
def _state_changed(st, pr, b):
    """Refresh the cached sample pmf and the partial-job record after X changed."""
    x, ints, d = st.x, st.ints, pr.d
    censored_pmf(pr.n, pr.n - ints[b, I_BUSY], pr.k, d, pr.logfact, st.pmf[b])
    partial = 0
    for i in range(1, d):
        if x[b, i] > 0:
            partial += x[b, i]
            ints[b, I_PARTMASK] |= 1 << i
    if partial > ints[b, I_MAXPART]:
        ints[b, I_MAXPART] = partial


@njit
def reset_system(st, pr, b):
    """Empty system b at time 0 (its RNG stream continues; a compiled rule's parameters in ``pmf`` stay), with its
    sample pmf, and under a general size law (a completion heap) the time of its first arrival."""
    for i in range(st.x.shape[1]):
        st.x[b, i] = 0
    for i in range(st.ints.shape[1]):
        st.ints[b, i] = 0
    for i in range(st.flts.shape[1]):
        st.flts[b, i] = 0.0
    st.stats[b, :, :] = 0.0
    _state_changed(st, pr, b)
    if st.heap_t.shape[1] > 0:
        st.flts[b, F_NEXT_ARR] = rng.exponential(st.rng, b) / (pr.n * pr.lam)


@njit
def reset_all(st, pr):
    """:func:`reset_system` for every system of the batch."""
    for b in range(st.x.shape[0]):
        reset_system(st, pr, b)


@njit(inline="always")
def _batch_of(st, pr, b):
    """Measurement batch of the current interval (−1: warm-up, or after the window)."""
    j = st.ints[b, I_ARRIVALS] - pr.warmup
    if j < 0 or j >= pr.jobs:
        return -1
    return j * pr.batches // pr.jobs


@njit(inline="always")
def _integrate(st, pr, b, dt, batch):
    x, d = st.x, pr.d
    jobs = 0
    for i in range(1, d + 1):
        jobs += x[b, i]
    st.flts[b, F_AREA] += jobs * dt
    if batch < 0:
        return
    s = st.stats[b, batch]
    s[S_TIME] += dt
    s[S_JOBS] += jobs * dt
    s[S_BUSY] += st.ints[b, I_BUSY] * dt
    dev = pr.lam - d * x[b, d] / pr.n
    s[S_DEV2] += dev * dev * dt
    s[S_PBLOCK] += call_float(pr.kernels[_BLOCK], st.pmf, b, d) * dt
    ad = call_float(pr.kernels[_FULL], st.pmf, b, d)
    s[S_AD] += ad * dt
    s[S_STEIN] += (1.0 - ad) * dev * dt
    ax = S_WIDTH + d + 1
    for i in range(1, d + 1):
        s[ax + i] += x[b, i] * dt


@njit(inline="always")
def _record(st, pr, b, event):
    ints, trace = st.ints, st.trace
    t = ints[b, I_TRACE]
    if t < trace.shape[1]:
        partial = 0
        for i in range(1, pr.d):
            partial += st.x[b, i]
        trace[b, t, 0] = event
        trace[b, t, 1] = ints[b, I_BUSY]
        trace[b, t, 2] = partial
        ints[b, I_TRACE] = t + 1


@njit(inline="always")
def to_next_arrival(st, pr, b):
    """Run departures until the next arrival, then draw its sample (m = min(l, d) into ints[b, I_M]).

    Returns False (and does nothing) when the measurement window is complete.
    """
    x, ints, flts, d = st.x, st.ints, st.flts, pr.d
    if ints[b, I_ARRIVALS] >= pr.warmup + pr.jobs:
        return False
    arrival_rate = pr.n * pr.lam
    while True:
        busy = ints[b, I_BUSY]
        total = arrival_rate + busy
        dt = rng.exponential(st.rng, b) / total
        _integrate(st, pr, b, dt, _batch_of(st, pr, b))
        flts[b, F_TIME] += dt
        ints[b, I_EVENTS] += 1
        u = rng.uniform(st.rng, b) * total
        if u < arrival_rate:
            break
        u -= arrival_rate
        i = d
        for w in range(1, d + 1):  # departure of a width-w job with probability w X_w / busy
            u -= w * x[b, w]
            if u < 0.0:
                i = w
                break
        while x[b, i] == 0:  # rounding at the very end of the scan
            i -= 1
        x[b, i] -= 1
        ints[b, I_BUSY] -= i
        _state_changed(st, pr, b)
        _record(st, pr, b, -i)
    ints[b, I_M] = _draw_m(st, pr, b)
    ints[b, I_PENDING] = 1
    return True


@njit(inline="always")
def resolve_arrival(st, pr, b, width):
    """Place the pending arrival on ``width`` servers (0 = block); width must be <= ints[b, I_M]."""
    ints = st.ints
    batch = _batch_of(st, pr, b)
    if batch >= 0:
        s = st.stats[b, batch]
        s[S_ARR] += 1.0
        s[S_WIDTH + width] += 1.0
        if width == 0:
            s[S_BLOCK] += 1.0
        else:
            s[S_INV] += 1.0 / width
    ints[b, I_ARRIVALS] += 1
    ints[b, I_PENDING] = 0
    if width > 0:
        st.x[b, width] += 1
        ints[b, I_BUSY] += width
        _state_changed(st, pr, b)
    _record(st, pr, b, width)


@njit
def run(st, pr, b, max_arrivals):
    """Fast path for Exp(1) sizes (the count chain): up to ``max_arrivals`` arrivals of system b, each width decided
    by the policy's width kernel (``pr.kernels``); returns True when the window is done."""
    ints = st.ints
    for _ in range(max_arrivals):
        if ints[b, I_PENDING] == 0:
            if not to_next_arrival(st, pr, b):
                return True
        width = call_int(pr.kernels[_WIDTH], ints[b, I_M], pr.d, st.rng, b, st.pmf)
        resolve_arrival(st, pr, b, width)
    return ints[b, I_ARRIVALS] >= pr.warmup + pr.jobs


@njit(inline="always")
def _heap_put(st, b, i, t, w):
    """Entry i of replication b's completion heap: (completion time t, width w)."""
    st.heap_t[b, i] = t
    st.heap_w[b, i] = w


@njit(inline="always")
def _heap_push(st, b, t, w):
    """Add a completion at time t of a job of width w (sift-up: the later parents move down)."""
    heap_t, ints = st.heap_t, st.ints
    i = ints[b, I_HEAPN]
    ints[b, I_HEAPN] = i + 1
    while i > 0:
        parent = (i - 1) >> 1
        if heap_t[b, parent] <= t:
            break
        _heap_put(st, b, i, heap_t[b, parent], st.heap_w[b, parent])
        i = parent
    _heap_put(st, b, i, t, w)


@njit(inline="always")
def _heap_pop(st, b):
    """Remove the earliest completion; returns its width (sift-down of the last entry: earlier children move up)."""
    heap_t, ints = st.heap_t, st.ints
    w = st.heap_w[b, 0]
    size = ints[b, I_HEAPN] - 1
    ints[b, I_HEAPN] = size
    t, lw = heap_t[b, size], st.heap_w[b, size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and heap_t[b, c + 1] < heap_t[b, c]:
            c += 1
        if heap_t[b, c] >= t:
            break
        _heap_put(st, b, i, heap_t[b, c], st.heap_w[b, c])
        i = c
    _heap_put(st, b, i, t, lw)
    return w


@njit
def run_general(st, pr, b, max_arrivals):
    """Fast path for a general inherent-size law of mean 1 (``pr.law_kind``, ``pr.law_data``): per-job completion
    times in a binary heap; the sample is drawn exactly as in the count chain (servers are exchangeable whatever the
    law). Returns True when the window is done."""
    x, ints, flts, heap_t = st.x, st.ints, st.flts, st.heap_t
    done = 0
    arrival_rate = pr.n * pr.lam
    while done < max_arrivals:
        if ints[b, I_ARRIVALS] >= pr.warmup + pr.jobs:
            return True
        t = flts[b, F_TIME]
        t_arr = flts[b, F_NEXT_ARR]
        batch = _batch_of(st, pr, b)
        ints[b, I_EVENTS] += 1
        if ints[b, I_HEAPN] > 0 and heap_t[b, 0] < t_arr:
            t_dep = heap_t[b, 0]
            _integrate(st, pr, b, t_dep - t, batch)
            flts[b, F_TIME] = t_dep
            w = _heap_pop(st, b)
            x[b, w] -= 1
            ints[b, I_BUSY] -= w
            _state_changed(st, pr, b)
            _record(st, pr, b, -w)
        else:
            _integrate(st, pr, b, t_arr - t, batch)
            flts[b, F_TIME] = t_arr
            m = _draw_m(st, pr, b)
            ints[b, I_M] = m
            width = call_int(pr.kernels[_WIDTH], m, pr.d, st.rng, b, st.pmf)
            resolve_arrival(st, pr, b, width)
            if width > 0:
                _heap_push(st, b, t_arr + sample(pr.law_kind, pr.law_data, 0, st.rng, b) / width, width)
            flts[b, F_NEXT_ARR] = t_arr + rng.exponential(st.rng, b) / arrival_rate
            done += 1
    return ints[b, I_ARRIVALS] >= pr.warmup + pr.jobs
