"""State layout and O(1) / O(log N) compiled primitives of the large-scale dispatch system.

One system is N servers with per-server FIFO queues; its state is plain data (numpy arrays in a ``DispatchState``
record; index constants name the fields of the scalar arrays). The primitives, each with its cost per call:

* **Level buckets** (O(1) per ±1 change of a key): the servers are kept in an array ``order`` sorted by an integer
  key (true queue length, or the dispatcher's estimate), with ``start[k]`` = first position of level k. Moving a
  server one level up or down is one swap with the boundary element of its level. A uniformly random server among
  those with the smallest (largest) key is ``order[below(count)]`` — O(1), no scan. Counts per level are
  ``start[k + 1] - start[k]``, so the time-average queue-length distribution costs nothing extra.
* **Completion heap** (O(log N)): busy servers in a 4-ary min-heap keyed on the completion time of the job in
  service (service is non-preemptive FCFS, so one completion time per busy server; sizes are drawn at arrival, so
  any law works and the work in each queue is known, for least-loaded-of-d).
* **Idle set** (O(1)): idle servers in an array with positions, for JIQ and pull's idle-server update clocks.
* **Job pool** (O(1)): a doubly linked FIFO list per server over a preallocated pool of job slots with a free stack.

Nothing here allocates; an overflow (a level above ``LCAP`` or more jobs than slots) sets ``S_STATUS`` and the
engine reruns the replication with larger arrays.
"""
from __future__ import annotations

from collections import namedtuple

from msjgym.core.jit import njit

# ---------------------------------------------------------------- scalar fields
# si[:] (int64)
S_NARR = 0  # jobs arrived so far
S_EVENTS = 1  # events processed (arrival or batch, completion, probe, idle tick, token)
S_STATUS = 2  # RUNNING, DONE, NEED_LEVELS, NEED_JOBS
S_NIDLE = 3  # idle servers
S_HEAPN = 4  # busy servers (heap size)
S_NFREE = 5  # free job slots
S_MEAS = 6  # measured jobs still in system
S_PHASE = 7  # 0 warm-up, 1 measuring, 2 after the window (draining the measured jobs)
S_NDONE = 8  # measured jobs completed
S_MSG = 9  # messages (probes, updates, samples) in the window
S_RR = 10  # round-robin pointer
S_NSTAMP = 11  # (unused, reserved)
NSI = 12

# sf[:] (float64)
T_NOW = 0
T_EXO = 1  # time of the next exogenous event (arrival, probe, idle tick, token)
T_RATE = 2  # total rate of the exogenous events now
T_WIN0 = 3  # start of the measurement window
T_WIN1 = 4  # end of the measurement window
F_SUMR = 5  # Σ response times of measured jobs
F_SUMR2 = 6  # Σ squared response times of measured jobs
NSF = 7

RUNNING = 0
DONE = 1
NEED_LEVELS = 2
NEED_JOBS = 3

DispatchState = namedtuple(
    "DispatchState",
    "si sf rng "
    "qkey qord qpos qstart ekey eord epos estart "
    "head tail ct wpend idl idpos perm hs ht hpos "
    "jnext jprev jarr jsize jmeas jfree area last wfh wfl")
DispatchState.__doc__ = """Mutable state of one dispatch system (reset for each replication); ``rng`` is ``uint64[R, 4]``.

Per server (length N): ``qkey/qord/qpos`` true queue lengths in level buckets (``qstart[LCAP + 2]``),
``ekey/eord/epos/estart`` the dispatcher's estimates in level buckets (push, pull), ``head/tail`` FIFO list ends
(-1: empty), ``ct`` completion time of the job in service (inf: idle), ``wpend`` work of the waiting jobs (time
units at speed 1), ``idl/idpos`` idle set, ``perm`` a permutation for sampling without replacement, ``hs/hpos``
completion heap (servers, and their completion times inline) and each server's heap position (-1: idle). Per job slot (length J): ``jnext/jprev``
links, ``jarr`` arrival time, ``jsize`` size (work), ``jmeas`` 1 if measured, ``jfree`` free-slot stack. Per level
(LCAP + 1): ``area`` ∫ (servers with q = k) dt over the window, ``last`` integration time. Water-filling scratch:
``wfh[M + 1]``, ``wfl[K]``.
"""


# ---------------------------------------------------------------- level buckets
@njit(inline="always")
def bucket_up(key, order, pos, start, i):
    """Move server i from level k to k + 1 (caller checks k + 1 <= LCAP)."""
    k = key[i]
    p = start[k + 1] - 1
    j = order[p]
    pi = pos[i]
    order[pi] = j
    pos[j] = pi
    order[p] = i
    pos[i] = p
    start[k + 1] = p
    key[i] = k + 1


@njit(inline="always")
def bucket_down(key, order, pos, start, i):
    """Move server i from level k >= 1 to k - 1."""
    k = key[i]
    p = start[k]
    j = order[p]
    pi = pos[i]
    order[pi] = j
    pos[j] = pi
    order[p] = i
    pos[i] = p
    start[k] = p + 1
    key[i] = k - 1


@njit(inline="always")
def bucket_count(start, k):
    """Servers at level k."""
    return start[k + 1] - start[k]


@njit(inline="always")
def bucket_reset(key, order, pos, start, n):
    """All n servers at level 0."""
    for i in range(n):
        key[i] = 0
        order[i] = i
        pos[i] = i
    start[0] = 0
    for k in range(1, start.size):
        start[k] = n


# ---------------------------------------------------------------- completion heap (4-ary, keys inline)
ARITY = 4  # 4 children of 8-byte keys share a cache line; half the depth of a binary heap


@njit(inline="always")
def _sift_up(hs, ht, hpos, p):
    i = hs[p]
    t = ht[p]
    while p > 0:
        parent = (p - 1) >> 2
        tp = ht[parent]
        if tp <= t:
            break
        j = hs[parent]
        hs[p] = j
        ht[p] = tp
        hpos[j] = p
        p = parent
    hs[p] = i
    ht[p] = t
    hpos[i] = p


@njit(inline="always")
def _sift_down(hs, ht, hpos, n, p):
    i = hs[p]
    t = ht[p]
    while True:
        c = 4 * p + 1
        if c >= n:
            break
        best = c
        tb = ht[c]
        end = c + 4 if c + 4 <= n else n
        for x in range(c + 1, end):
            if ht[x] < tb:
                best = x
                tb = ht[x]
        if tb >= t:
            break
        j = hs[best]
        hs[p] = j
        ht[p] = tb
        hpos[j] = p
        p = best
    hs[p] = i
    ht[p] = t
    hpos[i] = p


@njit(inline="always")
def heap_push(st, i, t):
    """Server i becomes busy; its job completes at time t."""
    n = st.si[S_HEAPN]
    st.si[S_HEAPN] = n + 1
    st.hs[n] = i
    st.ht[n] = t
    _sift_up(st.hs, st.ht, st.hpos, n)


@njit(inline="always")
def heap_replace_top(st, t):
    """The top server started its next job, which completes at time t."""
    st.ht[0] = t
    _sift_down(st.hs, st.ht, st.hpos, st.si[S_HEAPN], 0)


@njit(inline="always")
def heap_remove(st, i):
    """Server i leaves the heap (it became idle)."""
    p = st.hpos[i]
    last = st.si[S_HEAPN] - 1
    st.si[S_HEAPN] = last
    st.hpos[i] = -1
    if p == last:
        return
    moved = st.hs[last]
    t = st.ht[last]
    st.hs[p] = moved
    st.ht[p] = t
    st.hpos[moved] = p
    if p > 0 and t < st.ht[(p - 1) >> 2]:
        _sift_up(st.hs, st.ht, st.hpos, p)
    else:
        _sift_down(st.hs, st.ht, st.hpos, last, p)


# ---------------------------------------------------------------- idle set
@njit(inline="always")
def idle_add(st, i):
    n = st.si[S_NIDLE]
    st.idl[n] = i
    st.idpos[i] = n
    st.si[S_NIDLE] = n + 1


@njit(inline="always")
def idle_remove(st, i):
    n = st.si[S_NIDLE] - 1
    p = st.idpos[i]
    j = st.idl[n]
    st.idl[p] = j
    st.idpos[j] = p
    st.idpos[i] = -1
    st.si[S_NIDLE] = n


# ---------------------------------------------------------------- job pool
@njit(inline="always")
def job_alloc(st):
    """A free job slot, or -1 when the pool is full."""
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
    a = st.jprev[j]
    c = st.jnext[j]
    if a >= 0:
        st.jnext[a] = c
    else:
        st.head[i] = c
    if c >= 0:
        st.jprev[c] = a
    else:
        st.tail[i] = a
