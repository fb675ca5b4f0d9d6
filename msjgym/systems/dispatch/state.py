"""State layout and O(1) / O(log N) compiled primitives of the large-scale dispatch system.

One system is N servers with per-server FIFO queues; its state is plain data (numpy arrays in a ``DispatchState``
record; index constants name the fields). At N = 10⁵ the state outgrows the CPU caches, so the layout is chosen
to touch few cache lines per event: each server's fields are one 64-byte, cache-line-aligned row (integers through
``srv``, floats through ``srvf``, a float64 view of the same memory: ``V_*`` and ``W_*`` name disjoint columns),
and so is each job's row (``jobi`` / ``jobf``, ``J_*``); the heap's four children of a node share one line.

The primitives, each with its cost per call:

* **Level buckets** (O(1) per ±1 change of a key): servers kept in an array ``order`` sorted by an integer key
  (the dispatcher's estimate e_i; the true queue length q_i when the information model needs the shortest or
  longest queue), with ``start[k]`` = first position of level k. Moving a server one level is one swap with the boundary
  element of its level. A uniformly random server among those with the smallest (largest) key is
  ``order[below(count)]``: O(1), no scan. The number of servers at each queue length is also kept in ``qcnt``
  for the statistics (hot in cache, whatever N).
* **Completion heap** (O(log N)): a 4-ary min-heap of rows (completion time, server): four children share one
  64-byte cache line and a sift touches no other array. Service is non-preemptive FCFS, so each busy server has
  one live entry; job sizes are drawn at arrival, so any size law works and the work in each queue is known
  (``W_PEND``, ``W_CT``). Deletion is lazy: when the central server (pooling information) removes a job in
  service, its entry stays and is discarded when it reaches the top (an entry is live iff its time equals the
  server's ``W_CT``).
* **Idle / busy partition** (O(1)): ``idl`` is a permutation of the servers with the idle ones first
  (``idl[:nidle]``) and the busy ones after: a uniformly random idle server (the idle queue, pull's idle updates)
  or busy server (completions under exponential sizes, below) is one array read.
* **Completions under exponential sizes** (O(1), no heap): every busy server completes at rate speed/E[S], so the
  next completion is a clock of rate speed/E[S] × busy competing with the exogenous clocks, at a uniformly random
  busy server (memorylessness); sizes are then never drawn. Equal speeds only: with per-server speeds
  (``F_SPEEDS``) completions run on the heap.
* **Job pool** (O(1)): a doubly linked FIFO list per server over a preallocated pool of job rows with a free stack
  (LIFO, so recently freed rows, still in cache, are reused first).

Nothing here allocates but the record's constructor (:func:`new_state`); an overflow (a level above ``LCAP`` or more
jobs than rows) sets ``S_STATUS`` and the simulation reruns the replication with larger arrays.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import types

from msjgym.core import rng
from msjgym.core.jit import njit

# ---------------------------------------------------------------- scalar fields
# si[:] (int64)
S_NARR = 0  # jobs arrived so far
S_EVENTS = 1  # events processed (arrival or batch, completion, probe, idle tick, token)
S_STATUS = 2  # RUNNING, DONE, NEED_LEVELS, NEED_JOBS, BAD_SERVER, BAD_SAMPLE
S_NIDLE = 3  # idle servers
S_HEAPN = 4  # heap entries (busy servers, plus stale entries the central server's tokens left)
S_NFREE = 5  # free job rows
S_MEAS = 6  # measured jobs still in system
S_PHASE = 7  # 0 warm-up, 1 measuring, 2 after the window (draining the measured jobs)
S_NDONE = 8  # measured jobs completed
S_MSG = 9  # messages (probes, updates, samples) in the window
S_QORDER = 10  # 1 if the servers are also kept ordered by true queue length (qord/qstart)
S_CLOCKS = 11  # 1: completions by competing clocks (exponential sizes), 0: by the heap
S_BAD = 12  # the invalid value of a BAD_SERVER / BAD_SAMPLE stop
NSI = 13

# sf[:] (float64)
T_NOW = 0
T_EXO = 1  # time of the next exogenous event (arrival, probe, idle tick, token)
T_RATE = 2  # total rate of the exogenous events now
T_WIN0 = 3  # start of the measurement window
T_WIN1 = 4  # end of the measurement window
F_SUMR = 5  # Σ response times of measured jobs
F_SUMR2 = 6  # Σ squared response times of measured jobs
NSF = 7

# srv[i, :] (int64) and its float64 view srvf[i, :]: one 64-byte row (one cache line) per server
V_Q = 0  # true queue length (jobs at the server, including the one in service)
V_E = 1  # dispatcher's estimate (information push, pull: set to V_Q by a probe or an update)
V_POS = 2  # position in the active ordering: qord (information queue-order, pooling) or eord (push, pull)
V_HEAD = 3  # job in service (-1: idle)
V_TAIL = 4  # last job in line
V_IDPOS = 5  # position in idl (idle iff < S_NIDLE)
W_CT = 6  # (float) completion time of the job in service (inf: idle)
W_PEND = 7  # (float) work of the waiting jobs (time units at speed 1)
NV = 8

# jobi[j, :] (int64) and its float64 view jobf[j, :]: one 64-byte row per job
J_NEXT = 0
J_PREV = 1
J_MEAS = 2  # 1 if the job is measured
J_ARR = 3  # (float) arrival time
J_SIZE = 4  # (float) size (work at speed 1)
NJ = 8

RUNNING = 0
DONE = 1
NEED_LEVELS = 2
NEED_JOBS = 3
BAD_SERVER = 4  # the dispatcher returned no server (S_BAD: its value): a compiled dispatcher of the user's
BAD_SAMPLE = 5  # a compiled dispatcher sampled a number of servers outside [1, N] (S_BAD: the number)

DispatchState = namedtuple(
    "DispatchState", "si sf rng srv srvf qord qstart qcnt eord estart idl perm hp jobi jobf jfree area last batch own")
DispatchState.__doc__ = """Mutable state of one dispatch system (reset per replication); ``rng`` is ``uint64[R, 4]``.

``srv[N, NV]`` / ``srvf``: per-server fields (two views of one buffer). ``qord[N]`` / ``qstart[LCAP + 2]``: servers
ordered by queue length (information queue-order, pooling); ``qcnt[LCAP + 1]``: servers per queue length;
``eord`` / ``estart``: servers ordered by estimate (information push, pull); ``idl[N]``: idle/busy partition;
``perm[N]``: a permutation for sampling without replacement; ``hp[H, 2]``: completion heap, rows (time, server);
``jobi[J, NJ]`` / ``jobf``: job rows (two views); ``jfree[J]``: free stack; ``area[LCAP + 1]``: ∫ (servers with
q = k) dt over the window, ``last``: its integration times; ``batch[K]``: the jobs each sampled server
``perm[j]`` receives when a dispatcher places a batch (``BATCH``); ``own[P]``: the dispatcher's own area, sized by
its declaration and zeroed at every reset (:mod:`msjgym.systems.dispatch.contract`).
"""

_I1, _F1, _I2, _F2 = types.int64[::1], types.float64[::1], types.int64[:, ::1], types.float64[:, ::1]
STATE = types.NamedTuple((_I1, _F1, types.uint64[:, ::1], _I2, _F2, _I1, _I1, _I1, _I1, _I1, _I1, _I1, _F2, _I2, _F2,
                          _I1, _F1, _F1, _I1, _I1), DispatchState)
"""numba type of a ``DispatchState`` (every array C-contiguous): the interface the event loop and the dispatchers'
kernels are compiled against (``msjgym.systems.dispatch.loop.RUN``, ``msjgym.systems.dispatch.contract.CHOOSE``)."""


def aligned(rows: int, cols: int, dtype: type, offset: int = 0) -> np.ndarray:
    """An empty ``[rows, cols]`` array whose byte ``offset`` from its start falls on a 64-byte boundary."""
    item = np.dtype(dtype).itemsize
    buf = np.empty(rows * cols * item + 128, dtype=np.uint8)
    start = (offset - buf.ctypes.data) % 64
    return buf[start: start + rows * cols * item].view(dtype).reshape(rows, cols)


def new_state(n: int, jobs: int, levels: int, batch: int, own: int, reps: int, seed: int | None) -> DispatchState:
    """The record of a system of ``n`` servers with room for ``jobs`` jobs and queue lengths up to ``levels``,
    ``batch`` servers per batch, ``own`` cells of the dispatcher's own area, and ``reps`` streams from ``seed``
    (``SeedSequence(seed).spawn(reps)``); :func:`msjgym.systems.dispatch.loop.reset` empties it."""
    i64 = np.int64
    streams, _ = rng.spawn_states(seed, reps)
    srv = aligned(n, NV, i64)
    job = aligned(jobs, NJ, i64)
    return DispatchState(
        si=np.zeros(NSI, dtype=i64), sf=np.zeros(NSF), rng=streams, srv=srv, srvf=srv.view(np.float64),
        qord=np.empty(n, dtype=i64), qstart=np.empty(levels + 2, dtype=i64), qcnt=np.zeros(levels + 1, dtype=i64),
        eord=np.empty(n, dtype=i64), estart=np.empty(levels + 2, dtype=i64),
        idl=np.empty(n, dtype=i64), perm=np.empty(n, dtype=i64),
        hp=aligned(n + jobs, 2, np.float64, offset=16),  # children 4p+1..4p+4 of a node: one cache line
        jobi=job, jobf=job.view(np.float64), jfree=np.empty(jobs, dtype=i64),
        area=np.zeros(levels + 1), last=np.zeros(levels + 1),
        batch=np.zeros(batch, dtype=i64), own=np.zeros(own, dtype=i64))


# ---------------------------------------------------------------- level buckets
@njit(inline="always")
def bucket_up(srv, kc, pc, order, start, i):
    """Move server i from level k to k + 1 of the buckets keyed on column kc (positions in column pc)."""
    k = srv[i, kc]
    p = start[k + 1] - 1
    j = order[p]
    pi = srv[i, pc]
    order[pi] = j
    srv[j, pc] = pi
    order[p] = i
    srv[i, pc] = p
    start[k + 1] = p
    srv[i, kc] = k + 1


@njit(inline="always")
def bucket_down(srv, kc, pc, order, start, i):
    """Move server i from level k >= 1 to k - 1."""
    k = srv[i, kc]
    p = start[k]
    j = order[p]
    pi = srv[i, pc]
    order[pi] = j
    srv[j, pc] = pi
    order[p] = i
    srv[i, pc] = p
    start[k] = p + 1
    srv[i, kc] = k - 1


@njit(inline="always")
def bucket_reset(srv, kc, pc, order, start, n):
    """All n servers at level 0."""
    for i in range(n):
        srv[i, kc] = 0
        srv[i, pc] = i
        order[i] = i
    start[0] = 0
    for k in range(1, start.size):
        start[k] = n


@njit(inline="always")
def bucket_pick_between(order, lo, hi, u):
    """A uniformly random server of ``order[lo:hi]`` (lo < hi; e.g. one level: lo, hi = start[k], start[k + 1])."""
    return order[lo + int(u * (hi - lo))]


@njit(inline="always")
def bucket_pick_min(srv, kc, order, start, u):
    """A server with the smallest key, uniformly among the tied; ``u`` uniform on [0, 1)."""
    k = srv[order[0], kc]
    return bucket_pick_between(order, 0, start[k + 1], u)


@njit(inline="always")
def bucket_pick_max(srv, kc, order, start, n, u):
    """A server with the largest key, uniformly among the tied; ``u`` uniform on [0, 1)."""
    k = srv[order[n - 1], kc]
    return bucket_pick_between(order, start[k], n, u)


# ---------------------------------------------------------------- completion heap (4-ary, lazy deletion)
@njit(inline="always")
def _sift_up(hp, p):
    t = hp[p, 0]
    x = hp[p, 1]
    while p > 0:
        parent = (p - 1) >> 2
        tp = hp[parent, 0]
        if tp <= t:
            break
        hp[p, 0] = tp
        hp[p, 1] = hp[parent, 1]
        p = parent
    hp[p, 0] = t
    hp[p, 1] = x


@njit(inline="always")
def _sift_down(hp, n, p):
    t = hp[p, 0]
    x = hp[p, 1]
    while True:
        c = 4 * p + 1
        if c >= n:
            break
        best = c
        tb = hp[c, 0]
        end = c + 4 if c + 4 <= n else n
        for y in range(c + 1, end):
            if hp[y, 0] < tb:
                best = y
                tb = hp[y, 0]
        if tb >= t:
            break
        hp[p, 0] = tb
        hp[p, 1] = hp[best, 1]
        p = best
    hp[p, 0] = t
    hp[p, 1] = x


@njit(inline="always")
def heap_push(st, i, t):
    """Server i's job in service completes at time t (returns False if the heap is full)."""
    n = st.si[S_HEAPN]
    if n == st.hp.shape[0]:
        return False
    st.si[S_HEAPN] = n + 1
    st.hp[n, 0] = t
    st.hp[n, 1] = i
    _sift_up(st.hp, n)
    return True


@njit(inline="always")
def heap_top(st):
    """(time, server) of the earliest entry (the heap must not be empty)."""
    return st.hp[0, 0], int(st.hp[0, 1])


@njit(inline="always")
def heap_replace_top(st, t):
    """The top server started its next job, which completes at time t."""
    st.hp[0, 0] = t
    _sift_down(st.hp, st.si[S_HEAPN], 0)


@njit(inline="always")
def heap_pop(st):
    """Remove the earliest entry."""
    n = st.si[S_HEAPN] - 1
    st.si[S_HEAPN] = n
    if n > 0:
        st.hp[0, 0] = st.hp[n, 0]
        st.hp[0, 1] = st.hp[n, 1]
        _sift_down(st.hp, n, 0)


# ---------------------------------------------------------------- idle set
@njit(inline="always")
def idle_add(st, i):
    """Busy server i becomes idle: swap it to the front of the busy part of ``idl``."""
    n = st.si[S_NIDLE]
    p = st.srv[i, V_IDPOS]
    j = st.idl[n]
    st.idl[p] = j
    st.srv[j, V_IDPOS] = p
    st.idl[n] = i
    st.srv[i, V_IDPOS] = n
    st.si[S_NIDLE] = n + 1


@njit(inline="always")
def idle_remove(st, i):
    """Idle server i becomes busy: swap it to the back of the idle part of ``idl``."""
    n = st.si[S_NIDLE] - 1
    p = st.srv[i, V_IDPOS]
    j = st.idl[n]
    st.idl[p] = j
    st.srv[j, V_IDPOS] = p
    st.idl[n] = i
    st.srv[i, V_IDPOS] = n
    st.si[S_NIDLE] = n


# ---------------------------------------------------------------- job pool
@njit(inline="always")
def job_alloc(st):
    """A free job row, or -1 when the pool is full."""
    n = st.si[S_NFREE]
    if n == 0:
        return -1
    st.si[S_NFREE] = n - 1
    return st.jfree[n - 1]


@njit(inline="always")
def job_free(st, j):
    n = st.si[S_NFREE]
    st.jfree[n] = j
    st.si[S_NFREE] = n + 1


@njit(inline="always")
def job_unlink(st, i, j):
    """Remove job j from server i's list."""
    a = st.jobi[j, J_PREV]
    c = st.jobi[j, J_NEXT]
    if a >= 0:
        st.jobi[a, J_NEXT] = c
    else:
        st.srv[i, V_HEAD] = c
    if c >= 0:
        st.jobi[c, J_PREV] = a
    else:
        st.srv[i, V_TAIL] = a
