"""The MSJ event loop, compiled once per machine: the transitions that call the policy (arrival, completion, ``run``).

The loop calls the policy through four hooks, each the native address of a kernel compiled on its own
(:mod:`msjgym.core.plug`), passed in as ``hooks = (schedule, on_arrival, on_departure, decide)``: the slots of the
family's contract (:data:`msjgym.systems.msj.contract.KERNELS`, which says when each is called), ``decide`` being a
compiled policy of the user's. An address of 0 is no hook; an agent-driven system
(:mod:`msjgym.systems.msj.control`) passes :data:`NO_HOOKS`. The loop's signature (:func:`signature`) is fixed, so it
is compiled once, cached, and never again for a new policy; the hooks' signatures are
:func:`msjgym.systems.msj.contract.hook_signatures`. The policy-independent transitions and the Python handle are in
:mod:`msjgym.systems.msj.simulation`.

Events: an arrival, the completions at one instant, or (saturated mode) a refill of the backlog; the policy's
``schedule`` runs once after each.
"""
from __future__ import annotations

import functools

import numpy as np
from numba import types

from msjgym.core import histogram, rng
from msjgym.core.jit import njit
from msjgym.core.plug import Ref, call, call_int, ref
from msjgym.systems.msj.contract import HOOKS, record_types
from msjgym.systems.msj.transitions import _checkpoint, _draw_job, _flush, _progress, _record_admission
from msjgym.systems.msj.state import (
    B_NCOMP, B_NDONE, B_SUM_BSLD, B_SUM_T, B_SUM_W, DONE, INVARIANT, J_BATCH, J_CLS, J_ID, J_SIZE, NEED_CAPACITY,
    P_BACKLOG, P_DEBUG, P_LAMBDA, P_NBATCH, P_PREEMPTIVE, P_SATURATED, P_TRACE, RUNNING, S_BATCH, S_ERROR, S_EVENTS, S_MEAS,
    S_NARR, S_NCOMP, S_NEXT_CHK, S_NFREE, S_NJOBS, S_NSERV, S_STATUS, SystemView, T_NEXT_ARR, T_NOW, add_job,
    heap_remove, next_completion_time, remove_job)
from msjgym.systems.msj.state import J_WAIT, P_TAU
from msjgym.systems.msj.trace.arrivals import replay_arrival

NO_HOOKS = (0, 0, 0, 0)
"""The hooks of a system whose decisions are taken from outside (an agent): none."""




@functools.lru_cache(maxsize=1)
def signature() -> dict[str, types.Type]:
    """The explicit signature of each of the loop's entry points (``run``, ``force_arrival``, ``force_completion``),
    and of the invariant checks a debug run calls at an address (``check_invariants``)."""
    return signatures(*record_types())


def signatures(state: types.Type, params: types.Type) -> dict[str, types.Type]:
    """:func:`signature` for the record types ``state`` and ``params`` (a derived family's record)."""
    i, f = types.int64, types.float64
    return {"run": i(state, params, i, i, HOOKS), "force_arrival": i(state, params, i, i, f, HOOKS),
            "force_completion": types.void(state, params, i, i, HOOKS),
            "check_invariants": i(Ref(state), Ref(params), i)}


@njit(inline="always")
def _schedule(hooks, refs, b):
    if hooks[0]:
        call(hooks[0], refs[0], refs[1], b)
    if hooks[3]:
        call(hooks[3], SystemView(refs[0], refs[1], b, refs[2]))


@njit(inline="always")
def _on_arrival(hooks, refs, b, j):
    if hooks[1]:
        call(hooks[1], refs[0], refs[1], b, j)


@njit(inline="always")
def _on_departure(hooks, refs, b, c):
    if hooks[2]:
        call(hooks[2], refs[0], refs[1], b, c)


@njit(inline="always")
def _join(st, pr, b, c, size, batch, ident, hooks, refs):
    """A class-c job of duration ``size`` joins now (measured in ``batch`` if >= 0); returns its slot."""
    j = add_job(st, pr, b, c, size, batch, ident)
    st.sys_i[b, S_NARR] += 1
    _on_arrival(hooks, refs, b, j)
    return j


@njit(inline="always")
def _arrival(st, pr, b, hooks, refs):
    """The next Poisson arrival happens; returns the new job's slot (not yet scheduled)."""
    now = st.sys_f[b, T_NEXT_ARR]
    st.sys_f[b, T_NOW] = now
    i = st.sys_i[b, S_NARR]
    batch = _progress(st, pr, b, i)
    if batch >= pr.ints[P_NBATCH]:
        batch = -1
    if pr.ints[P_TRACE]:
        k, c, size = replay_arrival(st, pr, b, i)  # an episode may start inside the trace
        return _join(st, pr, b, c, size, batch, k, hooks, refs)
    c, size = _draw_job(st, pr, b)
    st.sys_f[b, T_NEXT_ARR] = now + rng.exponential(st.rng, b) / pr.floats[P_LAMBDA]
    return _join(st, pr, b, c, size, batch, np.int64(-1), hooks, refs)


@njit(inline="glue")
def end_event(st, pr, b, joined):
    """Close an event once the decisions at its instant are taken (the policy's ``schedule`` in :func:`run`, the
    agent's actions in :func:`msjgym.systems.msj.control.advance`): the admission record of the job that arrived
    (slot ``joined``, or -1: whether it had to wait), the event count, the instability checkpoint, and the end of the
    run (the last measurement batch closed with no measured job left)."""
    if joined >= 0:
        _record_admission(st, b, joined)
    st.sys_i[b, S_EVENTS] += 1
    if st.sys_i[b, S_EVENTS] >= st.sys_i[b, S_NEXT_CHK]:
        _checkpoint(st, pr, b)
    if st.sys_i[b, S_BATCH] == pr.ints[P_NBATCH] and st.sys_i[b, S_MEAS] == 0:
        st.sys_i[b, S_STATUS] = DONE


@njit(inline="glue")
def end_replay(st, pr, b):
    """Nothing can happen any more (a replayed trace has ended, every job completed): close the measurement and
    finish the run."""
    _flush(st, pr, b, pr.ints[P_NBATCH])
    st.sys_i[b, S_STATUS] = DONE


@njit(inline="always")
def finish_job(st, pr, b, j, hooks, refs):
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
        # the wait is accumulated from differences of event times (exactly 0 for a job that started on arrival),
        # never as a difference of clock sums (completion − arrival − duration is off by ±1e-13 for such a job)
        w = st.job_f[b, j, J_WAIT]
        t = w + st.job_f[b, j, J_SIZE]
        st.bstat[b, mb, c, B_SUM_T] += t
        st.bstat[b, mb, c, B_SUM_W] += w
        st.bstat[b, mb, c, B_NDONE] += 1.0
        st.bstat[b, mb, c, B_SUM_BSLD] += max(1.0, t / max(st.job_f[b, j, J_SIZE], pr.floats[P_TAU]))
        st.hist[b, mb, c, histogram.bin_index(t)] += 1
    ident = st.job_i[b, j, J_ID]
    if ident >= 0:
        st.jobdone[b, ident] = st.sys_f[b, T_NOW]
        st.jobwait[b, ident] = st.job_f[b, j, J_WAIT]
    remove_job(st, pr, b, j)
    st.sys_i[b, S_NCOMP] += 1
    _on_departure(hooks, refs, b, c)


@njit(inline="always")
def _completions(st, pr, b, now, hooks, refs):
    """Complete every job whose completion time is ``now`` (the earliest); does not reschedule."""
    st.sys_f[b, T_NOW] = now
    while next_completion_time(st, b) == now:
        finish_job(st, pr, b, st.heap[b, 0], hooks, refs)


@njit
def run(st, pr, b, max_events, hooks):
    """Advance system b by up to ``max_events`` events; returns its status (RUNNING, DONE, UNSTABLE, ...).

    An event is an arrival, the completions at one instant, or (saturated mode) a refill of the backlog; the
    policy's scheduler runs once after each. In debug mode (``pr.ints[P_DEBUG]``: the address of
    :func:`msjgym.systems.msj.state.check_invariants` compiled for the record by reference, ``check_invariants`` of
    :func:`signature`) the state's invariants are checked after each; called at an address, the checks compile only
    for a debug run, not into every run's loop.
    """
    saturated = pr.ints[P_SATURATED]
    backlog = pr.ints[P_BACKLOG]
    debug = pr.ints[P_DEBUG]
    limit = st.sys_i[b, S_EVENTS] + max_events
    refs = (ref(st), ref(pr), pr.ints[P_PREEMPTIVE] != 0)
    while st.sys_i[b, S_STATUS] == RUNNING and st.sys_i[b, S_EVENTS] < limit:
        joined = -1
        t_completion = next_completion_time(st, b)
        if saturated and st.sys_i[b, S_NJOBS] - st.sys_i[b, S_NSERV] < backlog:
            if st.sys_i[b, S_NFREE] == 0:
                st.sys_i[b, S_STATUS] = NEED_CAPACITY
                break
            c, size = _draw_job(st, pr, b)
            _join(st, pr, b, c, size, np.int64(-1), np.int64(-1), hooks, refs)
        elif t_completion <= st.sys_f[b, T_NEXT_ARR]:
            if t_completion == np.inf:  # nothing can happen any more (a replayed trace has ended)
                end_replay(st, pr, b)
                break
            _completions(st, pr, b, t_completion, hooks, refs)
        elif st.sys_i[b, S_NFREE] == 0:
            st.sys_i[b, S_STATUS] = NEED_CAPACITY
            break
        else:
            joined = _arrival(st, pr, b, hooks, refs)
        _schedule(hooks, refs, b)
        end_event(st, pr, b, joined)
        if debug:
            code = call_int(debug, refs[0], refs[1], b)
            if code:
                st.sys_i[b, S_ERROR] = code
                st.sys_i[b, S_STATUS] = INVARIANT
                break
    return st.sys_i[b, S_STATUS]


@njit
def force_arrival(st, pr, b, c, size, hooks):
    """A class-c job of duration ``size`` arrives at the current time (unmeasured); the policy reacts."""
    refs = (ref(st), ref(pr), pr.ints[P_PREEMPTIVE] != 0)
    j = _join(st, pr, b, c, size, np.int64(-1), np.int64(-1), hooks, refs)
    _schedule(hooks, refs, b)
    return j


@njit
def force_completion(st, pr, b, j, hooks):
    """Job j (in service) completes at the current time; the policy reacts."""
    refs = (ref(st), ref(pr), pr.ints[P_PREEMPTIVE] != 0)
    finish_job(st, pr, b, j, hooks, refs)
    _schedule(hooks, refs, b)
