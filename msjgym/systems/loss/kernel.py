"""Compiled event loop of the loss system with adaptive multiserver jobs (count-level, exact for Exp(1) sizes).

With Exp(1) inherent sizes the counts X_i (jobs on exactly i servers, i = 1..d) form a Markov chain: arrivals at
rate nλ, departures of an i-job at rate i·X_i (D = E/i). The loop draws the next event from these competing clocks
(O(d) per event, no event calendar). An arrival samples k of the n exchangeable servers without replacement: only
the number l of idle servers in the sample matters, l ~ Hypergeometric(n, idle, k), and a policy only uses
m = min(l, d); m is drawn by inversion from its pmf, which is cached per state (O(d) per state change, O(1) table
lookups of log-factorials: never O(n) or O(k) per arrival).

State is plain data with a leading batch axis B (replications or environments). The environment and the fast path
call the same two transitions, :func:`to_next_arrival` (run departures up to the next arrival and draw its sample)
and :func:`resolve_arrival` (place the job on ``width`` servers, 0 = block), so both paths give the same trajectory.

Statistics (per replication and measurement batch, after a warm-up of ``warmup`` arrivals, ``jobs`` measured
arrivals): time and arrivals; blocked and accepted arrivals by width; Σ 1/width over accepted jobs (E[D | width] =
1/width: the response-time estimator conditions on the width, which removes the Exp(1) noise and keeps the mean);
time integrals of the number of jobs, busy servers, X_i, (λ − d x_d)², P(block | x), A_d(x) = P(width d | x) and
(1 − A_d)(λ − d x_d) (for the conservation and Stein identities of GMGM eqs. (1), (2), (9)).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from numba import types

from msjgym.core import rng
from msjgym.core.jit import njit
from msjgym.core.plug import call_float, call_int
from msjgym.core.sampling import sample
from msjgym.systems.loss.model import LossModel

# the policy's kernels, by signature: each compiled on its own (cached by its file) and called at its address
WIDTH = types.int64(types.int64, types.int64, types.uint64[:, ::1], types.int64, types.float64[:, ::1])
"""``width(m, d, s, b, pmf)``: the width (0 = block) for a sample showing m idle servers (``LossPolicy.width_kernel``);
``pmf`` is the state's table of P(m = j | state), whose last :data:`NARG` columns hold a compiled rule's parameters
(built-ins ignore it; :mod:`msjgym.systems.loss.compiled`)."""
PROBABILITY = types.float64(types.float64[:, ::1], types.int64, types.int64)
"""``p(pmf, b, d)``: P(block | state), P(width d | state) (``LossPolicy.block_probability``,
``.full_width_probability``), from ``pmf[b, j]`` = P(m = j | state), j = 0..d."""
KERNELS = types.UniTuple(types.int64, 3)
"""The addresses of a policy's three kernels (width, block probability, width-d probability): :func:`kernels`."""
_I, _F, _I2, _F2 = types.int64, types.float64, types.int64[:, ::1], types.float64[:, ::1]
_STATE = (_I2, _I2, _F2, _F2, types.float64[:, :, ::1], types.uint64[:, ::1], types.int64[:, :, ::1], types.float64[::1])
RUN = types.boolean(*_STATE, _I, _I, _I, _I, _F, KERNELS, _I, _I, _I, _I)
"""The signature of :func:`run`, compiled once per machine (cached), whatever the policy."""
RUN_GENERAL = types.boolean(*_STATE, _F2, _I2, _I, types.float64[::1], _I, _I, _I, _I, _F, KERNELS, _I, _I, _I, _I)
"""The signature of :func:`run_general`."""
GREEDY = "greedy"  # the policy whose P(block | state) the environment path's statistics integrate

# ints[b, :]
I_ARRIVALS = 0  # arrivals so far (warm-up included)
I_EVENTS = 1  # events so far (arrivals + departures)
I_PENDING = 2  # 1 while an arrival waits for its decision
I_M = 3  # min(l, d) of the pending arrival's sample
I_MAXPART = 4  # max over time of Σ_{i<d} X_i (jobs on fewer than d servers)
I_PARTMASK = 5  # bit i set if some job ever ran on exactly i < d servers
I_BUSY = 6  # busy servers
I_TRACE = 7  # events written to the trace
I_HEAPN = 8  # jobs in the completion heap (general sizes only)
NI = 9
# flts[b, :]
F_TIME = 0  # current time
F_AREA = 1  # ∫ (jobs in system) dt since the environment last read it (reward)
F_NEXT_ARR = 2  # time of the next arrival (general sizes only)
NF = 3
NARG = 4
"""Parameter slots of a compiled width rule: ``pmf[b, d + 1:d + 1 + NARG]`` (:mod:`msjgym.systems.loss.compiled`),
read by its width and probability kernels (passing them in the pmf table costs the built-ins no extra argument on
the probability kernels, called at every event)."""
# stats[b, batch, :] (fixed part; then per-width blocks)
S_TIME, S_ARR, S_BLOCK, S_INV, S_JOBS, S_BUSY, S_DEV2, S_PBLOCK, S_AD, S_STEIN = range(10)
S_WIDTH = 10  # d + 1 entries: arrivals given width 0 (blocked), 1, ..., d


def stat_size(d: int) -> int:
    return S_WIDTH + 2 * (d + 1)


def s_area_x(d: int) -> int:
    """First index of ∫ X_i dt, i = 0..d (index 0 unused)."""
    return S_WIDTH + d + 1


@dataclass
class LossState:
    """Arrays of B systems; see the module's field constants."""

    x: np.ndarray  # int64[B, d+1], X_i
    ints: np.ndarray  # int64[B, NI]
    flts: np.ndarray  # float64[B, NF]
    pmf: np.ndarray  # float64[B, d+1+NARG], P(m = j | current state), j = 0..d; then a compiled rule's parameters
    stats: np.ndarray  # float64[B, batches, stat_size(d)]
    rng: np.ndarray  # uint64[B, 4]
    trace: np.ndarray  # int64[B, T, 3]: (event, busy after, partial jobs after); event = width (arrival), −i (departure)
    logfact: np.ndarray  # float64[n+1], ln j!
    heap_t: np.ndarray  # float64[B, n]: completion times (general sizes; shape (B, 0) otherwise)
    heap_w: np.ndarray  # int64[B, n]: their jobs' widths


@dataclass(frozen=True)
class LossParams:
    """Run parameters of the kernel (plain ints and floats)."""

    n: int
    d: int
    k: int
    lam: float
    kernels: tuple[int, int, int]  # the policy's kernels' addresses (:func:`kernels`)
    warmup: int
    jobs: int
    batches: int


# ---------------------------------------------------------------------------------------------------- kernels
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


@njit
def _draw_m(pmf, d, s, b):
    """Draw m from the cached pmf by inversion (one uniform; none when the law is a point mass)."""
    for j in range(d + 1):
        if pmf[b, j] == 1.0:
            return j
    u = rng.uniform(s, b)
    acc = 0.0
    last = 0
    for j in range(d + 1):
        if pmf[b, j] > 0.0:
            last = j
            acc += pmf[b, j]
            if u < acc:
                return j
    return last


@njit
def _state_changed(x, ints, pmf, b, n, d, k, logfact):
    """Refresh the cached sample pmf and the partial-job record after X changed."""
    censored_pmf(n, n - ints[b, I_BUSY], k, d, logfact, pmf[b])
    partial = 0
    for i in range(1, d):
        if x[b, i] > 0:
            partial += x[b, i]
            ints[b, I_PARTMASK] |= 1 << i
    if partial > ints[b, I_MAXPART]:
        ints[b, I_MAXPART] = partial


@njit
def _batch_of(ints, b, warmup, jobs, batches):
    """Measurement batch of the current interval (−1: warm-up, or after the window)."""
    j = ints[b, I_ARRIVALS] - warmup
    if j < 0 or j >= jobs:
        return -1
    return j * batches // jobs


@njit
def _integrate(x, ints, flts, pmf, stats, b, dt, n, d, lam, kernels, batch):
    jobs = 0
    for i in range(1, d + 1):
        jobs += x[b, i]
    flts[b, F_AREA] += jobs * dt
    if batch < 0:
        return
    st = stats[b, batch]
    st[S_TIME] += dt
    st[S_JOBS] += jobs * dt
    st[S_BUSY] += ints[b, I_BUSY] * dt
    dev = lam - d * x[b, d] / n
    st[S_DEV2] += dev * dev * dt
    st[S_PBLOCK] += call_float(kernels[1], pmf, b, d) * dt
    ad = call_float(kernels[2], pmf, b, d)
    st[S_AD] += ad * dt
    st[S_STEIN] += (1.0 - ad) * dev * dt
    ax = S_WIDTH + d + 1
    for i in range(1, d + 1):
        st[ax + i] += x[b, i] * dt


@njit
def _record(trace, ints, x, b, d, event):
    t = ints[b, I_TRACE]
    if t < trace.shape[1]:
        partial = 0
        for i in range(1, d):
            partial += x[b, i]
        trace[b, t, 0] = event
        trace[b, t, 1] = ints[b, I_BUSY]
        trace[b, t, 2] = partial
        ints[b, I_TRACE] = t + 1


@njit
def to_next_arrival(x, ints, flts, pmf, stats, s, trace, logfact, b, n, d, k, lam, kernels, warmup, jobs, batches):
    """Run departures until the next arrival, then draw its sample (m = min(l, d) into ints[b, I_M]).

    Returns False (and does nothing) when the measurement window is complete.
    """
    if ints[b, I_ARRIVALS] >= warmup + jobs:
        return False
    arrival_rate = n * lam
    while True:
        busy = ints[b, I_BUSY]
        total = arrival_rate + busy
        dt = rng.exponential(s, b) / total
        _integrate(x, ints, flts, pmf, stats, b, dt, n, d, lam, kernels, _batch_of(ints, b, warmup, jobs, batches))
        flts[b, F_TIME] += dt
        ints[b, I_EVENTS] += 1
        u = rng.uniform(s, b) * total
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
        _state_changed(x, ints, pmf, b, n, d, k, logfact)
        _record(trace, ints, x, b, d, -i)
    ints[b, I_M] = _draw_m(pmf, d, s, b)
    ints[b, I_PENDING] = 1
    return True


@njit
def resolve_arrival(x, ints, pmf, stats, trace, logfact, b, n, d, k, width, warmup, jobs, batches):
    """Place the pending arrival on ``width`` servers (0 = block); width must be <= ints[b, I_M]."""
    batch = _batch_of(ints, b, warmup, jobs, batches)
    if batch >= 0:
        st = stats[b, batch]
        st[S_ARR] += 1.0
        st[S_WIDTH + width] += 1.0
        if width == 0:
            st[S_BLOCK] += 1.0
        else:
            st[S_INV] += 1.0 / width
    ints[b, I_ARRIVALS] += 1
    ints[b, I_PENDING] = 0
    if width > 0:
        x[b, width] += 1
        ints[b, I_BUSY] += width
        _state_changed(x, ints, pmf, b, n, d, k, logfact)
    _record(trace, ints, x, b, d, width)


@njit
def run(x, ints, flts, pmf, stats, s, trace, logfact, b, n, d, k, lam, kernels, warmup, jobs, batches, max_arrivals):
    """Fast path: up to ``max_arrivals`` arrivals under a built-in policy (its kernels' addresses ``kernels``);
    returns True when the window is done."""
    for _ in range(max_arrivals):
        if ints[b, I_PENDING] == 0:
            if not to_next_arrival(x, ints, flts, pmf, stats, s, trace, logfact, b, n, d, k, lam, kernels, warmup,
                                   jobs, batches):
                return True
        width = call_int(kernels[0], ints[b, I_M], d, s, b, pmf)
        resolve_arrival(x, ints, pmf, stats, trace, logfact, b, n, d, k, width, warmup, jobs, batches)
    return ints[b, I_ARRIVALS] >= warmup + jobs


@njit
def _heap_push(heap_t, heap_w, ints, b, t, w):
    i = ints[b, I_HEAPN]
    ints[b, I_HEAPN] = i + 1
    while i > 0:
        parent = (i - 1) >> 1
        if heap_t[b, parent] <= t:
            break
        heap_t[b, i] = heap_t[b, parent]
        heap_w[b, i] = heap_w[b, parent]
        i = parent
    heap_t[b, i] = t
    heap_w[b, i] = w


@njit
def _heap_pop(heap_t, heap_w, ints, b):
    """Remove the earliest completion; returns its width."""
    w = heap_w[b, 0]
    size = ints[b, I_HEAPN] - 1
    ints[b, I_HEAPN] = size
    t, lw = heap_t[b, size], heap_w[b, size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and heap_t[b, c + 1] < heap_t[b, c]:
            c += 1
        if heap_t[b, c] >= t:
            break
        heap_t[b, i] = heap_t[b, c]
        heap_w[b, i] = heap_w[b, c]
        i = c
    heap_t[b, i] = t
    heap_w[b, i] = lw
    return w


@njit
def run_general(x, ints, flts, pmf, stats, s, trace, logfact, heap_t, heap_w, kind, data, b, n, d, k, lam, kernels,
                warmup, jobs, batches, max_arrivals):
    """Fast path for a general inherent-size law (mean 1): per-job completion times in a binary heap; the sample
    is drawn exactly as in the count chain (servers are exchangeable whatever the law). Returns True when done."""
    done = 0
    arrival_rate = n * lam
    while done < max_arrivals:
        if ints[b, I_ARRIVALS] >= warmup + jobs:
            return True
        t = flts[b, F_TIME]
        t_arr = flts[b, F_NEXT_ARR]
        batch = _batch_of(ints, b, warmup, jobs, batches)
        ints[b, I_EVENTS] += 1
        if ints[b, I_HEAPN] > 0 and heap_t[b, 0] < t_arr:
            t_dep = heap_t[b, 0]
            _integrate(x, ints, flts, pmf, stats, b, t_dep - t, n, d, lam, kernels, batch)
            flts[b, F_TIME] = t_dep
            w = _heap_pop(heap_t, heap_w, ints, b)
            x[b, w] -= 1
            ints[b, I_BUSY] -= w
            _state_changed(x, ints, pmf, b, n, d, k, logfact)
            _record(trace, ints, x, b, d, -w)
        else:
            _integrate(x, ints, flts, pmf, stats, b, t_arr - t, n, d, lam, kernels, batch)
            flts[b, F_TIME] = t_arr
            m = _draw_m(pmf, d, s, b)
            ints[b, I_M] = m
            width = call_int(kernels[0], m, d, s, b, pmf)
            resolve_arrival(x, ints, pmf, stats, trace, logfact, b, n, d, k, width, warmup, jobs, batches)
            if width > 0:
                _heap_push(heap_t, heap_w, ints, b, t_arr + sample(kind, data, 0, s, b) / width, width)
            flts[b, F_NEXT_ARR] = t_arr + rng.exponential(s, b) / arrival_rate
            done += 1
    return ints[b, I_ARRIVALS] >= warmup + jobs


# ---------------------------------------------------------------------------------------------------- Python side
def _kernel_fields() -> tuple[tuple[str, types.Type], ...]:
    return (("width_kernel", WIDTH), ("block_probability", PROBABILITY), ("full_width_probability", PROBABILITY))


def units(policy, general: bool = False) -> list:
    """What a run of the built-in ``policy`` needs compiled (:class:`msjgym.core.compiling.Unit`): the event loop
    (:func:`run`, or :func:`run_general` for a general size law; once per machine) and the policy's three kernels."""
    from msjgym.core.compiling import Unit

    loop = (Unit("the loss event loop", "loss loop", run_general, RUN_GENERAL) if general else
            Unit("the loss event loop", "loss loop", run, RUN))
    return [loop] + [Unit(f"policy {policy.name}", "loss policy", getattr(policy, field), sig)
                     for field, sig in _kernel_fields()]


def kernels(policy) -> tuple[int, int, int]:
    """The addresses of ``policy``'s compiled kernels (width, block probability, width-d probability), compiled or
    loaded from the cache on first use."""
    from msjgym.core.plug import address

    return tuple(address(getattr(policy, field), sig) for field, sig in _kernel_fields())


def new_state(model: LossModel, streams: np.ndarray, batches: int, trace_events: int = 0) -> LossState:
    """Empty systems (no jobs), one per row of ``streams`` (copied)."""
    B, d, n = streams.shape[0], model.d, model.servers
    logfact = np.array([math.lgamma(j + 1.0) for j in range(n + 1)])
    cap = 0 if model.service is None else n  # at most n jobs (each holds >= 1 server)
    st = LossState(x=np.zeros((B, d + 1), np.int64), ints=np.zeros((B, NI), np.int64),
                   flts=np.zeros((B, NF)), pmf=np.zeros((B, d + 1 + NARG)),
                   stats=np.zeros((B, batches, stat_size(d))), rng=streams.copy(),
                   trace=np.zeros((B, trace_events, 3), np.int64), logfact=logfact,
                   heap_t=np.zeros((B, cap)), heap_w=np.zeros((B, cap), np.int64))
    for b in range(B):
        _state_changed(st.x, st.ints, st.pmf, b, n, d, model.k, logfact)
        if model.service is not None:
            st.flts[b, F_NEXT_ARR] = rng.exponential(st.rng, b) / (n * model.lam)
    return st


class LossSimulation:
    """B independent replications of a loss model under a built-in policy (``greedy``, ``fixed-width``,
    ``random-width``), advanced by the compiled loop (the count chain for Exp(1) sizes, :func:`run_general`
    with a completion heap for any other law of mean 1).

    Args:
        model: the system.
        policy: a built-in policy's declaration (:class:`msjgym.policies.loss.LossPolicy`, e.g. from
            :func:`msjgym.api.policy_spec`; its kernels decide the widths and give the per-state blocking
            probability P(block | x) in the statistics).
        warmup: arrivals discarded.
        jobs: arrivals measured.
        batches: measurement batches.
        streams: ``uint64[B, 4]`` RNG states (``msjgym.core.rng.spawn_states``).
        trace_events: events recorded per replication (0: none).
    """

    def __init__(self, model: LossModel, policy: Any, warmup: int, jobs: int, batches: int, streams: np.ndarray,
                 trace_events: int = 0) -> None:
        if jobs < batches:
            raise ValueError(f"jobs = {jobs}: must be >= batches = {batches}")
        self.model = model
        self.policy = policy
        self.params = LossParams(int(model.servers), int(model.d), int(model.k), float(model.lam), (0, 0, 0),
                                 int(warmup), int(jobs), int(batches))
        self.state = new_state(model, streams, batches, trace_events)
        row = getattr(policy, "parameter_row", None)  # a compiled width rule's parameters (loss.compiled)
        if row is not None:
            self.state.pmf[:, self.model.d + 1:] = row()
        if model.service is not None:
            kind, data = model.service.encode()
            self._law = (int(kind), np.ascontiguousarray(data, dtype=np.float64))

    def _args(self) -> tuple:
        st = self.state
        return (st.x, st.ints, st.flts, st.pmf, st.stats, st.rng, st.trace, st.logfact)

    def units(self) -> list:
        """What this simulation needs compiled (:func:`units`)."""
        return units(self.policy, self.model.service is not None)

    def prepare(self) -> None:
        """Compile (or load from the cache) the event loop and the policy's kernels."""
        from msjgym.core.compiling import compile_units

        compile_units(self.units())
        self.params = replace(self.params, kernels=kernels(self.policy))

    def advance(self, b: int, max_arrivals: int) -> bool:
        """Run replication b for up to ``max_arrivals`` arrivals; True when its window is done."""
        if not self.params.kernels[0]:
            self.prepare()
        p = self.params
        if self.model.service is not None:
            st = self.state
            return bool(run_general(*self._args(), st.heap_t, st.heap_w, *self._law, b, p.n, p.d, p.k, p.lam,
                                    p.kernels, p.warmup, p.jobs, p.batches, max_arrivals))
        return bool(run(*self._args(), b, p.n, p.d, p.k, p.lam, p.kernels, p.warmup, p.jobs, p.batches,
                        max_arrivals))

    def events(self, b: int) -> int:
        return int(self.state.ints[b, I_EVENTS])

    def trace(self, b: int = 0) -> np.ndarray:
        """Recorded events of replication b: rows (event, busy servers after, jobs on < d servers after)."""
        return self.state.trace[b, :self.state.ints[b, I_TRACE]]
