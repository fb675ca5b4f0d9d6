"""The policy hooks of an event loop in which no compiled policy decides (an agent does, through ``control``).

:mod:`msjgym.systems.msj.loop` calls ``on_arrival`` after a job joins, ``on_departure`` after a job leaves and
``schedule`` after every event. Here they do nothing; the loop compiled for a policy
(:mod:`msjgym.systems.msj.specialize`) replaces them with that policy's kernels.
"""
from __future__ import annotations

from msjgym.core.jit import njit


@njit(inline="always")
def schedule(st, pr, b):
    """Update the set of jobs in service of system b after an event (here: leave it to the agent)."""


@njit
def schedule_call(st, pr, b):
    """``schedule`` as a plain call, for callers outside the event loop."""
    schedule(st, pr, b)


@njit(inline="always")
def on_arrival(st, pr, b, j):
    """Policy bookkeeping when job j joins system b (before ``schedule``)."""


@njit(inline="always")
def on_departure(st, pr, b, c):
    """Policy bookkeeping when a class-c job leaves system b (before ``schedule``)."""
