"""State layout and compiled transitions of the multiserver-job (MSJ) system.

State is plain data: a few numpy arrays with a leading batch axis B (independent systems that advance together;
one simulation is the batch of one). Index constants name the fields of each array.

Jobs of each class form a doubly linked list in arrival order. Every built-in policy keeps, within each class,
the jobs in service as a *prefix* of that list (the oldest ``x_c`` class-c jobs are the ones served), so a
policy is fully described by per-class target counts, and ``C_BOUND`` points at the first waiting job of the class.
Starting a job takes the first waiting job of its class; preempting takes the youngest served one
(preempt-resume: its remaining duration is kept). Job-level policies (any order of jobs, across classes) start and
preempt any job with ``start_job`` / ``preempt_job`` / ``kill_job``, which relink it so that the served jobs stay a
prefix of the class's list (in the order they started) and the waiting jobs stay in arrival order. Jobs in service sit in a binary heap keyed on completion time
(ties: older job first), so general duration laws need no event calendar beyond it.

Time-average statistics are integrated lazily per class (an area is updated only when a class's counts change).
"""
from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable

import numpy as np

from numba import types
from numba.extending import lower_builtin, type_callable

from msjgym.core import rng as _rng
from msjgym.core.jit import njit

# ---------------------------------------------------------------- state fields
# sys_i[b, :] (int64 scalars per system)
S_NJOBS = 0  # jobs in system
S_NSERV = 1  # jobs in service
S_BUSY = 2  # busy servers
S_SEQ = 3  # next arrival sequence number
S_NARR = 4  # jobs generated so far (arrivals, or backlog refills in saturated mode)
S_NCOMP = 5  # completions so far
S_EVENTS = 6  # events processed (arrivals + completions)
S_HEAPN = 7  # heap size (== S_NSERV)
S_NFREE = 8  # free job slots
S_BATCH = 9  # current measurement batch: -1 during warm-up, NB after the window
S_MEAS = 10  # measured jobs still in system
S_STATUS = 11  # RUNNING, DONE, UNSTABLE, NEED_CAPACITY, INVARIANT
S_NCHK = 12  # checkpoints recorded (instability detector)
S_NEXT_CHK = 13  # event count of the next checkpoint
S_ERROR = 14  # debug: code of the violated invariant
S_NEED = 15  # Σ need over the jobs in system (waiting or not)
S_ERRARG = 16  # the value a compiled policy of the user's passed in its invalid decision
S_TRACE0 = 17  # a replayed trace: index of the trace job that arrives first (0: the trace's first; msjgym/MSJ-v0's
#                trace_windows episodes start at a random one, msjgym.systems.msj.control.reset_system)
NSI = 18

# sys_f[b, :] (float64 scalars per system)
T_NOW = 0  # current time
T_NEXT_ARR = 1  # time of the next arrival (inf in saturated mode)
T_BATCH = 2  # start time of the current batch
T_GROWTH = 3  # growth rate of the number in system when flagged unstable (jobs per unit time)
T_NEED = 4  # time up to which the high-occupancy area is integrated
T_AREA_HIGH = 5  # ∫ 1{S_NEED > servers − max need} dt since the last flush
NSF = 6

# cls_i[b, c, :]
C_HEAD = 0  # oldest class-c job (-1: none)
C_TAIL = 1  # youngest class-c job
C_BOUND = 2  # first waiting class-c job (-1: none waiting)
C_N = 3  # class-c jobs in system
C_X = 4  # class-c jobs in service
NCI = 5

# cls_f[b, c, :]
C_LAST = 0  # time up to which the class's areas are integrated
C_AREA_N = 1  # ∫ (class-c jobs in system) dt since the last flush
C_AREA_X = 2  # ∫ (class-c jobs in service) dt since the last flush
C_AREA_DEF = 3  # ∫ (offered_c − need_c · class-c jobs in system)^+ dt since the last flush
NCF = 4

# job_i[b, j, :]
J_CLS = 0
J_SEQ = 1
J_NEXT = 2  # next (younger) job of the same class, -1 if none
J_PREV = 3  # previous (older) job of the same class, -1 if none
J_HPOS = 4  # position in the heap when in service, -1 when waiting
J_BATCH = 5  # measurement batch of the job's arrival, -1 if not measured
J_ID = 6  # index of the job in a replayed trace (-1 otherwise)
NJI = 7  # job_i[b, j, NJI:]: the running policy's own per-job ints (-1 for a new job; msjgym.systems.msj.contract)

# job_f[b, j, :]
J_ARR = 0  # arrival time
J_SIZE = 1  # service duration (time units, holding `need` servers)
J_REM = 2  # remaining duration at the last start (or preemption)
J_START = 3  # time of the last start
J_DONE = 4  # completion time while in service
J_EST = 5  # the scheduler's runtime estimate of the whole duration (>= J_SIZE unless the scenario allows less)
J_WAIT = 6  # time spent not being served usefully before the current waiting spell (waiting, and the lost service of
#             a killed run); the job's wait is this when it completes, exactly 0 if it started on arrival
J_IDLE = 7  # when the current waiting spell began (the arrival, the last preemption or kill)
NJF = 8  # job_f[b, j, NJF:]: the running policy's own per-job floats (+inf for a new job)

# bstat[b, batch, c, :] (per measurement batch and class)
B_SUM_T = 0  # sum of response times of measured jobs that completed
B_SUM_W = 1  # sum of waiting times (response − duration)
B_NDONE = 2  # measured jobs completed
B_NARR = 3  # measured arrivals
B_NQUEUED = 4  # measured arrivals that did not start service at once
B_AREA_N = 5  # ∫ jobs in system dt over the batch
B_AREA_X = 6  # ∫ jobs in service dt over the batch
B_NCOMP = 7  # completions during the batch (any job)
B_AREA_DEF = 8  # ∫ (offered servers − servers needed by the class's jobs)^+ dt (zero-queueing Lemma 5.4)
B_SUM_BSLD = 9  # sum of bounded slowdowns max(1, response / max(duration, τ)) of measured jobs that completed
NBS = 10

# bsys[b, batch, :] (per measurement batch, whole system)
BS_TIME = 0  # measured time of the batch
BS_AREA_HIGH = 1  # ∫ 1{jobs present need more than servers − max need} dt (zero-queueing eq. (3))
NBSYS = 2

# statuses
RUNNING = 0
DONE = 1
UNSTABLE = 2
NEED_CAPACITY = 3
INVARIANT = 4

# control modes of an environment (msjgym.systems.msj.control)
MODE_START = 0  # non-preemptive: start one waiting job, or wait
MODE_SET = 1  # preemptive: choose the set of jobs in service
MODE_QUEUE = 2  # msjgym/JobScheduling-v0: a decision epoch whenever a job waits (msjgym.systems.msj.job_control)

# params.ints[:]
P_SERVERS = 0
P_K = 1
P_POLICY = 2  # unused (kept so the other indices stay put)
P_SATURATED = 3
P_BACKLOG = 4
P_WARMUP = 5
P_JOBS = 6
P_NBATCH = 7
P_DEBUG = 8  # debug mode: the address of the invariant checks compiled for the record (0: off; see loop.run)
P_GROUPS = 9
P_DETECT = 10  # instability detection on/off
P_MMAX = 11  # largest need
P_TRACE = 12  # arrivals replay params.trace_t/trace_c/trace_s
P_ARG = 13  # the policy's parameters, in the order of its declaration's params: ints[P_ARG + i] (integer ones)
NARG = 4  # room for this many policy parameters
P_EST = P_ARG + NARG  # how runtime estimates are made: EST_EXACT, EST_FACTOR, EST_UNIFORM, EST_TRACE
P_PREEMPTIVE = P_EST + 1  # the policy is declared preemptive (a compiled policy of the user's may preempt)
NPI = P_PREEMPTIVE + 1

# params.floats[:]
P_LAMBDA = 0
P_FARG = 1  # the policy's parameters as reals: floats[P_FARG + i]
P_EST_LOW = P_FARG + NARG  # estimate factor (EST_FACTOR), or the low end of its uniform law (EST_UNIFORM)
P_EST_HIGH = P_EST_LOW + 1  # the high end of the factor's uniform law (EST_UNIFORM)
P_TAU = P_EST_HIGH + 1  # the bounded slowdown's threshold τ (time units; Feitelson et al. 1997)
P_T0 = P_TAU + 1  # a replayed trace's submit time (SWF field 2) at time 0 of the run: job time + P_T0 = submit time
NPF = P_T0 + 1

# runtime estimate laws (params.ints[P_EST]); see msjgym.systems.msj.model.EstimateLaw
EST_EXACT = 0  # estimate = duration
EST_FACTOR = 1  # estimate = factor · duration
EST_UNIFORM = 2  # estimate = f · duration, f ~ Uniform[low, high] drawn from the estimate stream ``erng``
EST_TRACE = 3  # estimate = a replayed trace's requested time (params.trace_e)

MSJState = namedtuple(
    "MSJState", "sys_i sys_f cls_i cls_f job_i job_f heap slots rng scratch bstat bsys hist chk jobdone jobwait jobest "
                "erng own_i own_f")
MSJState.__doc__ = """Mutable state of B independent MSJ systems (numpy arrays with a leading batch axis).

``scratch[B, 3K]``: the kernels' working area (per-class targets of ``apply_targets`` in [0, K), walk pointers in
[K, 2K), a per-class flag in [2K, 3K)), overwritten by any kernel during its call. ``erng[B, 4]``: the
runtime-estimate stream (xoshiro256**), used only by a random estimate law; seeded at each system's first job from a
hash of the job stream's state (which it does not advance; see ``seed_estimate_stream``). ``own_i[B, NI]``,
``own_f[B, NF]``, and the per-job columns ``job_i[..., NJI:]``, ``job_f[..., NJF:]``: the running policy's own state,
sized by its declaration (:class:`OwnArea`; :mod:`msjgym.systems.msj.contract` says how a policy declares it).
"""

OwnArea = namedtuple("OwnArea", "ints floats job_ints job_floats")
OwnArea.__doc__ = """How large the running policy's own areas of the record are: ``own_i[b]`` and ``own_f[b]`` entries
per system, and int64 / float64 entries per job after the system's own fields."""

NO_AREA = OwnArea(0, 0, 0, 0)

MSJParams = namedtuple(
    "MSJParams",
    "ints floats need offered cumprob dkind dstart ddata grp_need grp_ptr grp_cls trace_t trace_c trace_s trace_e")
MSJParams.__doc__ = """Read-only parameters shared by the B systems.

need[K], offered[K] (λ_c·need_c·E[S_c], the servers class c occupies on average), cumprob[K] (cumulative class
probabilities), dkind/dstart/ddata (encoded duration laws), and need groups
(classes with equal need, groups ordered by decreasing need): grp_need[G], and group g's classes
grp_cls[grp_ptr[g]:grp_ptr[g + 1]]; a replayed trace's arrival times, classes, durations and runtime estimates
trace_t/c/s/e[L] (empty without a trace).
"""

SystemView = namedtuple("SystemView", "st pr b preemptive")
SystemView.__doc__ = ("One system of a batch, as a compiled policy of the user's sees it (read it through the functions of "
                      "msjgym.systems.msj.compiled).")

INF = np.inf


# ---------------------------------------------------------------- a derived family's vector accounting
RESOURCE_FIELDS = ("res_used", "res_node")
"""The fields of a record that carries resource vectors (``msjgym.systems.multi_resource.state``): ``res_used[B, N,
R]`` (the amounts held on each of N nodes) and ``res_node[B, J]`` (the node job j is placed on); its parameters carry
``res_demand[K, R]``. MSJ's own record has neither: :func:`hold_resources` is then nothing."""


def _carries_resources(record) -> bool:
    record = getattr(record, "record", record)  # a record by reference (msjgym.core.plug.Ref) reads like the record
    return all(name in getattr(record, "fields", ()) for name in RESOURCE_FIELDS)


def hold_resources(st, pr, b, j, c, sign):
    """Job j (class c) takes (``sign`` = 1) or gives back (-1) its demand vector on its node, in a record that
    carries resource vectors (:data:`RESOURCE_FIELDS`); called where the servers are counted (``start_next``,
    ``preempt_last``, ``remove_job``). Compiled by record type: for MSJ's own record it is no code at all
    (:func:`_by_record`)."""


def _hold(st, pr, b, j, c, sign):
    node = st.res_node[b, j]
    for r in range(pr.res_demand.shape[1]):
        st.res_used[b, node, r] += sign * pr.res_demand[c, r]


def resource_violation(st, pr, b):
    """Debug mode, a record carrying resource vectors: 8 if a node holds more than its capacity of a resource or a
    negative amount, else 0 (always 0 for MSJ's own record)."""


def _violation(st, pr, b):
    for node in range(st.res_used.shape[1]):
        for r in range(st.res_used.shape[2]):
            if st.res_used[b, node, r] > pr.res_cap[r] or st.res_used[b, node, r] < 0:
                return 8
    return 0


def _by_record(stub, impl, typer, absent) -> None:
    """Make ``stub`` callable from compiled code: ``impl``'s code, compiled into the caller, for a record that
    carries resource vectors; for any other record (MSJ's own) the constant ``absent`` (None: nothing), with nothing
    compiled. (An ``@overload`` would compile a function of its own per record type even for the empty case, and
    inline it in every caller: about 0.4 s of CPU on the MSJ event loop's first compile.) ``typer``: the stub's
    arguments to its result type."""

    @type_callable(stub)
    def _type(context):
        return typer

    @lower_builtin(stub, types.VarArg(types.Any))
    def _lower(context, builder, sig, args):
        if _carries_resources(sig.args[0]):
            return context.compile_internal(builder, impl, sig, args)
        return context.get_dummy_value() if absent is None else context.get_constant(sig.return_type, absent)


_by_record(hold_resources, _hold, lambda st, pr, b, j, c, sign: types.none, None)
_by_record(resource_violation, _violation, lambda st, pr, b: types.int64, 0)


# ---------------------------------------------------------------- lazy integration
@njit(inline="always")
def touch(st, pr, b, c):
    """Integrate class c's counts up to now (call before changing C_N or C_X)."""
    now = st.sys_f[b, T_NOW]
    dt = now - st.cls_f[b, c, C_LAST]
    if dt > 0.0:
        n_c = st.cls_i[b, c, C_N]
        st.cls_f[b, c, C_AREA_N] += n_c * dt
        st.cls_f[b, c, C_AREA_X] += st.cls_i[b, c, C_X] * dt
        deficit = pr.offered[c] - pr.need[c] * n_c
        if deficit > 0.0:
            st.cls_f[b, c, C_AREA_DEF] += deficit * dt
    st.cls_f[b, c, C_LAST] = now


@njit(inline="always")
def touch_need(st, pr, b):
    """Integrate the high-occupancy indicator up to now (call before changing S_NEED)."""
    now = st.sys_f[b, T_NOW]
    if st.sys_i[b, S_NEED] > pr.ints[P_SERVERS] - pr.ints[P_MMAX]:
        st.sys_f[b, T_AREA_HIGH] += now - st.sys_f[b, T_NEED]
    st.sys_f[b, T_NEED] = now


# ---------------------------------------------------------------- completion-time heap
@njit(inline="always")
def _before(st, b, i, j):
    """Does job i complete before job j (older first on equal times)?"""
    di = st.job_f[b, i, J_DONE]
    dj = st.job_f[b, j, J_DONE]
    return di < dj or (di == dj and st.job_i[b, i, J_SEQ] < st.job_i[b, j, J_SEQ])


@njit(inline="always")
def _sift_up(st, b, pos):
    h = st.heap
    j = h[b, pos]
    while pos > 0:
        parent = (pos - 1) >> 1
        p = h[b, parent]
        if not _before(st, b, j, p):
            break
        h[b, pos] = p
        st.job_i[b, p, J_HPOS] = pos
        pos = parent
    h[b, pos] = j
    st.job_i[b, j, J_HPOS] = pos


@njit(inline="always")
def _sift_down(st, b, pos):
    h = st.heap
    n = st.sys_i[b, S_HEAPN]
    j = h[b, pos]
    while True:
        child = 2 * pos + 1
        if child >= n:
            break
        if child + 1 < n and _before(st, b, h[b, child + 1], h[b, child]):
            child += 1
        cj = h[b, child]
        if not _before(st, b, cj, j):
            break
        h[b, pos] = cj
        st.job_i[b, cj, J_HPOS] = pos
        pos = child
    h[b, pos] = j
    st.job_i[b, j, J_HPOS] = pos


@njit(inline="always")
def heap_push(st, b, j):
    pos = st.sys_i[b, S_HEAPN]
    st.sys_i[b, S_HEAPN] = pos + 1
    st.heap[b, pos] = j
    _sift_up(st, b, pos)


@njit(inline="always")
def heap_remove(st, b, j):
    pos = st.job_i[b, j, J_HPOS]
    last = st.sys_i[b, S_HEAPN] - 1
    st.sys_i[b, S_HEAPN] = last
    st.job_i[b, j, J_HPOS] = -1
    if pos == last:
        return
    moved = st.heap[b, last]
    st.heap[b, pos] = moved
    st.job_i[b, moved, J_HPOS] = pos
    if pos > 0 and _before(st, b, moved, st.heap[b, (pos - 1) >> 1]):
        _sift_up(st, b, pos)
    else:
        _sift_down(st, b, pos)


@njit(inline="always")
def next_completion_time(st, b):
    if st.sys_i[b, S_HEAPN] == 0:
        return INF
    return st.job_f[b, st.heap[b, 0], J_DONE]


# ---------------------------------------------------------------- starting and preempting
@njit(inline="always")
def start_next(st, pr, b, c):
    """Start the oldest waiting class-c job (there must be one and it must fit)."""
    j = st.cls_i[b, c, C_BOUND]
    touch(st, pr, b, c)
    now = st.sys_f[b, T_NOW]
    st.job_f[b, j, J_WAIT] += now - st.job_f[b, j, J_IDLE]  # a difference of two event times: 0 when they are equal
    st.job_f[b, j, J_START] = now
    st.job_f[b, j, J_DONE] = now + st.job_f[b, j, J_REM]
    heap_push(st, b, j)
    st.cls_i[b, c, C_BOUND] = st.job_i[b, j, J_NEXT]
    st.cls_i[b, c, C_X] += 1
    st.sys_i[b, S_NSERV] += 1
    st.sys_i[b, S_BUSY] += pr.need[c]
    hold_resources(st, pr, b, j, c, 1)


@njit(inline="always")
def preempt_last(st, pr, b, c):
    """Preempt the youngest class-c job in service (preempt-resume: its remaining duration is kept)."""
    bound = st.cls_i[b, c, C_BOUND]
    j = st.cls_i[b, c, C_TAIL] if bound < 0 else st.job_i[b, bound, J_PREV]
    touch(st, pr, b, c)
    heap_remove(st, b, j)
    st.job_f[b, j, J_REM] -= st.sys_f[b, T_NOW] - st.job_f[b, j, J_START]
    st.job_f[b, j, J_IDLE] = st.sys_f[b, T_NOW]
    st.cls_i[b, c, C_BOUND] = j
    st.cls_i[b, c, C_X] -= 1
    st.sys_i[b, S_NSERV] -= 1
    st.sys_i[b, S_BUSY] -= pr.need[c]
    hold_resources(st, pr, b, j, c, -1)


@njit(inline="always")
def _link_before(st, b, c, j, k):
    """Insert job j (not in any list) into class c's list just before job k (k = -1: at the tail)."""
    prev = st.cls_i[b, c, C_TAIL] if k < 0 else st.job_i[b, k, J_PREV]
    st.job_i[b, j, J_PREV] = prev
    st.job_i[b, j, J_NEXT] = k
    if prev < 0:
        st.cls_i[b, c, C_HEAD] = j
    else:
        st.job_i[b, prev, J_NEXT] = j
    if k < 0:
        st.cls_i[b, c, C_TAIL] = j
    else:
        st.job_i[b, k, J_PREV] = j


@njit(inline="always")
def start_job(st, pr, b, j):
    """Start the waiting job j, whichever of its class's waiting jobs it is (it must fit).

    Job-level service (a policy ordering jobs across classes): j moves to the end of its class's served prefix, so the
    served jobs of a class stay a prefix of its list and its waiting jobs stay in arrival order.
    """
    c = st.job_i[b, j, J_CLS]
    bound = st.cls_i[b, c, C_BOUND]
    if j != bound:
        unlink(st, b, c, j)
        _link_before(st, b, c, j, bound)
        st.cls_i[b, c, C_BOUND] = j
    start_next(st, pr, b, c)


@njit(inline="always")
def preempt_job(st, pr, b, j):
    """Preempt job j (in service), whichever of its class's served jobs it is (preempt-resume: its remaining
    duration is kept); it rejoins its class's waiting jobs at its arrival-order position."""
    c = st.job_i[b, j, J_CLS]
    bound = st.cls_i[b, c, C_BOUND]
    last = st.cls_i[b, c, C_TAIL] if bound < 0 else st.job_i[b, bound, J_PREV]
    if j != last:  # make j the last served job, then preempt it as the youngest served one
        unlink(st, b, c, j)
        _link_before(st, b, c, j, bound)
    preempt_last(st, pr, b, c)
    nxt = st.job_i[b, j, J_NEXT]
    if nxt >= 0 and st.job_i[b, nxt, J_SEQ] < st.job_i[b, j, J_SEQ]:  # older waiting jobs go before it
        st.cls_i[b, c, C_BOUND] = nxt
        while nxt >= 0 and st.job_i[b, nxt, J_SEQ] < st.job_i[b, j, J_SEQ]:
            nxt = st.job_i[b, nxt, J_NEXT]
        unlink(st, b, c, j)
        _link_before(st, b, c, j, nxt)


@njit(inline="always")
def kill_job(st, pr, b, j):
    """Stop job j (in service) and discard its progress (kill-and-restart: it will need its whole duration again);
    it rejoins its class's waiting jobs at its arrival-order position."""
    preempt_job(st, pr, b, j)
    st.job_f[b, j, J_WAIT] += st.job_f[b, j, J_SIZE] - st.job_f[b, j, J_REM]  # the service it loses counts as waiting
    st.job_f[b, j, J_REM] = st.job_f[b, j, J_SIZE]


@njit(inline="always")
def apply_targets(st, pr, b):
    """Make the oldest ``scratch[b, c]`` class-c jobs the ones in service: preempt first, then start."""
    K = pr.ints[P_K]
    for c in range(K):
        while st.cls_i[b, c, C_X] > st.scratch[b, c]:
            preempt_last(st, pr, b, c)
    for c in range(K):
        while st.cls_i[b, c, C_X] < st.scratch[b, c]:
            start_next(st, pr, b, c)


# ---------------------------------------------------------------- runtime estimates
_U64 = np.uint64


@njit(inline="always")
def _splitmix(x):
    """splitmix64's output function (a bijective 64-bit mixer)."""
    x = (x ^ (x >> _U64(30))) * _U64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> _U64(27))) * _U64(0x94D049BB133111EB)
    return x ^ (x >> _U64(31))


@njit
def seed_estimate_stream(st, b):
    """Seed system b's estimate stream ``erng[b]`` from a hash of its job stream's current state, which is read,
    not advanced: the jobs drawn are those of a run without estimates, and the estimates are a function of the
    replication's seed. Called at the system's first job (an environment's reset empties the system, so each
    episode reseeds from its own stream). docs/modelling-choices.md#backfilling-estimate-stream."""
    for i in range(4):
        st.erng[b, i] = _splitmix(st.rng[b, i] ^ _U64(0x6A09E667F3BCC909 + 0x9E3779B97F4A7C15 * i))
    if st.erng[b, 0] == 0 and st.erng[b, 1] == 0 and st.erng[b, 2] == 0 and st.erng[b, 3] == 0:
        st.erng[b, 0] = 1


@njit(inline="always")
def draw_estimate(st, pr, b, size, ident, seq):
    """The runtime estimate of a job of duration ``size`` joining now (``ident``: its index in a replayed trace,
    ``seq``: its arrival sequence number; the estimate stream is seeded at the system's first job, seq 0)."""
    kind = pr.ints[P_EST]
    if kind == EST_EXACT:
        return size
    if kind == EST_FACTOR:
        return pr.floats[P_EST_LOW] * size
    if kind == EST_TRACE:
        return pr.trace_e[ident] if ident >= 0 else size
    if seq == 0:
        seed_estimate_stream(st, b)
    low = pr.floats[P_EST_LOW]
    return (low + (pr.floats[P_EST_HIGH] - low) * _rng.uniform(st.erng, b)) * size


@njit(inline="always")
def estimated_remaining(st, b, j, now):
    """The scheduler's view of job j's remaining time: its estimate minus the service it has had, and 0 once it has
    run past its estimate (it then runs on to its true completion; msjgym does not kill it)."""
    done = st.job_f[b, j, J_SIZE] - st.job_f[b, j, J_REM]
    if st.job_i[b, j, J_HPOS] >= 0:
        done += now - st.job_f[b, j, J_START]
    rem = st.job_f[b, j, J_EST] - done
    return rem if rem > 0.0 else 0.0


@njit(inline="always")
def estimated_end(st, b, j, now):
    """When the scheduler expects job j (in service) to end: its start plus its estimated remaining time at the
    start, or now once it has run past its estimate."""
    end = st.job_f[b, j, J_START] + (st.job_f[b, j, J_EST] - (st.job_f[b, j, J_SIZE] - st.job_f[b, j, J_REM]))
    return end if end > now else now


# ---------------------------------------------------------------- jobs entering and leaving
@njit(inline="always")
def add_job(st, pr, b, c, size, batch, ident):
    """Append a class-c job of duration ``size`` arriving now; returns its slot. Does not schedule it.

    ``ident`` is the job's index in a replayed trace (-1 otherwise).

    The caller must have checked that a free slot exists (``sys_i[b, S_NFREE] > 0``).
    """
    nfree = st.sys_i[b, S_NFREE] - 1
    st.sys_i[b, S_NFREE] = nfree
    j = st.slots[b, nfree]
    touch(st, pr, b, c)
    st.job_i[b, j, J_CLS] = c
    st.job_i[b, j, J_SEQ] = st.sys_i[b, S_SEQ]
    st.sys_i[b, S_SEQ] += 1
    st.job_i[b, j, J_HPOS] = -1
    st.job_i[b, j, J_BATCH] = batch
    st.job_i[b, j, J_ID] = ident
    for k in range(NJI, st.job_i.shape[2]):  # the policy's own per-job entries start at -1 and +inf
        st.job_i[b, j, k] = -1
    for k in range(NJF, st.job_f.shape[2]):
        st.job_f[b, j, k] = INF
    now = st.sys_f[b, T_NOW]
    st.job_f[b, j, J_ARR] = now
    st.job_f[b, j, J_SIZE] = size
    st.job_f[b, j, J_REM] = size
    st.job_f[b, j, J_WAIT] = 0.0
    st.job_f[b, j, J_IDLE] = now
    st.job_f[b, j, J_EST] = draw_estimate(st, pr, b, size, ident, st.job_i[b, j, J_SEQ])
    if ident >= 0:
        st.jobest[b, ident] = st.job_f[b, j, J_EST]  # a replayed job's estimate, kept for its per-job row
    tail = st.cls_i[b, c, C_TAIL]
    st.job_i[b, j, J_PREV] = tail
    st.job_i[b, j, J_NEXT] = -1
    if tail < 0:
        st.cls_i[b, c, C_HEAD] = j
    else:
        st.job_i[b, tail, J_NEXT] = j
    st.cls_i[b, c, C_TAIL] = j
    if st.cls_i[b, c, C_BOUND] < 0:
        st.cls_i[b, c, C_BOUND] = j
    st.cls_i[b, c, C_N] += 1
    st.sys_i[b, S_NJOBS] += 1
    touch_need(st, pr, b)
    st.sys_i[b, S_NEED] += pr.need[c]
    if batch >= 0:
        st.sys_i[b, S_MEAS] += 1
    return j


@njit(inline="always")
def unlink(st, b, c, j):
    """Take job j out of class c's list of system b (the list only: counts and slot untouched)."""
    prev = st.job_i[b, j, J_PREV]
    nxt = st.job_i[b, j, J_NEXT]
    if prev < 0:
        st.cls_i[b, c, C_HEAD] = nxt
    else:
        st.job_i[b, prev, J_NEXT] = nxt
    if nxt < 0:
        st.cls_i[b, c, C_TAIL] = prev
    else:
        st.job_i[b, nxt, J_PREV] = prev


@njit(inline="always")
def remove_job(st, pr, b, j):
    """Take job j (in service, already out of the heap) out of the system and free its slot."""
    c = st.job_i[b, j, J_CLS]
    touch(st, pr, b, c)
    unlink(st, b, c, j)
    st.cls_i[b, c, C_N] -= 1
    st.cls_i[b, c, C_X] -= 1
    st.sys_i[b, S_NJOBS] -= 1
    touch_need(st, pr, b)
    st.sys_i[b, S_NEED] -= pr.need[c]
    st.sys_i[b, S_NSERV] -= 1
    st.sys_i[b, S_BUSY] -= pr.need[c]
    hold_resources(st, pr, b, j, c, -1)
    if st.job_i[b, j, J_BATCH] >= 0:
        st.sys_i[b, S_MEAS] -= 1
    st.job_i[b, j, J_SEQ] = -1  # a free slot (compiled user policies check the jobs they name)
    st.slots[b, st.sys_i[b, S_NFREE]] = j
    st.sys_i[b, S_NFREE] += 1


# ---------------------------------------------------------------- queries used by policies
@njit(inline="always")
def departed_job(st, b):
    """In a policy's ``on_departure`` hook: the slot of the job that has just left (``remove_job`` puts it last on
    the free list). Its fields (class, the policy's own per-job entries, times) are kept until an arrival reuses the slot; ``J_SEQ`` is -1."""
    return st.slots[b, st.sys_i[b, S_NFREE] - 1]


@njit(inline="always")
def seq_of(st, b, j):
    return st.job_i[b, j, J_SEQ]


@njit(inline="always")
def oldest_waiting(st, pr, b):
    """The oldest waiting job of system b, whatever its class (-1: none). O(K)."""
    best = -1
    for c in range(pr.ints[P_K]):
        j = st.cls_i[b, c, C_BOUND]
        if j >= 0 and (best < 0 or st.job_i[b, j, J_SEQ] < st.job_i[b, best, J_SEQ]):
            best = j
    return best


@njit(inline="always")
def next_in_arrival_order(st, pr, b, free):
    """The K-way merge of the classes' walk pointers (``scratch[b, K + c]``) by arrival order, over the classes whose
    need is at most ``free``: the class whose pointed-at job is oldest (-1: none)."""
    K = pr.ints[P_K]
    best = -1
    for c in range(K):
        j = st.scratch[b, K + c]
        if j >= 0 and pr.need[c] <= free and (
                best < 0 or st.job_i[b, j, J_SEQ] < st.job_i[b, st.scratch[b, K + best], J_SEQ]):
            best = c
    return best


@njit
def check_invariants(st, pr, b):
    """Debug mode: return 0 if the state is consistent, else a code naming the first violated invariant.

    1 over-allocation (busy > servers); 2 busy != Σ need·in-service; 3 class list count mismatch; 4 in-service jobs
    are not a prefix of their class list; 5 a class's waiting jobs out of arrival order (the served prefix may be in
    any order: job-level policies start any waiting job, see ``start_job``); 6 heap size mismatch; 7 heap order.
    """
    n = pr.ints[P_SERVERS]
    K = pr.ints[P_K]
    if st.sys_i[b, S_BUSY] > n or st.sys_i[b, S_BUSY] < 0:
        return 1
    busy = 0
    nserv = 0
    for c in range(K):
        busy += st.cls_i[b, c, C_X] * pr.need[c]
        nserv += st.cls_i[b, c, C_X]
        j = st.cls_i[b, c, C_HEAD]
        count = 0
        last_seq = -1
        while j >= 0:
            in_service = st.job_i[b, j, J_HPOS] >= 0
            if in_service != (count < st.cls_i[b, c, C_X]):
                return 4
            if count == st.cls_i[b, c, C_X] and st.cls_i[b, c, C_BOUND] != j:
                return 4
            if not in_service:
                if st.job_i[b, j, J_SEQ] <= last_seq:
                    return 5
                last_seq = st.job_i[b, j, J_SEQ]
            count += 1
            j = st.job_i[b, j, J_NEXT]
        if count != st.cls_i[b, c, C_N]:
            return 3
        if count == st.cls_i[b, c, C_X] and st.cls_i[b, c, C_BOUND] != -1:
            return 4
    if busy != st.sys_i[b, S_BUSY]:
        return 2
    if nserv != st.sys_i[b, S_HEAPN] or nserv != st.sys_i[b, S_NSERV]:
        return 6
    for pos in range(1, st.sys_i[b, S_HEAPN]):
        if _before(st, b, st.heap[b, pos], st.heap[b, (pos - 1) >> 1]):
            return 7
    return resource_violation(st, pr, b)


INVARIANT_NAMES = {
    1: "a server is over-allocated (busy servers > servers)",
    2: "busy servers differ from the sum of the needs of the jobs in service",
    3: "a class's job list does not match its count",
    4: "the jobs in service are not the oldest of their class",
    5: "a class's waiting jobs are out of arrival order",
    6: "the completion heap does not hold exactly the jobs in service",
    7: "the completion heap is out of order",
    8: "a node holds more than its capacity of a resource, or a negative amount (a record with resource vectors)",
}


def new_state(batch: int, num_classes: int, servers: int, capacity: int, nbatch: int, nbins: int,
              rng: np.ndarray, trace_jobs: int = 0, own: OwnArea = NO_AREA) -> MSJState:
    """Allocate an empty state for ``batch`` systems (time 0, no jobs); ``trace_jobs`` completion times are kept
    for a replayed trace (``jobdone``, NaN until the job completes), their waits (``jobwait``) and the runtime
    estimates the scheduler planned with (``jobest``: the estimate drawn when the job arrived); ``own``: the
    running policy's areas, for ``capacity`` job slots."""
    B, K = batch, num_classes
    cls_i = np.zeros((B, K, NCI), dtype=np.int64)
    cls_i[:, :, [C_HEAD, C_TAIL, C_BOUND]] = -1
    slots = np.tile(np.arange(capacity - 1, -1, -1, dtype=np.int64), (B, 1))
    sys_i = np.zeros((B, NSI), dtype=np.int64)
    sys_i[:, S_NFREE] = capacity
    sys_i[:, S_BATCH] = -1
    return MSJState(
        sys_i=sys_i,
        sys_f=np.zeros((B, NSF), dtype=np.float64),
        cls_i=cls_i,
        cls_f=np.zeros((B, K, NCF), dtype=np.float64),
        job_i=np.full((B, capacity, NJI + own.job_ints), -1, dtype=np.int64),
        job_f=np.zeros((B, capacity, NJF + own.job_floats), dtype=np.float64),
        heap=np.full((B, servers), -1, dtype=np.int64),
        slots=slots,
        rng=rng,
        scratch=np.zeros((B, 3 * K), dtype=np.int64),
        bstat=np.zeros((B, nbatch, K, NBS), dtype=np.float64),
        bsys=np.zeros((B, nbatch, NBSYS), dtype=np.float64),
        hist=np.zeros((B, nbatch, K, nbins), dtype=np.int64),
        chk=np.zeros((B, 64, 3), dtype=np.float64),
        jobdone=np.full((B, max(trace_jobs, 1)), np.nan, dtype=np.float64),
        jobwait=np.full((B, max(trace_jobs, 1)), np.nan, dtype=np.float64),
        jobest=np.full((B, max(trace_jobs, 1)), np.nan, dtype=np.float64),
        erng=np.ones((B, 4), dtype=np.uint64),
        own_i=np.zeros((B, own.ints), dtype=np.int64),
        own_f=np.zeros((B, own.floats), dtype=np.float64),
    )


def _resized(area: np.ndarray, size: int) -> np.ndarray:
    """``area[B, :]`` with ``size`` entries per system: its first entries kept, the new ones zero."""
    out = np.zeros((area.shape[0], size), dtype=area.dtype)
    keep = min(size, area.shape[1])
    out[:, :keep] = area[:, :keep]
    return out


def grow(st: MSJState, own: Callable[[int], OwnArea] | None = None) -> MSJState:
    """Double the job capacity of every system; slot numbers of existing jobs (and their fields, the policy's per-job
    entries included) are kept. ``own(capacity)``: the running policy's areas for a capacity (None: keep their
    sizes); the areas are sized again for the new capacity and keep their first entries."""
    B, cap, _ = st.job_i.shape
    job_i = np.full((B, 2 * cap, st.job_i.shape[2]), -1, dtype=np.int64)
    job_f = np.zeros((B, 2 * cap, st.job_f.shape[2]), dtype=np.float64)
    job_i[:, :cap] = st.job_i
    job_f[:, :cap] = st.job_f
    slots = np.zeros((B, 2 * cap), dtype=np.int64)
    new_slots = np.arange(2 * cap - 1, cap - 1, -1, dtype=np.int64)
    for b in range(B):
        nfree = st.sys_i[b, S_NFREE]
        slots[b, :cap] = new_slots
        slots[b, cap:cap + nfree] = st.slots[b, :nfree]
        st.sys_i[b, S_NFREE] = nfree + cap
    area = own(2 * cap) if own is not None else OwnArea(st.own_i.shape[1], st.own_f.shape[1], 0, 0)
    return st._replace(job_i=job_i, job_f=job_f, slots=slots, own_i=_resized(st.own_i, area.ints),
                       own_f=_resized(st.own_f, area.floats))


def example_state() -> MSJState:
    """A state of one tiny system: its numba type is the state's type in every compiled signature."""
    return new_state(1, 1, 1, 1, 1, 1, np.ones((1, 4), dtype=np.uint64), own=OwnArea(1, 1, 0, 0))


def example_params() -> MSJParams:
    """Parameters with every field of its dtype: their numba type is the parameters' type in every signature."""
    i, f = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.float64)
    return MSJParams(ints=i, floats=f, need=i, offered=f, cumprob=f, dkind=i, dstart=i, ddata=f, grp_need=i,
                     grp_ptr=i, grp_cls=i, trace_t=f, trace_c=i, trace_s=f, trace_e=f)
