"""The compiled event loop of the finite-skip systems (:func:`run`): one function that simulates a system, either
from empty to the end under a policy's kernel (mode RUN, :mod:`msjgym.systems.finite_skip.simulation`) or one
decision at a time for a decision taken outside: the agent path (modes START, STEP:
:mod:`msjgym.systems.finite_skip.agent`) and the environment's decision path (modes RESET, EPOCH, ADVANCE:
:mod:`msjgym.systems.finite_skip.control`). Every path runs the same transitions, compiled once.

Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis" (§§2, 4–7). After every
arrival and completion (a *decision epoch*) the front fills (Defs. 2.1, 2.2: while not full by the system's own rule,
:mod:`msjgym.systems.finite_skip.model`, it takes the oldest queued job) and the policy writes every job's rate; the
next event is the earliest of the next arrival and the earliest rem/rate. The front is defined without looking at the
rates, so "queue non-empty ⇒ total rate 1" (WCFS) and "only front jobs are served" (finite skip) are real checks of a
policy (acc A_GAP, A_OUTSIDE). For every job the loop records the work in system at its arrival W^A and the work in the
front older than it when it enters the front W_F^F, so the pathwise identity T_Q = W^A − W_F^F (proof of Thm 3.3) can
be checked; and, over the measured window, the integrals of N, N_F, W, W(1−B) and B for the work identity
E[W] = E[W(1−B)]/(1−ρ) + λE[S²]/(2(1−ρ)).

State and parameters are the records of :mod:`msjgym.systems.finite_skip.state` (one system's rows,
:class:`~msjgym.systems.finite_skip.state.System`) and :mod:`msjgym.systems.finite_skip.model`. :func:`run` is
compiled once per machine for its explicit signature (:func:`signatures`) and cached; a policy's kernel
(``FiniteSkipPolicy.allocate``) is compiled on its own for :data:`~msjgym.systems.finite_skip.contract.ALLOCATE` and
called at its address. This module imports no policy, so an edit of a policy file recompiles that policy's kernels
only, never the loop.

One function, its scalars in locals, rather than a transition helper called by a loop: a first run compiles about
1 CPU-second less this way (docs/compile-machinery.md, "One function with modes").
"""
from __future__ import annotations

import functools

import numpy as np
from numba import types

from msjgym.core.jit import njit
from msjgym.core.plug import call
from msjgym.core.rng import exponential
from msjgym.core.sampling import pick, sample
from msjgym.systems.finite_skip.model import (
    FULL_COUNT, FULL_SUM, P_JOBS, P_K, P_LAMBDA, P_RULE, P_WARMUP, params_type)
from msjgym.systems.finite_skip.state import (
    A_B, A_END, A_EVENTS, A_GAP, A_MAXNF, A_N, A_NARR, A_NEND, A_NF, A_OUTSIDE, A_SIZE, A_SIZE2, A_TIME, A_UNSTABLE,
    A_W, A_W1B, F_DT, F_NEXT, F_START, F_STOP, F_TIME, F_WORK, I_DONE, I_EVENTS, I_N, I_NF, I_SEQ, R_ARR, R_DONE,
    R_FRONT, R_SIZE, R_WA, R_WFF, system_type)

RUN = 0
"""Mode of :func:`run`: from empty until every measured job has completed, the policy's kernel at ``alloc`` writing
the rates at every decision epoch."""
START = 1
"""Mode of :func:`run`: from empty to the first decision epoch (a decision is due)."""
STEP = 2
"""Mode of :func:`run`: apply the decision written in ``rates`` (and ``srv``), run to the next decision epoch."""
ADVANCE = 3
"""Mode of :func:`run`: apply the decision written in ``rates``, process the next event only, open no epoch."""
EPOCH = 4
"""Mode of :func:`run`: open a decision epoch (fill the front), whatever the measured jobs."""
RESET = 5
"""Mode of :func:`run`: an empty system at time 0, its first interarrival drawn."""


@functools.lru_cache(maxsize=1)
def signatures() -> dict[str, types.Type]:
    """The explicit signature of the entry point ``run``, compiled once per machine."""
    return {"run": types.boolean(system_type(), params_type(), types.int64, types.int64)}


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


@njit
def run(s, pr, alloc, mode):
    """Simulate the system ``s`` (one system's rows) in ``mode``: RUN, START, STEP, ADVANCE, EPOCH or RESET.

    The measured jobs are the arrivals warmup .. warmup + jobs − 1. Returns False when the system stopped: every
    measured job has completed (RUN always ends so; START and STEP when it happens before a decision epoch) or an
    arrival found the job arrays full (A_UNSTABLE); then ``acc`` holds the end time and the jobs left (A_END,
    A_NEND), except in mode ADVANCE. ``alloc``: the address of the policy's kernel (mode RUN; 0 otherwise)."""
    # the fields as locals, one per line (a longer parallel assignment builds a tuple that numba types too)
    ints = s.ints
    flts = s.flts
    acc = s.acc
    rec = s.rec
    rng = s.rng
    cls = s.cls
    srv = s.srv
    seqs = s.seqs
    rem = s.rem
    arr = s.arr
    wa = s.wa
    wff = s.wff
    fent = s.fent
    sz = s.sz
    rates = s.rates
    taken = s.taken
    prm = pr.prm
    levels = pr.levels
    speeds = pr.speeds
    cumprob = pr.cumprob
    scale = pr.scale
    dkind = pr.dkind
    dstart = pr.dstart
    ddata = pr.ddata
    if mode == RUN or mode == START or mode == RESET:  # an empty system at time 0
        for i in range(ints.shape[0]):
            ints[i] = 0
        for i in range(flts.shape[0]):
            flts[i] = 0.0
        for i in range(acc.shape[0]):
            acc[i] = 0.0
        flts[F_START] = -1.0
        flts[F_STOP] = -1.0
        flts[F_NEXT] = exponential(rng, 0) / pr.floats[P_LAMBDA]
        if mode == RESET:
            return True
    jobs = pr.ints[P_JOBS]
    k = pr.ints[P_K]
    rule = pr.ints[P_RULE]
    warmup = pr.ints[P_WARMUP]
    lam = pr.floats[P_LAMBDA]
    nk = cumprob.shape[0]
    cap = rem.shape[0]
    n = ints[I_N]
    nf = ints[I_NF]
    seq = ints[I_SEQ]
    done = ints[I_DONE]
    events = ints[I_EVENTS]
    t = flts[F_TIME]
    next_arr = flts[F_NEXT]
    w = flts[F_WORK]
    t_start = flts[F_START]
    t_stop = flts[F_STOP]
    dt = flts[F_DT]  # the time the last event advanced
    decided = mode == STEP or mode == ADVANCE
    going = True
    while True:
        if not decided:
            if mode != EPOCH and done >= jobs:
                going = False
                break
            # a decision epoch: count it, fill the front (Defs. 2.1, 2.2): while it is not full, the oldest queued
            # job enters it (its entry time and the work of the older front jobs recorded)
            acc[A_EVENTS] += 1.0
            while nf < n and not _full(rule, nf, cls, prm, k, levels, taken):
                fent[nf] = t
                wsum = 0.0
                for j in range(nf):
                    wsum += rem[j]
                wff[nf] = wsum
                nf += 1
            if mode != RUN:
                break  # a decision is due
            for j in range(n):
                rates[j] = 0.0
            if n > 0:
                call(alloc, n, cls, prm, srv, speeds, k, levels, taken, rates, rng)
        decided = False
        # serve the jobs present at the epoch's rates until the next event
        bsum = 0.0
        for j in range(n):
            bsum += rates[j]
            if j >= nf and rates[j] > 0.0:
                acc[A_OUTSIDE] += 1.0
        if nf > acc[A_MAXNF]:
            acc[A_MAXNF] = nf
        if n > nf and 1.0 - bsum > acc[A_GAP]:
            acc[A_GAP] = 1.0 - bsum
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
        if t_start >= 0.0:
            lo = t
            hi = t + dt
            if t_stop >= 0.0 and hi > t_stop:
                hi = t_stop
            if hi > lo:
                u0 = lo - t
                h = hi - lo
                wint = (w - bsum * u0) * h - 0.5 * bsum * h * h
                acc[A_TIME] += h
                acc[A_N] += n * h
                acc[A_NF] += nf * h
                acc[A_W] += wint
                acc[A_W1B] += (1.0 - bsum) * wint
                acc[A_B] += bsum * h
        for j in range(n):
            if rates[j] > 0.0:
                rem[j] -= rates[j] * dt
        w -= bsum * dt
        t += dt
        events += 1
        if who < 0:  # arrival
            if n == cap:  # the job arrays are full
                acc[A_UNSTABLE] = 1.0
                going = False
                break
            c = pick(cumprob, 0, nk, rng, 0)  # the class: the first cumulative probability above a uniform
            size = scale[c] * sample(dkind[c], ddata, dstart[c], rng, 0)
            if seq == warmup:
                t_start = t
            if seq == warmup + jobs:
                t_stop = t
            if warmup <= seq < warmup + jobs:
                acc[A_NARR] += 1
                acc[A_SIZE] += size
                acc[A_SIZE2] += size * size
            cls[n] = c
            rem[n] = size
            arr[n] = t
            srv[n] = -1
            wsum = 0.0
            for j in range(n):
                wsum += rem[j]
            w = wsum  # resynchronise the running total (no drift)
            wa[n] = wsum
            wff[n] = 0.0
            fent[n] = -1.0
            seqs[n] = seq
            sz[n] = size
            seq += 1
            n += 1
            w += size
            next_arr = t + exponential(rng, 0) / lam
        else:  # completion of job `who`
            sq = seqs[who]
            if warmup <= sq < warmup + jobs:
                i = sq - warmup
                rec[i, R_ARR] = arr[who]
                rec[i, R_FRONT] = fent[who]
                rec[i, R_DONE] = t
                rec[i, R_SIZE] = sz[who]
                rec[i, R_WA] = wa[who]
                rec[i, R_WFF] = wff[who]
                done += 1
            w -= rem[who]
            if who < nf:
                nf -= 1
            elif warmup <= sq < warmup + jobs:
                rec[sq - warmup, R_FRONT] = np.nan  # served outside the front: the policy is not finite-skip
            for j in range(who, n - 1):
                cls[j] = cls[j + 1]
                rem[j] = rem[j + 1]
                arr[j] = arr[j + 1]
                srv[j] = srv[j + 1]
                wa[j] = wa[j + 1]
                wff[j] = wff[j + 1]
                fent[j] = fent[j + 1]
                seqs[j] = seqs[j + 1]
                sz[j] = sz[j + 1]
            n -= 1
        if mode == ADVANCE:
            break
    ints[I_N] = n
    ints[I_NF] = nf
    ints[I_SEQ] = seq
    ints[I_DONE] = done
    ints[I_EVENTS] = events
    flts[F_TIME] = t
    flts[F_NEXT] = next_arr
    flts[F_WORK] = w
    flts[F_START] = t_start
    flts[F_STOP] = t_stop
    flts[F_DT] = dt
    if mode != ADVANCE and not going:
        acc[A_END] = t
        acc[A_NEND] = n
    return going
