"""The policy-independent compiled transitions of the MSJ system: measurement batches, drawing a job, admission
records and the instability detector.

The event loop that calls them around the policy's kernels is :mod:`msjgym.systems.msj.loop`; the Python handle
that drives it is :mod:`msjgym.systems.msj.simulation`.
"""
from __future__ import annotations

import math

from msjgym.core import rng
from msjgym.core.jit import njit
from msjgym.core.sampling import sample
from msjgym.systems.msj.state import (
    B_AREA_DEF, B_AREA_N, B_AREA_X, B_NARR, B_NQUEUED, BS_AREA_HIGH, BS_TIME, C_AREA_DEF, C_AREA_N, C_AREA_X, J_BATCH,
    J_CLS, J_HPOS, P_DETECT, P_JOBS, P_K, P_NBATCH, P_SATURATED, P_WARMUP, S_BATCH, S_EVENTS, S_NCHK, S_NEXT_CHK,
    S_NJOBS, S_STATUS, T_AREA_HIGH, T_BATCH, T_GROWTH, T_NOW, UNSTABLE, touch, touch_need)

FIRST_CHECKPOINT = 1024  # events
DETECT_WINDOWS = 4  # consecutive doubling windows of growth that flag instability
DETECT_SIGMAS = 3.0
DETECT_RATE_RATIO = 0.75


# ---------------------------------------------------------------- measurement batches
@njit(inline="always")
def _batch_of(pr, i):
    """Batch of the i-th progress event (0-based): -1 in warm-up, NB after the window."""
    w = pr.ints[P_WARMUP]
    n = pr.ints[P_JOBS]
    if i < w:
        return -1
    if i >= w + n:
        return pr.ints[P_NBATCH]
    return (i - w) * pr.ints[P_NBATCH] // n


@njit(inline="always")
def _flush(st, pr, b, new_batch):
    """Close the current batch's time averages at now and open ``new_batch``."""
    old = st.sys_i[b, S_BATCH]
    measured = 0 <= old < pr.ints[P_NBATCH]
    for c in range(pr.ints[P_K]):
        touch(st, pr, b, c)
        if measured:
            st.bstat[b, old, c, B_AREA_N] += st.cls_f[b, c, C_AREA_N]
            st.bstat[b, old, c, B_AREA_X] += st.cls_f[b, c, C_AREA_X]
            st.bstat[b, old, c, B_AREA_DEF] += st.cls_f[b, c, C_AREA_DEF]
        st.cls_f[b, c, C_AREA_N] = 0.0
        st.cls_f[b, c, C_AREA_X] = 0.0
        st.cls_f[b, c, C_AREA_DEF] = 0.0
    touch_need(st, pr, b)
    now = st.sys_f[b, T_NOW]
    if measured:
        st.bsys[b, old, BS_TIME] += now - st.sys_f[b, T_BATCH]
        st.bsys[b, old, BS_AREA_HIGH] += st.sys_f[b, T_AREA_HIGH]
    st.sys_f[b, T_AREA_HIGH] = 0.0
    st.sys_f[b, T_BATCH] = now
    st.sys_i[b, S_BATCH] = new_batch


@njit(inline="always")
def _progress(st, pr, b, i):
    """Register the i-th progress event (arrival, or completion in saturated mode); returns its batch."""
    batch = _batch_of(pr, i)
    if batch != st.sys_i[b, S_BATCH]:
        _flush(st, pr, b, batch)
    return batch


# ---------------------------------------------------------------- events
@njit(inline="always")
def _draw_job(st, pr, b):
    """Draw the class and the duration of a new job."""
    u = rng.uniform(st.rng, b)
    K = pr.ints[P_K]
    c = K - 1
    for k in range(K - 1):
        if u < pr.cumprob[k]:
            c = k
            break
    return c, sample(pr.dkind[c], pr.ddata, pr.dstart[c], st.rng, b)


@njit(inline="always")
def _record_admission(st, b, j):
    """After scheduling a new job's arrival: count it, and whether it had to wait."""
    batch = st.job_i[b, j, J_BATCH]
    if batch >= 0:
        c = st.job_i[b, j, J_CLS]
        st.bstat[b, batch, c, B_NARR] += 1.0
        if st.job_i[b, j, J_HPOS] < 0:
            st.bstat[b, batch, c, B_NQUEUED] += 1.0


# ---------------------------------------------------------------- instability detection
@njit(inline="always")
def _checkpoint(st, pr, b):
    """Record (time, jobs in system, events) and flag the system unstable if it keeps growing.

    Unstable when, over each of the last ``DETECT_WINDOWS`` doubling windows, the number in system grew by more
    than ``DETECT_SIGMAS`` standard deviations of a driftless walk with as many ±1 steps as events in the window,
    and the growth rate did not fall by more than ``DETECT_RATE_RATIO`` from window to window (a stable system's
    transient grows diffusively, its rate halving at each doubling).
    """
    k = st.sys_i[b, S_NCHK]
    if k >= st.chk.shape[1]:
        return
    st.chk[b, k, 0] = st.sys_f[b, T_NOW]
    st.chk[b, k, 1] = st.sys_i[b, S_NJOBS]
    st.chk[b, k, 2] = st.sys_i[b, S_EVENTS]
    st.sys_i[b, S_NCHK] = k + 1
    st.sys_i[b, S_NEXT_CHK] *= 2
    if not pr.ints[P_DETECT] or pr.ints[P_SATURATED] or k < DETECT_WINDOWS:
        return
    last_rate = 0.0
    for i in range(k - DETECT_WINDOWS + 1, k + 1):
        dn = st.chk[b, i, 1] - st.chk[b, i - 1, 1]
        de = st.chk[b, i, 2] - st.chk[b, i - 1, 2]
        dt = st.chk[b, i, 0] - st.chk[b, i - 1, 0]
        if dt <= 0.0 or dn <= DETECT_SIGMAS * math.sqrt(de):
            return
        rate = dn / dt
        if i > k - DETECT_WINDOWS + 1 and rate < DETECT_RATE_RATIO * last_rate:
            return
        last_rate = rate
    first = k - DETECT_WINDOWS
    st.sys_f[b, T_GROWTH] = (st.chk[b, k, 1] - st.chk[b, first, 1]) / (st.chk[b, k, 0] - st.chk[b, first, 0])
    st.sys_i[b, S_STATUS] = UNSTABLE
