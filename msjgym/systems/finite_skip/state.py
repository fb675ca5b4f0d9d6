"""The state record of the finite-skip systems: B independent systems (a leading batch axis; one replication is the
batch of one), the field indices of its arrays, and its constructor.

The jobs present sit in arrival order in the first N entries of each per-job array (a completion shifts the younger
jobs down; N is small at the loads studied). The front (Defs. 2.1, 2.2 of Grosof, Harchol-Balter & Scheller-Wolf, "The
finite-skip method for multiserver analysis") is the prefix of the first ``ints[b, I_NF]`` jobs. The event loop
(:mod:`msjgym.systems.finite_skip.loop`) advances it; the decision path of ``msjgym/FiniteSkip-v0``
(:mod:`msjgym.systems.finite_skip.control`) builds an allocation in ``chosen``, ``rates`` and ``taken`` between two of
the loop's steps. No field belongs to a policy: a policy's kernel sees the per-job rows of one system and the scratch
row ``taken``.
"""
from __future__ import annotations

import functools
from collections import namedtuple

import numpy as np
from numba import types

from msjgym.core.jit import njit
from msjgym.core.plug import record_type

# ints[b, :] (int64 scalars per system)
I_N = 0  # jobs present
I_NF = 1  # jobs in the front (the oldest I_NF jobs)
I_SEQ = 2  # arrivals so far
I_DONE = 3  # measured jobs completed
I_EVENTS = 4  # events processed (arrivals and completions)
I_CHOSEN = 5  # decision path: jobs chosen at this epoch
I_FREE = 6  # decision path: idle servers at this epoch (HET: count; THRESHOLD, MSJ: servers)
NI = 7

# flts[b, :] (float64 scalars per system)
F_TIME = 0  # the current time
F_NEXT = 1  # time of the next arrival
F_WORK = 2  # W, the work in system (capacity × time)
F_START = 3  # start of the measured window (the warmup-th arrival; -1 before)
F_STOP = 4  # end of the measured window (the (warmup + jobs)-th arrival; -1 before)
F_DT = 5  # the time the last event advanced
NF = 6

# acc[b, :] (per-replication accumulators)
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
A_EVENTS = 15  # decision epochs (one before each event: arrivals and completions, whole run)
NACC = 16

# rec[b, i, :] (per measured job i)
R_ARR = 0
R_FRONT = 1  # time it entered the front
R_DONE = 2
R_SIZE = 3
R_WA = 4  # work in system seen at arrival (excluding itself)
R_WFF = 5  # work in the front, of jobs older than it, when it entered the front
NREC = 6

FiniteSkipState = namedtuple(
    "FiniteSkipState", "ints flts acc rec cls srv seqs rem arr wa wff fent sz rates chosen taken rng")
FiniteSkipState.__doc__ = """Mutable state of B independent finite-skip systems (numpy arrays, leading batch axis B).

``ints[B, NI]``, ``flts[B, NF]``: the scalars (I_*, F_*); ``acc[B, NACC]``: the accumulators (A_*); ``rec[B, J, NREC]``:
per measured job (R_*; J = 0 on the decision path, which measures nothing). Per job present, in arrival order
(``[B, C]``, C the capacity): ``cls`` class, ``srv`` server held (heterogeneous M/G/k; -1: none), ``seqs`` arrival
number, ``rem`` remaining size, ``arr`` arrival time, ``wa`` work in system at its arrival, ``wff`` work in the front
older than it when it entered the front, ``fent`` when it entered the front (-1: not yet), ``sz`` size, ``rates``
the epoch's rates (fractions of the capacity), ``chosen`` (decision path) chosen at this epoch. ``taken[B, T]``
(T = max(k, distinct thresholds)): scratch of the policy's kernel, of the front rule, and of the decision path (the
servers taken). ``rng[B, 4]``: each system's random stream (:mod:`msjgym.core.rng`).
"""

System = namedtuple("System", FiniteSkipState._fields)
System.__doc__ = """One system of a :class:`FiniteSkipState` (:func:`system`): the same fields, each its row b
(``rng`` a [1, 4] view, so a policy's kernel draws from row 0)."""


def new_state(num: int, servers: int, levels: int, capacity: int, jobs: int = 0) -> FiniteSkipState:
    """The state of ``num`` empty systems with room for ``capacity`` jobs present and ``jobs`` measured jobs each
    (``levels``: the distinct thresholds or needs); random streams unseeded (all ones: seed them with
    :func:`msjgym.core.rng.seed_states`)."""
    cap = (num, capacity)
    return FiniteSkipState(
        ints=np.zeros((num, NI), np.int64), flts=np.zeros((num, NF)), acc=np.zeros((num, NACC)),
        rec=np.full((num, jobs, NREC), np.nan), cls=np.zeros(cap, np.int64), srv=np.full(cap, -1, np.int64),
        seqs=np.zeros(cap, np.int64), rem=np.zeros(cap), arr=np.zeros(cap), wa=np.zeros(cap), wff=np.zeros(cap),
        fent=np.zeros(cap), sz=np.zeros(cap), rates=np.zeros(cap), chosen=np.zeros(cap, np.bool_),
        taken=np.zeros((num, max(servers, levels)), np.int64), rng=np.ones((num, 4), np.uint64))


@functools.lru_cache(maxsize=1)
def state_type() -> types.Type:
    """The numba type of the state record (every array C-contiguous)."""
    return record_type(new_state(1, 1, 1, 1, 1))


@njit(inline="glue")
def system(st, b):
    """System b of the record ``st``: a :class:`System` of row views."""
    return System(st.ints[b], st.flts[b], st.acc[b], st.rec[b], st.cls[b], st.srv[b], st.seqs[b], st.rem[b],
                  st.arr[b], st.wa[b], st.wff[b], st.fent[b], st.sz[b], st.rates[b], st.chosen[b], st.taken[b],
                  st.rng[b:b + 1])


def rows(st: FiniteSkipState, b: int) -> System:
    """System b of the record ``st``, from Python: :func:`system` run as plain Python (the same row views)."""
    return system.py_func(st, b)


@functools.lru_cache(maxsize=1)
def system_type() -> types.Type:
    """The numba type of one system's rows (:class:`System`)."""
    return record_type(rows(new_state(1, 1, 1, 1, 1), 0))
