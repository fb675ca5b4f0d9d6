"""The compiled event loop of the finite-skip systems (the model, policies and Python side:
:mod:`msjgym.systems.finite_skip.simulate`).

Compiled once per machine for :data:`RUN` and cached; a policy's kernel (``FiniteSkipPolicy.allocate``) is compiled
on its own for :data:`ALLOCATE` and called at its address. This module imports no policy, so an edit of a policy file
recompiles that policy's kernels only, never the loop.
"""
from __future__ import annotations

import numpy as np
from numba import types

from msjgym.core.jit import njit
from msjgym.core.plug import call
from msjgym.core.rng import exponential, uniform
from msjgym.core.sampling import sample

# per-replication accumulators acc[:]
A_TIME = 0  # measured time (from the warmup-th arrival to the (warmup + jobs)-th)
A_N = 1  # ∫ N dt
A_NF = 2  # ∫ N_F dt
A_W = 3  # ∫ W dt
A_W1B = 4  # ∫ W (1 − B) dt
A_B = 5  # ∫ B dt
A_NARR = 6  # arrivals in the window
A_MAXNF = 7  # largest front size seen (whole run)
A_GAP = 8  # largest 1 − B while the queue is non-empty (whole run)
A_UNSTABLE = 9  # 1 if the job arrays overflowed
A_END = 10  # simulated time at the end
A_NEND = 11  # jobs in system at the end
A_SIZE2 = 12  # Σ S² over arrivals in the window
A_SIZE = 13  # Σ S over arrivals in the window
A_OUTSIDE = 14  # events at which a job outside the front was served (0 for a finite-skip policy)
A_EVENTS = 15  # events simulated (arrivals and completions, whole run)
NACC = 16

# per measured job rec[i, :]
R_ARR = 0
R_FRONT = 1  # time it entered the front
R_DONE = 2
R_SIZE = 3
R_WA = 4  # work in system seen at arrival (excluding itself)
R_WFF = 5  # work in the front, of jobs older than it, when it entered the front
NREC = 6


# ---------------------------------------------------------------- compiled event loop
_I, _F, _I1, _F1 = types.int64, types.float64, types.int64[::1], types.float64[::1]
ALLOCATE = types.void(_I, _I1, _I1, _I1, _F1, _I, _I1, _I1, _F1, types.uint64[:, ::1])
"""The signature a policy's kernel ``allocate(n, cls, prm, srv, speeds, k, levels, taken, rates, rng)`` is compiled
for, on its own (cached by its file); the event loop calls it at its address."""
RUN = types.void(_I, _I, _F, _F1, _I1, _F1, _I1, _I1, _F1, _F1, _I1, _I, _I, _I, types.uint64[:, ::1], _F1,
                 types.float64[:, ::1], _I1, _F1, _F1, _I1, _F1, _I1, _F1, _F1, _F1, _I1, _F1, _I)
"""The signature the event loop ``_run`` is compiled for, once per machine (cached), whatever the policy."""

FULL_COUNT = 0
FULL_SUM = 1
FULL_CLASS = 2


@njit
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
def _run(alloc, k, lam, cumprob, prm, scale, dkind, dstart, ddata, speeds, levels, warmup, jobs, cap, rng,
         acc, rec, cls, rem, arr, srv, rates, taken, wa, wff, fent, seqs, sz, rule):
    """Simulate one replication until every measured job (arrivals warmup .. warmup + jobs − 1) has completed, the
    rates written by the policy's kernel at address ``alloc`` (:data:`ALLOCATE`).

    ``rule`` says when the front (the first ``nf`` jobs) is full: FULL_COUNT (k jobs), FULL_SUM (their thresholds or
    needs sum to >= k) or FULL_CLASS (some need v has k/v jobs in it: ServerFilling, divisible setting)."""
    n = 0
    nf = 0
    t = 0.0
    seq = 0
    done_meas = 0
    nk = cumprob.shape[0]
    next_arr = exponential(rng, 0) / lam
    w = 0.0
    t_start = -1.0
    t_stop = -1.0
    while done_meas < jobs:
        acc[A_EVENTS] += 1.0
        # front (Defs. 2.1, 2.2): a prefix of the arrival order; while not full it requests the oldest queued job
        while nf < n and not _full(rule, nf, cls, prm, k, levels, taken):
            fent[nf] = t
            wsum = 0.0
            for j in range(nf):
                wsum += rem[j]
            wff[nf] = wsum
            nf += 1
        for j in range(n):
            rates[j] = 0.0
        if n > 0:
            call(alloc, n, cls, prm, srv, speeds, k, levels, taken, rates, rng)
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
        if who < 0:  # arrival
            if n == cap:
                acc[A_UNSTABLE] = 1.0
                break
            u = uniform(rng, 0)
            c = nk - 1
            for i in range(nk - 1):
                if u < cumprob[i]:
                    c = i
                    break
            s = scale[c] * sample(dkind[c], ddata, dstart[c], rng, 0)
            if seq == warmup:
                t_start = t
            if seq == warmup + jobs:
                t_stop = t
            if warmup <= seq < warmup + jobs:
                acc[A_NARR] += 1
                acc[A_SIZE] += s
                acc[A_SIZE2] += s * s
            cls[n] = c
            rem[n] = s
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
            sz[n] = s
            seq += 1
            n += 1
            w += s
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
                done_meas += 1
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
    acc[A_END] = t
    acc[A_NEND] = n
