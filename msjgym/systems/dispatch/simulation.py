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

Model and policies: :mod:`msjgym.systems.dispatch.model`, :mod:`msjgym.policies.dispatch` (reached through
``registered("dispatch")``); the dispatchers' interface: :mod:`msjgym.systems.dispatch.contract`; event loop and
costs: :mod:`msjgym.systems.dispatch.loop`; data structures: :mod:`msjgym.systems.dispatch.state`.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from msjgym.core.distributions import Exponential
from msjgym.core.policy_registry import registered
from msjgym.errors import PolicyError, ScenarioError
from msjgym.systems.dispatch import loop
from msjgym.systems.dispatch.contract import (
    KERNELS, P_BATCH, P_D, P_INFO, P_K, P_LCAP, P_N, DispatchParams, DispatchPolicy)
from msjgym.systems.dispatch.model import REMOVE_MODES, DispatchModel
from msjgym.systems.dispatch.state import (
    BAD_SAMPLE, BAD_SERVER, DONE, F_SUMR, NEED_JOBS, NEED_LEVELS, S_BAD, S_EVENTS, S_MSG, S_NARR, S_NDONE, T_WIN0,
    T_WIN1, DispatchState, new_state)

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


def builtin(name: str) -> DispatchPolicy:
    """The built-in dispatcher ``name`` (its declaration, from the registry)."""
    return registered("dispatch")[name]


def _state(m: DispatchModel, policy: DispatchPolicy, jobs: int, levels: int, reps: int,
           seed: int | None) -> DispatchState:
    """The record for ``policy`` on ``m``: ``jobs`` job rows, queue lengths up to ``levels``, the batch arrays of
    ``m``'s batches and the dispatcher's own area, ``reps`` streams from ``seed``."""
    return new_state(m.servers, jobs, levels, max(m.sample_size, 1), policy.own_size(m), reps, seed)


COMPLETIONS = ("auto", "heap", "clocks")


def uses_clocks(m: DispatchModel, completions: str, policy: DispatchPolicy | None = None) -> bool:
    """Whether completions run as competing clocks (exponential sizes and equal speeds; not for a dispatcher that
    reads the work in the queues, ``reads_sizes``); ``policy``: the dispatcher (default: the built-in ``m.policy``)."""
    if completions not in COMPLETIONS:
        raise ScenarioError(f"completions = {completions!r}: must be one of {', '.join(COMPLETIONS)}")
    policy = builtin(m.policy) if policy is None else policy
    able = isinstance(m.dist, Exponential) and not policy.reads_sizes and m.speeds is None
    if completions == "clocks" and not able:
        raise ScenarioError(f"completions = 'clocks': needs exponential job sizes, equal server speeds and a policy "
                            f"that does not read job sizes (got dist = {m.dist}, "
                            f"{'per-server speeds, ' if m.speeds is not None else ''}policy = {m.policy!r}); use "
                            "'heap' or 'auto'")
    return able and completions != "heap"


def loop_params(m: DispatchModel, arrivals: int, warmup: int, levels: int, clocks: bool = False,
            policy: Any = None) -> DispatchParams:
    """The loop's parameters; ``policy``: the dispatcher's declaration (default: the built-in ``m.policy``). The last
    ``compiled.NARG`` ints and floats hold a compiled dispatcher's parameters (``msjgym.systems.dispatch.compiled``)."""
    from msjgym.systems.dispatch.compiled import NARG, UserDispatcher

    policy = builtin(m.policy) if policy is None else policy
    kind, data = m.dist.encode()
    ints = np.zeros(loop.NPI + NARG, dtype=np.int64)
    ints[P_N] = m.servers
    ints[P_INFO] = policy.information_code
    ints[P_D] = m.d or 0
    ints[P_BATCH] = m.batch_size or 1
    ints[P_K] = m.sample_size
    ints[P_LCAP] = levels
    ints[loop.P_JOBS] = arrivals
    ints[loop.P_WARMUP] = warmup
    ints[loop.P_DKIND] = kind
    ints[loop.P_REMOVE] = REMOVE_MODES.index(m.remove) if m.remove else 0
    floats = np.zeros(loop.NPF + m.servers + NARG)
    floats[loop.F_LAM] = m.lam
    floats[loop.F_DELTA] = m.delta or 0.0
    floats[loop.F_DELTA0] = m.delta0 or 0.0
    floats[loop.F_DELTA1] = m.delta1 or 0.0
    floats[loop.F_P] = m.p or 0.0
    floats[loop.F_SPEED] = m.speed
    floats[loop.F_MU] = m.speed / m.dist.mean
    floats[loop.NPF:loop.NPF + m.servers] = m.server_speeds
    if isinstance(policy, UserDispatcher):
        for k, value in enumerate(policy.arguments()):
            floats[floats.size - NARG + k] = float(value)
            ints[ints.size - NARG + k] = int(value) if float(value).is_integer() else 0
    ints[loop.P_SPEEDS] = int(m.speeds is not None)
    ints[loop.P_CLOCKS] = int(clocks)
    return DispatchParams(ints, floats, np.ascontiguousarray(data, dtype=np.float64))


def initial_jobs(m: DispatchModel) -> int:
    """Job slots to start with (doubled on overflow): a few per server, more for the policies without balancing."""
    rho = m.load
    per = 4 + (math.ceil(3 * rho / (1 - rho)) if m.policy in ("random", "round-robin", "resource-pooling") else 0)
    return m.servers * per + 1024 + (m.batch_size or 0)


def _one(st: DispatchState, pr: DispatchParams, b: int, choose: int) -> tuple[float, int]:
    loop.reset(st, pr, b)
    t0 = time.perf_counter()
    status = int(loop.run(st, pr, b, choose, MAX_EVENTS))
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
        self.jobs, self.levels = initial_jobs(model), levels
        self.policy = builtin(model.policy) if policy is None else policy
        self.st = _state(model, self.policy, self.jobs, levels, reps, root.entropy)
        clocks = uses_clocks(model, completions, self.policy)
        self.pr = loop_params(model, arrivals, warmup, levels, clocks, self.policy)
        self.choose = 0  # the address of the dispatcher's kernel, once compiled (prepare)

    def compile_note(self) -> str | None:
        """A line to print before :meth:`prepare` compiles something (None: everything is cached)."""
        from msjgym.core.compiling import note
        return note(KERNELS.units(self.policy, loops=loop.LOOPS))

    def prepare(self) -> float:
        """Compile (or load from the cache) the event loop and the dispatcher's kernel, and ``reset`` (run on an
        empty system; replication 0's stream is restored); returns the seconds it took."""
        from msjgym.core.compiling import compile_units
        t0 = time.perf_counter()
        compile_units(KERNELS.units(self.policy, loops=loop.LOOPS))
        (self.choose,) = KERNELS.addresses(self.policy)
        start = self.st.rng[0].copy()
        loop.reset(self.st, self.pr, 0)
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
            self.st = _state(self.model, self.policy, self.jobs, self.levels, self.st.rng.shape[0],
                             self._entropy)._replace(rng=self.st.rng)
        return replication_result(self.st, self.model, self.arrivals - self.warmup, seconds)


def replication_result(st: DispatchState, m: DispatchModel, measured: int, seconds: float) -> Replication:
    """One finished replication's metrics (``measured`` arrivals after warm-up; ``seconds``: its wall time) from
    its state ``st``; shared with the agent path (:mod:`msjgym.systems.dispatch.agent`)."""
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
