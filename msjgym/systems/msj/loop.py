"""The MSJ event loop: the transitions that call the policy (arrival, completion, the loop ``run``).

This module is a template. As written it is the loop of an agent-driven system (its policy hooks, imported on the
line marked ``POLICY HOOKS``, do nothing; :mod:`msjgym.systems.msj.control` drives it). For a compiled policy,
:mod:`msjgym.systems.msj.specialize` writes a copy of this file whose marked line defines that policy's kernels as
the hooks, so a run compiles its own policy's kernels only, inlined into the loop (numba passes a state record as a
few hundred flattened arguments, so a call per event would cost more than the work). The policy-independent
transitions and the Python handle are in :mod:`msjgym.systems.msj.engine`.

Events: an arrival, the completions at one instant, or (saturated mode) a refill of the backlog; the policy's
``schedule`` runs once after each.
"""
from __future__ import annotations

import numpy as np

from msjgym.core import histogram, rng
from msjgym.core.jit import njit
from msjgym.systems.msj.transitions import _checkpoint, _draw_job, _flush, _progress, _record_admission
from msjgym.systems.msj.state import (
    B_NCOMP, B_NDONE, B_SUM_T, B_SUM_W, DONE, INVARIANT, J_ARR, J_BATCH, J_CLS, J_ID, J_SIZE, NEED_CAPACITY,
    P_BACKLOG, P_DEBUG, P_LAMBDA, P_NBATCH, P_SATURATED, P_TRACE, RUNNING, S_BATCH, S_ERROR, S_EVENTS, S_MEAS,
    S_NARR, S_NCOMP, S_NEXT_CHK, S_NFREE, S_NJOBS, S_NSERV, S_STATUS, T_NEXT_ARR, T_NOW, add_job,
    check_invariants, heap_remove, next_completion_time, remove_job)
from msjgym.systems.msj.hooks import on_arrival, on_departure, schedule, schedule_call  # POLICY HOOKS


@njit(inline="always")
def _join(st, pr, b, c, size, batch, ident):
    """A class-c job of duration ``size`` joins now (measured in ``batch`` if >= 0); returns its slot."""
    j = add_job(st, pr, b, c, size, batch, ident)
    st.sys_i[b, S_NARR] += 1
    on_arrival(st, pr, b, j)
    return j


@njit(inline="always")
def _arrival(st, pr, b):
    """The next Poisson arrival happens; returns the new job's slot (not yet scheduled)."""
    now = st.sys_f[b, T_NEXT_ARR]
    st.sys_f[b, T_NOW] = now
    i = st.sys_i[b, S_NARR]
    batch = _progress(st, pr, b, i)
    if batch >= pr.ints[P_NBATCH]:
        batch = -1
    if pr.ints[P_TRACE]:
        c = pr.trace_c[i]
        size = pr.trace_s[i]
        st.sys_f[b, T_NEXT_ARR] = pr.trace_t[i + 1] if i + 1 < pr.trace_t.size else np.inf
        return _join(st, pr, b, c, size, batch, i)
    c, size = _draw_job(st, pr, b)
    st.sys_f[b, T_NEXT_ARR] = now + rng.exponential(st.rng, b) / pr.floats[P_LAMBDA]
    return _join(st, pr, b, c, size, batch, -1)


@njit(inline="always")
def finish_job(st, pr, b, j):
    """Job j (in service) completes now: record its statistics and remove it (does not reschedule)."""
    heap_remove(st, b, j)
    if pr.ints[P_SATURATED]:
        _progress(st, pr, b, st.sys_i[b, S_NCOMP])
    c = st.job_i[b, j, J_CLS]
    batch = st.sys_i[b, S_BATCH]
    if 0 <= batch < pr.ints[P_NBATCH]:
        st.bstat[b, batch, c, B_NCOMP] += 1.0
    mb = st.job_i[b, j, J_BATCH]
    if mb >= 0:
        t = st.sys_f[b, T_NOW] - st.job_f[b, j, J_ARR]
        st.bstat[b, mb, c, B_SUM_T] += t
        st.bstat[b, mb, c, B_SUM_W] += t - st.job_f[b, j, J_SIZE]
        st.bstat[b, mb, c, B_NDONE] += 1.0
        st.hist[b, mb, c, histogram.bin_index(t)] += 1
    ident = st.job_i[b, j, J_ID]
    if ident >= 0:
        st.jobdone[b, ident] = st.sys_f[b, T_NOW]
    remove_job(st, pr, b, j)
    st.sys_i[b, S_NCOMP] += 1
    on_departure(st, pr, b, c)


@njit(inline="always")
def _completions(st, pr, b, now):
    """Complete every job whose completion time is ``now`` (the earliest); does not reschedule."""
    st.sys_f[b, T_NOW] = now
    while next_completion_time(st, b) == now:
        finish_job(st, pr, b, st.heap[b, 0])


@njit
def run(st, pr, b, max_events):
    """Advance system b by up to ``max_events`` events; returns its status (RUNNING, DONE, UNSTABLE, ...).

    An event is an arrival, the completions at one instant, or (saturated mode) a refill of the backlog; the
    policy's scheduler runs once after each.
    """
    saturated = pr.ints[P_SATURATED]
    backlog = pr.ints[P_BACKLOG]
    debug = pr.ints[P_DEBUG]
    nbatch = pr.ints[P_NBATCH]
    limit = st.sys_i[b, S_EVENTS] + max_events
    while st.sys_i[b, S_STATUS] == RUNNING and st.sys_i[b, S_EVENTS] < limit:
        joined = -1
        t_completion = next_completion_time(st, b)
        if saturated and st.sys_i[b, S_NJOBS] - st.sys_i[b, S_NSERV] < backlog:
            if st.sys_i[b, S_NFREE] == 0:
                st.sys_i[b, S_STATUS] = NEED_CAPACITY
                break
            c, size = _draw_job(st, pr, b)
            _join(st, pr, b, c, size, -1, -1)
        elif t_completion <= st.sys_f[b, T_NEXT_ARR]:
            if t_completion == np.inf:  # nothing can happen any more (a replayed trace has ended)
                _flush(st, pr, b, nbatch)
                st.sys_i[b, S_STATUS] = DONE
                break
            _completions(st, pr, b, t_completion)
        elif st.sys_i[b, S_NFREE] == 0:
            st.sys_i[b, S_STATUS] = NEED_CAPACITY
            break
        else:
            joined = _arrival(st, pr, b)
        schedule(st, pr, b)
        if joined >= 0:
            _record_admission(st, b, joined)
        st.sys_i[b, S_EVENTS] += 1
        if debug:
            code = check_invariants(st, pr, b)
            if code:
                st.sys_i[b, S_ERROR] = code
                st.sys_i[b, S_STATUS] = INVARIANT
                break
        if st.sys_i[b, S_EVENTS] >= st.sys_i[b, S_NEXT_CHK]:
            _checkpoint(st, pr, b)
        if st.sys_i[b, S_BATCH] == nbatch and st.sys_i[b, S_MEAS] == 0:
            st.sys_i[b, S_STATUS] = DONE
    return st.sys_i[b, S_STATUS]


@njit
def force_arrival(st, pr, b, c, size):
    """A class-c job of duration ``size`` arrives at the current time (unmeasured); the policy reacts."""
    j = _join(st, pr, b, c, size, -1, -1)
    schedule_call(st, pr, b)
    return j


@njit
def force_completion(st, pr, b, j):
    """Job j (in service) completes at the current time; the policy reacts."""
    finish_job(st, pr, b, j)
    schedule_call(st, pr, b)
