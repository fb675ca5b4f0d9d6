"""Large-scale load balancing: the replications of a built-in dispatcher, each run to its end by the compiled loop.

:class:`DispatchReplications` runs replication r of a dispatch model from empty on the stream
``SeedSequence(seed).spawn(reps)[r]`` and returns its :class:`Replication` (the raw per-replication values); the
dispatch family's simulation (:mod:`msjgym.systems.dispatch.family`) hands them to the one evaluator
(``msjgym.evaluate``), which puts the confidence intervals on them:

>>> import msjgym
>>> res = msjgym.evaluate("lb-push-table1", "push", reps=5, jobs=10**6, seed=1)
>>> res.metrics["response_time"]            # Estimate(mean, ci95), time units

Protocol (Hellemans, Kielanski & Van Houdt §8; docs/modelling-choices.md#lb-protocol): each replication starts empty,
runs ``arrivals`` arrivals (default N·10⁴), discards the first ``warmup`` of them (10 %) and measures the rest.

Model and policies: :mod:`msjgym.systems.dispatch.model`, :mod:`msjgym.policies.dispatch`; event loop and
costs: :mod:`msjgym.systems.dispatch.kernel`; data structures: :mod:`msjgym.systems.dispatch.state`.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from msjgym.core import rng
from msjgym.core.distributions import Exponential
from msjgym.errors import PolicyError, ScenarioError
from msjgym.policies.dispatch import POLICIES
from msjgym.systems.dispatch import kernel as kern
from msjgym.systems.dispatch.model import REMOVE_MODES, DispatchModel
from msjgym.systems.dispatch.state import (
    BAD_SAMPLE, BAD_SERVER, DONE, F_SUMR, NEED_JOBS, NEED_LEVELS, NJ, NSF, NSI, NV, P_BATCH, P_D, P_INFO, P_K,
    P_LCAP, P_N, S_BAD, S_EVENTS, S_MSG, S_NARR, S_NDONE, T_WIN0, T_WIN1, DispatchState)

MAX_EVENTS = 1 << 62
MAX_LEVELS = 1 << 20
METRICS = ("response_time", "mean_queue_length", "utilization", "message_rate", "little_response_time")


@dataclass(frozen=True)
class Replication:
    """Raw results of one replication (window = the measured interval, time units)."""

    response_time: float  # mean over measured jobs
    mean_queue_length: float  # time-average jobs per server
    utilization: float  # time-average fraction of busy servers
    message_rate: float  # messages per server per unit time
    little_response_time: float  # mean_queue_length / λ (Little's law; equals response_time in steady state)
    queue_length_distribution: np.ndarray  # fraction of servers with q = k, k = 0, 1, ... (time average)
    jobs_measured: int
    window: float
    events: int  # events processed (arrival or batch, completion, probe, idle tick, token), whole run
    seconds: float  # wall-clock time of the compiled loop


def _aligned(rows: int, cols: int, dtype: type, offset: int = 0) -> np.ndarray:
    """An empty ``[rows, cols]`` array whose byte ``offset`` from its start falls on a 64-byte boundary."""
    item = np.dtype(dtype).itemsize
    buf = np.empty(rows * cols * item + 128, dtype=np.uint8)
    start = (offset - buf.ctypes.data) % 64
    return buf[start: start + rows * cols * item].view(dtype).reshape(rows, cols)


def _state(n: int, jobs: int, levels: int, wf_len: int, reps: int, seed: int | None) -> DispatchState:
    i64 = np.int64
    streams, _ = rng.spawn_states(seed, reps)
    srv = _aligned(n, NV, i64)
    job = _aligned(jobs, NJ, i64)
    return DispatchState(
        si=np.zeros(NSI, dtype=i64), sf=np.zeros(NSF), rng=streams, srv=srv, srvf=srv.view(np.float64),
        qord=np.empty(n, dtype=i64), qstart=np.empty(levels + 2, dtype=i64), qcnt=np.zeros(levels + 1, dtype=i64),
        eord=np.empty(n, dtype=i64), estart=np.empty(levels + 2, dtype=i64),
        idl=np.empty(n, dtype=i64), perm=np.empty(n, dtype=i64),
        hp=_aligned(n + jobs, 2, np.float64, offset=16),  # children 4p+1..4p+4 of a node: one cache line
        jobi=job, jobf=job.view(np.float64), jfree=np.empty(jobs, dtype=i64),
        area=np.zeros(levels + 1), last=np.zeros(levels + 1),
        wfh=np.empty(wf_len, dtype=i64), wfl=np.empty(wf_len, dtype=i64))


COMPLETIONS = ("auto", "heap", "clocks")


def _clocks(m: DispatchModel, completions: str) -> bool:
    """Whether completions run as competing clocks (exponential sizes; not least-loaded-d, which needs sizes)."""
    if completions not in COMPLETIONS:
        raise ScenarioError(f"completions = {completions!r}: must be one of {', '.join(COMPLETIONS)}")
    able = isinstance(m.dist, Exponential) and m.policy != "least-loaded-d" and m.speeds is None
    if completions == "clocks" and not able:
        raise ScenarioError(f"completions = 'clocks': needs exponential job sizes, equal server speeds and a policy "
                            f"that does not read job sizes (got dist = {m.dist}, "
                            f"{'per-server speeds, ' if m.speeds is not None else ''}policy = {m.policy!r}); use "
                            "'heap' or 'auto'")
    return able and completions != "heap"


def _params(m: DispatchModel, arrivals: int, warmup: int, levels: int, clocks: bool = False,
            policy: Any = None) -> kern.DispatchParams:
    """The loop's parameters; ``policy``: the dispatcher's declaration (default: the built-in ``m.policy``). The last
    ``compiled.NARG`` ints and floats hold a compiled dispatcher's parameters (``msjgym.systems.dispatch.compiled``)."""
    from msjgym.systems.dispatch.compiled import NARG, UserDispatcher

    policy = POLICIES[m.policy] if policy is None else policy
    kind, data = m.dist.encode()
    ints = np.zeros(kern.NPI + NARG, dtype=np.int64)
    ints[P_N] = m.servers
    ints[P_INFO] = policy.information_code
    ints[P_D] = m.d or 0
    ints[P_BATCH] = m.batch_size or 1
    ints[P_K] = m.sample_size
    ints[P_LCAP] = levels
    ints[kern.P_JOBS] = arrivals
    ints[kern.P_WARMUP] = warmup
    ints[kern.P_DKIND] = kind
    ints[kern.P_REMOVE] = REMOVE_MODES.index(m.remove) if m.remove else 0
    floats = np.zeros(kern.NPF + m.servers + NARG)
    floats[kern.F_LAM] = m.lam
    floats[kern.F_DELTA] = m.delta or 0.0
    floats[kern.F_DELTA0] = m.delta0 or 0.0
    floats[kern.F_DELTA1] = m.delta1 or 0.0
    floats[kern.F_P] = m.p or 0.0
    floats[kern.F_SPEED] = m.speed
    floats[kern.F_MU] = m.speed / m.dist.mean
    floats[kern.NPF:kern.NPF + m.servers] = m.server_speeds
    if isinstance(policy, UserDispatcher):
        for k, value in enumerate(policy.arguments()):
            floats[floats.size - NARG + k] = float(value)
            ints[ints.size - NARG + k] = int(value) if float(value).is_integer() else 0
    ints[kern.P_SPEEDS] = int(m.speeds is not None)
    ints[kern.P_CLOCKS] = int(clocks)
    return kern.DispatchParams(ints, floats, np.ascontiguousarray(data, dtype=np.float64))


def _initial_jobs(m: DispatchModel) -> int:
    """Job slots to start with (doubled on overflow): a few per server, more for the policies without balancing."""
    rho = m.load
    per = 4 + (math.ceil(3 * rho / (1 - rho)) if m.policy in ("random", "round-robin", "resource-pooling") else 0)
    return m.servers * per + 1024 + (m.batch_size or 0)


def _one(st: DispatchState, pr: kern.DispatchParams, b: int, choose: int) -> tuple[float, int]:
    kern.reset(st, pr, b)
    t0 = time.perf_counter()
    status = int(kern.run(st, pr, b, choose, MAX_EVENTS))
    return time.perf_counter() - t0, status


class DispatchReplications:
    """``reps`` replications of a dispatch model, run one at a time (replication r uses the stream
    ``SeedSequence(seed).spawn(reps)[r]``, whatever order they run in)."""

    def __init__(self, model: DispatchModel, arrivals: int, warmup: int, reps: int, seed: int | None,
                 levels: int = 256, completions: str = "auto", policy: Any = None) -> None:
        """``arrivals`` per replication, the first ``warmup`` of them not measured; ``levels``: the largest queue
        length (estimate) the arrays hold at first (doubled on overflow); ``completions``: "heap" (a heap of
        completion times, any size law and speeds), "clocks" (exponential sizes and equal speeds: one competing
        clock at a uniformly random busy server) or "auto" (clocks when they apply)."""
        if not 0 <= warmup < arrivals:
            raise ScenarioError(f"warmup = {warmup!r}: must be an integer in [0, {arrivals - 1}] (arrivals not "
                                f"measured, of the {arrivals} of a replication)")
        root = np.random.SeedSequence(seed)
        self.model, self.arrivals, self.warmup, self.seed = model, arrivals, warmup, int(root.entropy)
        self._entropy = root.entropy
        self.jobs, self.levels = _initial_jobs(model), levels
        self.wf_len = max((model.batch_size or 0) + 1, model.sample_size) + 1
        self.st = _state(model.servers, self.jobs, levels, self.wf_len, reps, root.entropy)
        self.policy = POLICIES[model.policy] if policy is None else policy
        self.pr = _params(model, arrivals, warmup, levels, _clocks(model, completions), self.policy)
        self.choose = 0  # the address of the dispatcher's kernel, once compiled (prepare)

    def compile_note(self) -> str | None:
        """A line to print before :meth:`prepare` compiles something (None: everything is cached)."""
        from msjgym.core.compiling import note
        return note(kern.units(self.policy))

    def prepare(self) -> float:
        """Compile (or load from the cache) the event loop and the dispatcher's kernel, and ``reset`` (run on an
        empty system; replication 0's stream is restored); returns the seconds it took."""
        from msjgym.core.compiling import compile_units
        t0 = time.perf_counter()
        compile_units(kern.units(self.policy))
        self.choose = kern.choose_address(self.policy)
        start = self.st.rng[0].copy()
        kern.reset(self.st, self.pr, 0)
        self.st.rng[0] = start
        return time.perf_counter() - t0

    def run(self, b: int) -> Replication:
        """Run replication b from empty to the end of its arrivals (enlarging the arrays and rerunning it, from
        the same stream, if they overflow)."""
        if not self.choose:
            self.prepare()
        start = self.st.rng[b].copy()
        while True:
            seconds, status = _one(self.st, self.pr, b, self.choose)
            if status == DONE:
                break
            self.st.rng[b] = start  # rerun the same replication with larger arrays
            if status == NEED_JOBS:
                self.jobs *= 2
            elif status == NEED_LEVELS and self.levels < MAX_LEVELS:
                self.levels *= 2
                self.pr.ints[P_LCAP] = self.levels
            elif status in (BAD_SERVER, BAD_SAMPLE):
                bad, n = int(self.st.si[S_BAD]), self.model.servers
                what = (f"returned server {bad}; valid: 0 .. {n - 1}" if status == BAD_SERVER else
                        f"sampled {bad} servers; valid: 1 .. {n} (servers)")
                raise PolicyError(f"dispatcher {self.policy.label}: {what} (arrival {int(self.st.si[S_NARR]) + 1:,} of "
                                  f"replication {b})")
            else:
                raise RuntimeError(f"dispatch kernel stopped with status {status}")
            self.st = _state(self.model.servers, self.jobs, self.levels, self.wf_len, self.st.rng.shape[0],
                             self._entropy)._replace(rng=self.st.rng)
        return _replication(self.st, self.model, self.arrivals - self.warmup, seconds)


def _replication(st: DispatchState, m: DispatchModel, measured: int, seconds: float) -> Replication:
    n = m.servers
    window = float(st.sf[T_WIN1] - st.sf[T_WIN0])
    dist = st.area / (n * window)
    top = int(np.flatnonzero(dist)[-1]) + 1 if dist.any() else 1
    dist = dist[:top].copy()
    mean_q = float(np.arange(top) @ dist)
    return Replication(
        response_time=float(st.sf[F_SUMR] / st.si[S_NDONE]), mean_queue_length=mean_q,
        utilization=float(1.0 - dist[0]), message_rate=float(st.si[S_MSG] / (n * window)),
        little_response_time=mean_q / m.lam, queue_length_distribution=dist, jobs_measured=int(st.si[S_NDONE]),
        window=window, events=int(st.si[S_EVENTS]), seconds=seconds)
