"""The compiled scheduler: calls the kernel of the policy whose id is in ``params.ints[P_POLICY]``.

The event loop calls ``on_arrival`` after a job joins, ``on_departure`` after a job leaves, and ``schedule``
after every event; together they decide which jobs are in service. These are inlined into the event loop (numba
passes a state record as a few hundred flattened arguments, so a call per event would cost more than the work);
the heavy kernels (ServerFilling-divisible, MaxWeight) stay ordinary calls.
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.msj.state import P_POLICY

from . import fcfs, first_fit, maxweight, need_priority, server_filling

_SF = server_filling.KERNEL_ID


@njit(inline="always")
def schedule(st, pr, b):
    """Update the set of jobs in service of system b after an event."""
    p = pr.ints[P_POLICY]
    if p == fcfs.KERNEL_ID:
        fcfs.schedule(st, pr, b)
    elif p == first_fit.KERNEL_ID:
        first_fit.schedule(st, pr, b)
    elif p == first_fit.PREEMPTIVE_KERNEL_ID:
        first_fit.schedule_preemptive(st, pr, b)
    elif p == need_priority.MSF_ID:
        need_priority.schedule_preemptive(st, pr, b, True)
    elif p == need_priority.LSF_ID:
        need_priority.schedule_preemptive(st, pr, b, False)
    elif p == need_priority.MSF_NP_ID:
        need_priority.schedule_nonpreemptive(st, pr, b, True)
    elif p == need_priority.LSF_NP_ID:
        need_priority.schedule_nonpreemptive(st, pr, b, False)
    elif p == _SF:
        server_filling.schedule(st, pr, b)
    elif p == server_filling.DIVISIBLE_KERNEL_ID:
        server_filling.schedule_divisible(st, pr, b)
    elif p == maxweight.KERNEL_ID:
        maxweight.schedule(st, pr, b)


@njit
def schedule_call(st, pr, b):
    """``schedule`` as a plain call (for callers outside the event loop, so the loop keeps the only inline copy)."""
    schedule(st, pr, b)


@njit(inline="always")
def on_arrival(st, pr, b, j):
    """Policy bookkeeping when job j joins system b (before ``schedule``)."""
    if pr.ints[P_POLICY] == _SF:
        server_filling.front_on_arrival(st, pr, b, j)


@njit(inline="always")
def on_departure(st, pr, b, c):
    """Policy bookkeeping when a class-c job leaves system b (before ``schedule``)."""
    if pr.ints[P_POLICY] == _SF:
        server_filling.front_on_departure(st, pr, b, c)
