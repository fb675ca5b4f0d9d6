"""The compiled side of a replayed trace: the trace job that arrives next, and where an episode's window starts.

The event loop (:func:`msjgym.systems.msj.loop.run`, through its arrival transition) and the environment's decision
path (:mod:`msjgym.systems.msj.control`: an episode replays a window of the trace) call these. The trace is in the
parameters (:class:`msjgym.systems.msj.state.MSJParams`): ``trace_t`` (arrival times, trace time units), ``trace_c``
(each job's class), ``trace_s`` (durations) and ``trace_e`` (runtime estimates), one entry per job in arrival order;
the state's ``S_TRACE0`` is the index of the job a system's replay starts with (0: the trace's first).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from msjgym.core import rng
from msjgym.core.jit import njit
from msjgym.systems.msj.state import S_NARR, S_TRACE0, T_NEXT_ARR

if TYPE_CHECKING:
    from msjgym.systems.msj.model import MSJModel


def trace_arrays(model: MSJModel) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The parameters' arrays of ``model``'s replayed trace (module docstring): ``trace_t`` (arrival times),
    ``trace_c`` (each job's class: :meth:`~msjgym.systems.msj.model.MSJModel.trace_classes`), ``trace_s`` (durations) and ``trace_e`` (runtime estimates,
    the requested times of :mod:`msjgym.systems.msj.trace.files`), float64 (int64 classes), C-contiguous and
    writeable; all empty without a trace."""
    if model.trace is None:
        return np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0)
    trace = model.trace
    classes = model.trace_classes()
    estimates = np.array(trace.estimate, dtype=np.float64)  # a copy: C-contiguous and writeable
    return trace.arrival.astype(np.float64), classes, trace.duration.astype(np.float64), estimates


@njit(inline="glue")
def replay_arrival(st, pr, b, i):
    """The ``i``-th arrival (0-based) of system b's replay: (its index in the trace, its class, its duration); sets
    the time of the next arrival (inf after the trace's last job)."""
    k = i + st.sys_i[b, S_TRACE0]
    st.sys_f[b, T_NEXT_ARR] = pr.trace_t[k + 1] if k + 1 < pr.trace_t.size else np.inf
    return k, pr.trace_c[k], pr.trace_s[k]


@njit(inline="always")
def first_job(st, pr, b, window):
    """Start system b's replay (at time 0 of an empty system): with ``window`` = M > 0 at a window of M consecutive
    jobs whose first is uniform over the trace's first L − M + 1 (L jobs; one draw from the system's stream), else at
    the trace's first job; sets ``S_TRACE0`` and the first arrival time."""
    first = rng.below(st.rng, b, pr.trace_t.size - window + 1) if window > 0 else 0
    st.sys_i[b, S_TRACE0] = first
    st.sys_f[b, T_NEXT_ARR] = pr.trace_t[first]


@njit(inline="always")
def close_window(st, b, window):
    """After an arrival of system b: once the ``window`` (> 0) jobs of its window have arrived, no other arrives."""
    if 0 < window <= st.sys_i[b, S_NARR]:
        st.sys_f[b, T_NEXT_ARR] = np.inf
