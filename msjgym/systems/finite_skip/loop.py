"""The compiled event loop of the finite-skip systems: its transitions (:func:`epoch`, :func:`advance`), the loop that
runs a replication under a policy's kernel (:func:`run`), and the same transitions stepped one decision at a time for a
decision taken outside (:func:`start`, :func:`step`: the agent path of :mod:`msjgym.systems.finite_skip.agent`; the
environment's decision path, :mod:`msjgym.systems.finite_skip.control`, calls :func:`epoch` and :func:`advance`).

Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis" (§§2, 4–7). After every
arrival and completion (a *decision epoch*) the front fills (Defs. 2.1, 2.2: while not full by the system's own rule,
:mod:`msjgym.systems.finite_skip.model`, it takes the oldest queued job) and the policy writes every job's rate; the
next event is the earliest of the next arrival and the earliest rem/rate. The front is defined without looking at the
rates, so "queue non-empty ⇒ total rate 1" (WCFS) and "only front jobs are served" (finite skip) are real checks of a
policy (acc A_GAP, A_OUTSIDE). For every job the loop records the work in system at its arrival W^A and the work in the
front older than it when it enters the front W_F^F, so the pathwise identity T_Q = W^A − W_F^F (proof of Thm 3.3) can
be checked; and, over the measured window, the integrals of N, N_F, W, W(1−B) and B for the work identity
E[W] = E[W(1−B)]/(1−ρ) + λE[S²]/(2(1−ρ)).

State and parameters are the records of :mod:`msjgym.systems.finite_skip.state` and
:mod:`msjgym.systems.finite_skip.model`. The entry points are compiled once per machine for their explicit signatures
(:func:`signatures`) and cached; a policy's kernel (``FiniteSkipPolicy.allocate``) is compiled on its own for
:data:`~msjgym.systems.finite_skip.contract.ALLOCATE` and called at its address. This module imports no policy, so an
edit of a policy file recompiles that policy's kernels only, never the loop.
"""
from __future__ import annotations

import functools

import numpy as np
from numba import types

from msjgym.core.jit import njit
from msjgym.core.plug import call
from msjgym.core.rng import exponential, uniform
from msjgym.core.sampling import sample
from msjgym.systems.finite_skip.model import FULL_COUNT, FULL_SUM, P_JOBS, P_K, P_LAMBDA, P_RULE, P_WARMUP, params_type
from msjgym.systems.finite_skip.state import (
    A_B, A_END, A_EVENTS, A_GAP, A_MAXNF, A_N, A_NARR, A_NEND, A_NF, A_OUTSIDE, A_SIZE, A_SIZE2, A_TIME, A_UNSTABLE,
    A_W, A_W1B, F_DT, F_NEXT, F_START, F_STOP, F_TIME, F_WORK, I_DONE, I_EVENTS, I_N, I_NF, I_SEQ, R_ARR, R_DONE,
    R_FRONT, R_SIZE, R_WA, R_WFF, state_type, system)


@functools.lru_cache(maxsize=1)
def signatures() -> dict[str, types.Type]:
    """The explicit signature of each entry point (``run``, ``start``, ``step``), compiled once per machine."""
    st, pr, i = state_type(), params_type(), types.int64
    return {"run": types.void(st, pr, i, i), "start": types.boolean(st, pr, i), "step": types.boolean(st, pr, i)}


@njit(inline="always")
def _full(rule, nf, cls, prm, k, levels, cnt):
    """Is the front made of the ``nf`` oldest jobs full (Def. 2.2, by the system's definition: §§4.2, 5.2, 6.2,
    7.2, App. B.2; docs/modelling-choices.md#finite-skip-front)?"""
    if rule == FULL_COUNT:
        return nf >= k
    if rule == FULL_SUM:
        total = 0
        for j in range(nf):
            total += prm[cls[j]]
        return total >= k
    for i in range(levels.shape[0]):
        cnt[i] = 0
    for j in range(nf):
        v = prm[cls[j]]
        for i in range(levels.shape[0]):
            if levels[i] == v:
                cnt[i] += 1
                if cnt[i] * v >= k:
                    return True
    return False


@njit(inline="glue")
def begin(s, pr):
    """An empty system at time 0 (``s``: one system's rows, :func:`~msjgym.systems.finite_skip.state.system`), its
    first interarrival drawn."""
    for i in range(s.ints.shape[0]):
        s.ints[i] = 0
    for i in range(s.flts.shape[0]):
        s.flts[i] = 0.0
    for i in range(s.acc.shape[0]):
        s.acc[i] = 0.0
    s.flts[F_START] = -1.0
    s.flts[F_STOP] = -1.0
    s.flts[F_NEXT] = exponential(s.rng, 0) / pr.floats[P_LAMBDA]


@njit(inline="glue")
def epoch(s, pr):
    """Open a decision epoch: count it (A_EVENTS) and fill the front (Defs. 2.1, 2.2): while it is not full, the
    oldest queued job enters it (its entry time and the work of the older front jobs recorded)."""
    s.acc[A_EVENTS] += 1.0
    n = s.ints[I_N]
    nf = s.ints[I_NF]
    t = s.flts[F_TIME]
    k = pr.ints[P_K]
    rule = pr.ints[P_RULE]
    while nf < n and not _full(rule, nf, s.cls, pr.prm, k, pr.levels, s.taken):
        s.fent[nf] = t
        wsum = 0.0
        for j in range(nf):
            wsum += s.rem[j]
        s.wff[nf] = wsum
        nf += 1
    s.ints[I_NF] = nf


@njit(inline="always")
def advance(s, pr):
    """Serve the jobs present at the epoch's rates (``s.rates``) until the next event, and process it (an arrival or
    a completion). Returns False if the system stopped: an arrival found the job arrays full (A_UNSTABLE)."""
    n = s.ints[I_N]
    nf = s.ints[I_NF]
    t = s.flts[F_TIME]
    rates = s.rates
    rem = s.rem
    acc = s.acc
    b = 0.0
    for j in range(n):
        b += rates[j]
        if j >= nf and rates[j] > 0.0:
            acc[A_OUTSIDE] += 1.0
    if nf > acc[A_MAXNF]:
        acc[A_MAXNF] = nf
    if n > nf and 1.0 - b > acc[A_GAP]:
        acc[A_GAP] = 1.0 - b
    # next event
    next_arr = s.flts[F_NEXT]
    dt = next_arr - t
    who = -1
    for j in range(n):
        if rates[j] > 0.0:
            d = rem[j] / rates[j]
            if d < dt:
                dt = d
                who = j
    if dt < 0.0:
        dt = 0.0
    # integrate over the measured window [t_start, t_stop]
    w = s.flts[F_WORK]
    t_start = s.flts[F_START]
    t_stop = s.flts[F_STOP]
    if t_start >= 0.0:
        lo = t
        hi = t + dt
        if t_stop >= 0.0 and hi > t_stop:
            hi = t_stop
        if hi > lo:
            u0 = lo - t
            h = hi - lo
            wint = (w - b * u0) * h - 0.5 * b * h * h
            acc[A_TIME] += h
            acc[A_N] += n * h
            acc[A_NF] += nf * h
            acc[A_W] += wint
            acc[A_W1B] += (1.0 - b) * wint
            acc[A_B] += b * h
    for j in range(n):
        if rates[j] > 0.0:
            rem[j] -= rates[j] * dt
    w -= b * dt
    t += dt
    s.flts[F_TIME] = t
    s.flts[F_DT] = dt
    s.ints[I_EVENTS] += 1
    warmup = pr.ints[P_WARMUP]
    jobs = pr.ints[P_JOBS]
    if who < 0:  # arrival
        if n == rem.shape[0]:
            acc[A_UNSTABLE] = 1.0
            s.flts[F_WORK] = w
            return False
        cumprob = pr.cumprob
        nk = cumprob.shape[0]
        u = uniform(s.rng, 0)
        c = nk - 1
        for i in range(nk - 1):
            if u < cumprob[i]:
                c = i
                break
        size = pr.scale[c] * sample(pr.dkind[c], pr.ddata, pr.dstart[c], s.rng, 0)
        seq = s.ints[I_SEQ]
        if seq == warmup:
            s.flts[F_START] = t
        if seq == warmup + jobs:
            s.flts[F_STOP] = t
        if warmup <= seq < warmup + jobs:
            acc[A_NARR] += 1
            acc[A_SIZE] += size
            acc[A_SIZE2] += size * size
        s.cls[n] = c
        rem[n] = size
        s.arr[n] = t
        s.srv[n] = -1
        wsum = 0.0
        for j in range(n):
            wsum += rem[j]
        w = wsum  # resynchronise the running total (no drift)
        s.wa[n] = wsum
        s.wff[n] = 0.0
        s.fent[n] = -1.0
        s.seqs[n] = seq
        s.sz[n] = size
        s.ints[I_SEQ] = seq + 1
        s.ints[I_N] = n + 1
        w += size
        s.flts[F_NEXT] = t + exponential(s.rng, 0) / pr.floats[P_LAMBDA]
    else:  # completion of job `who`
        sq = s.seqs[who]
        rec = s.rec
        if warmup <= sq < warmup + jobs:
            i = sq - warmup
            rec[i, R_ARR] = s.arr[who]
            rec[i, R_FRONT] = s.fent[who]
            rec[i, R_DONE] = t
            rec[i, R_SIZE] = s.sz[who]
            rec[i, R_WA] = s.wa[who]
            rec[i, R_WFF] = s.wff[who]
            s.ints[I_DONE] += 1
        w -= rem[who]
        if who < nf:
            s.ints[I_NF] = nf - 1
        elif warmup <= sq < warmup + jobs:
            rec[sq - warmup, R_FRONT] = np.nan  # served outside the front: the policy is not finite-skip
        for j in range(who, n - 1):
            s.cls[j] = s.cls[j + 1]
            rem[j] = rem[j + 1]
            s.arr[j] = s.arr[j + 1]
            s.srv[j] = s.srv[j + 1]
            s.wa[j] = s.wa[j + 1]
            s.wff[j] = s.wff[j + 1]
            s.fent[j] = s.fent[j + 1]
            s.seqs[j] = s.seqs[j + 1]
            s.sz[j] = s.sz[j + 1]
        s.ints[I_N] = n - 1
    s.flts[F_WORK] = w
    return True


@njit(inline="glue")
def _finish(s):
    s.acc[A_END] = s.flts[F_TIME]
    s.acc[A_NEND] = s.ints[I_N]


@njit
def run(st, pr, b, alloc):
    """Simulate system b from empty until every measured job (arrivals warmup .. warmup + jobs − 1) has completed,
    the rates written at every decision epoch by the policy's kernel at address ``alloc``
    (:data:`~msjgym.systems.finite_skip.contract.ALLOCATE`), or until the job arrays overflow (A_UNSTABLE)."""
    s = system(st, b)
    begin(s, pr)
    jobs = pr.ints[P_JOBS]
    k = pr.ints[P_K]
    while s.ints[I_DONE] < jobs:
        epoch(s, pr)
        n = s.ints[I_N]
        for j in range(n):
            s.rates[j] = 0.0
        if n > 0:
            call(alloc, n, s.cls, pr.prm, s.srv, pr.speeds, k, pr.levels, s.taken, s.rates, s.rng)
        if not advance(s, pr):
            break
    _finish(s)


@njit
def start(st, pr, b):
    """Begin a replication of system b decided from outside: an empty system, run to its first decision epoch.
    Returns whether a decision is due (False: nothing to measure)."""
    s = system(st, b)
    begin(s, pr)
    if s.ints[I_DONE] >= pr.ints[P_JOBS]:
        _finish(s)
        return False
    epoch(s, pr)
    return True


@njit
def step(st, pr, b):
    """Apply the decision written in ``st.rates[b]`` (and ``st.srv[b]``): run system b to its next decision epoch, as
    :func:`run` does after its policy's kernel. Returns whether a decision is due (False: the replication ended)."""
    s = system(st, b)
    if not advance(s, pr) or s.ints[I_DONE] >= pr.ints[P_JOBS]:
        _finish(s)
        return False
    epoch(s, pr)
    return True
