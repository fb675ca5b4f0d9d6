"""State record of the loss system with adaptive multiserver jobs: one namedtuple of arrays with a leading batch axis
B (replications or environments), its run parameters, and their constructors.

With Exp(1) inherent sizes the counts X_i (jobs on exactly i servers, i = 1..d) are the whole state of a system
(Ghanbarian, Mukhopadhyay, Guillemin & Mazumdar, "Large Loss Systems with Adaptive Multiserver Jobs", §2); a general
size law adds the jobs' completion times (a binary heap per system). Index constants name the columns of the
``ints``, ``flts`` and ``stats`` arrays; the compiled event loop (:mod:`msjgym.systems.loss.loop`) writes them and
the Python side (:mod:`msjgym.systems.loss.simulation`, the metrics, the environment) reads them. Nothing here
names a policy: a policy's kernels are called at the addresses held in :class:`LossParams`.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from numba import types

from msjgym.systems.loss.model import LossModel

# ints[b, :]
I_ARRIVALS = 0  # arrivals so far (warm-up included)
I_EVENTS = 1  # events so far (arrivals + departures)
I_PENDING = 2  # 1 while an arrival waits for its decision
I_M = 3  # min(l, d) of the pending arrival's sample
I_MAXPART = 4  # max over time of Σ_{i<d} X_i (jobs on fewer than d servers)
I_PARTMASK = 5  # bit i set if some job ever ran on exactly i < d servers
I_BUSY = 6  # busy servers
I_TRACE = 7  # events written to the trace
I_HEAPN = 8  # jobs in the completion heap (general sizes only)
NI = 9
# flts[b, :]
F_TIME = 0  # current time
F_AREA = 1  # ∫ (jobs in system) dt since the environment last read it (reward)
F_NEXT_ARR = 2  # time of the next arrival (general sizes only)
NF = 3
NARG = 4
"""Parameter slots of a compiled width rule: ``pmf[b, d + 1:d + 1 + NARG]`` (:mod:`msjgym.systems.loss.compiled`),
read by its width and probability kernels (passing them in the pmf table costs the built-ins no extra argument on
the probability kernels, called at every event)."""
# stats[b, batch, :] (fixed part; then per-width blocks)
S_TIME, S_ARR, S_BLOCK, S_INV, S_JOBS, S_BUSY, S_DEV2, S_PBLOCK, S_AD, S_STEIN = range(10)
S_WIDTH = 10  # d + 1 entries: arrivals given width 0 (blocked), 1, ..., d


def stat_size(d: int) -> int:
    """Columns of ``stats[b, batch, :]`` for maximum width d."""
    return S_WIDTH + 2 * (d + 1)


def s_area_x(d: int) -> int:
    """First index of ∫ X_i dt, i = 0..d (index 0 unused)."""
    return S_WIDTH + d + 1


LossState = namedtuple("LossState", "x ints flts pmf stats rng trace heap_t heap_w")
LossState.__doc__ = """Mutable state of B loss systems (numpy arrays with a leading batch axis B; field constants above).

``x[B, d + 1]``: X_i, jobs on exactly i servers (index 0 unused); ``ints[B, NI]``, ``flts[B, NF]``: scalars per
system; ``pmf[B, d + 1 + NARG]``: P(m = j | current state), j = 0..d, then a compiled rule's parameters;
``stats[B, batches, stat_size(d)]``: the measurement batches' sums; ``rng[B, 4]``: the systems' streams
(xoshiro256**); ``trace[B, T, 3]``: recorded events (event, busy servers after, jobs on < d servers after), event =
the width of an arrival (0: blocked) or −i for the departure of a width-i job; ``heap_t[B, n]``, ``heap_w[B, n]``:
completion times and widths of the jobs in service (general sizes; shape (B, 0) for Exp(1) sizes).
"""

LossParams = namedtuple("LossParams", "n d k lam warmup jobs batches kernels logfact law_kind law_data")
LossParams.__doc__ = """Read-only parameters shared by the B systems of a run.

``n`` servers, maximum width ``d``, sample size ``k``, arrival rate per server ``lam``; statistics after ``warmup``
arrivals over ``jobs`` arrivals in ``batches`` batches; ``kernels``: the addresses of the policy's kernels in the
order of its family's table (:data:`msjgym.systems.loss.contract.KERNELS`: width, P(block | state), P(width d |
state)); ``logfact[n + 1]``: ln j!; ``law_kind`` / ``law_data``: the encoded inherent-size law
(:func:`msjgym.core.sampling.sample`; −1 and an empty array for Exp(1) sizes, the count chain).
"""

_I, _F = types.int64, types.float64
_I2, _F2 = types.int64[:, ::1], types.float64[:, ::1]
STATE = types.NamedTuple((_I2, _I2, _F2, _F2, types.float64[:, :, ::1], types.uint64[:, ::1], types.int64[:, :, ::1],
                          _F2, _I2), LossState)
"""numba type of a :class:`LossState` (every array C-contiguous): what the event loop is compiled against."""
ADDRESSES = types.UniTuple(types.int64, 3)
"""numba type of ``LossParams.kernels``: one address per slot of the family's kernel table."""
PARAMS = types.NamedTuple((_I, _I, _I, _F, _I, _I, _I, ADDRESSES, types.float64[::1], _I, types.float64[::1]),
                          LossParams)
"""numba type of a :class:`LossParams`."""


def new_state(model: LossModel, streams: np.ndarray, batches: int, trace_events: int = 0) -> LossState:
    """Arrays of ``streams.shape[0]`` systems (one per row of ``streams``, copied), all zero: start each system with
    :func:`msjgym.systems.loss.loop.reset_system` (or :func:`msjgym.systems.loss.loop.reset_all`)."""
    B, d, n = streams.shape[0], model.d, model.servers
    cap = 0 if model.service is None else n  # at most n jobs (each holds >= 1 server)
    return LossState(x=np.zeros((B, d + 1), np.int64), ints=np.zeros((B, NI), np.int64), flts=np.zeros((B, NF)),
                     pmf=np.zeros((B, d + 1 + NARG)), stats=np.zeros((B, batches, stat_size(d))),
                     rng=np.ascontiguousarray(streams, dtype=np.uint64).copy(),
                     trace=np.zeros((B, trace_events, 3), np.int64), heap_t=np.zeros((B, cap)),
                     heap_w=np.zeros((B, cap), np.int64))


def new_params(model: LossModel, warmup: int, jobs: int, batches: int,
               kernels: tuple[int, int, int] = (0, 0, 0)) -> LossParams:
    """The run parameters of ``model``: statistics over arrivals ``warmup`` .. ``warmup + jobs − 1`` in ``batches``
    batches; ``kernels``: the policy's kernel addresses (0: not compiled yet)."""
    n = int(model.servers)
    logfact = np.array([math.lgamma(j + 1.0) for j in range(n + 1)])
    if model.service is None:
        kind, data = -1, np.zeros(0)
    else:
        kind, data = model.service.encode()
    return LossParams(n, int(model.d), int(model.k), float(model.lam), int(warmup), int(jobs), int(batches),
                      tuple(int(a) for a in kernels), logfact, int(kind), np.ascontiguousarray(data, np.float64))


def rows(state: LossState, sub: slice) -> LossState:
    """The systems ``sub`` of ``state`` (views of its arrays)."""
    return LossState(*(a[sub] for a in state))
