"""The agent path of the dispatch family (no gymnasium needed): the spec of ``msjgym/Dispatch-v0`` (its validated
arguments, what a dispatcher of the user's is built with), the batch of dispatch systems under an agent's control
behind the environment, and :class:`DispatchAgentReplications`, the replications a dispatcher of the user's — an
object with ``act``, a callable, ``FILE.py:NAME`` or ``sb3:MODEL.zip`` — decides, with the paper's protocol. They run
through the one evaluator, as a built-in dispatcher's do (the family's simulation, :mod:`msjgym.systems.dispatch.family`),
so the same statistics and scorecard apply:

    >>> import msjgym
    >>> res = msjgym.evaluate("lb-dispatch", "examples/my_dispatcher.py:JoinBelowThreshold", observation="sampled",
    ...                       reps=5, jobs=100_000, seed=1)
    >>> res.metrics["response_time"]            # Estimate(mean, ci95), time units

The dispatcher sees what an agent of ``msjgym/Dispatch-v0`` sees (``act(observation, action_mask)``, or
``act(observation)``); it is loaded by :func:`msjgym.core.user_policy.load_user_policy` (a class is built with the
environment's :class:`DispatchSpec` if its constructor takes an argument). Replication r runs on
``SeedSequence(seed).spawn(reps)[r]``, the stream a built-in dispatcher's replication r gets, so a built-in policy's
agent reproduces the built-in exactly. Anything the dispatcher does wrong stops the evaluation with one error naming
the replication, the step and the value.

An agent replaces the built-in policy's decision; the rest of the system, including the dispatcher's information
(sampling, probes or server updates), is the built-in information model the observation mode names:

==============  ========================  =============================================================
observation     information model         the built-in policy an agent can replicate exactly
==============  ========================  =============================================================
``sampled``     jsq-d (d messages/arrival)  jsq-d: the shortest sampled queue (first of the tied)
``histogram``   jsq (exact queue lengths)   jsq: the lowest non-empty level
``estimates``   push (δ) or pull (δ₀, δ₁)   push / pull: the lowest non-empty estimate level
==============  ========================  =============================================================
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from msjgym.core.distributions import Distribution
from msjgym.core.env_batch import EnvBatch
from msjgym.core.fast_call import FastCall
from msjgym.systems.dispatch.distributions import paper_law
from msjgym.core.limits import MAX_WINDOW
from msjgym.core.user_policy import checked_action, load_user_policy
from msjgym.core.validation import show
from msjgym.errors import MsjgymError
from msjgym.systems.dispatch import control as dc
from msjgym.systems.dispatch import simulation as sim
from msjgym.systems.dispatch.contract import P_LCAP
from msjgym.systems.dispatch.model import DispatchModel, default_dist, pool_speeds
from msjgym.systems.dispatch.observation import DispatchLayout, LevelsView, SampledView
from msjgym.systems.dispatch.state import (
    NEED_JOBS,
    NEED_LEVELS,
    NJ,
    NSF,
    NSI,
    NV,
    S_EVENTS,
    S_MSG,
    S_NFREE,
    S_STATUS,
    T_NOW,
    DispatchState,
    aligned,
)

OBSERVATIONS = {"sampled": dc.SAMPLED, "estimates": dc.ESTIMATES, "histogram": dc.HISTOGRAM}
REWARDS = {"holding": dc.HOLDING, "response": dc.RESPONSE}
INFORMATION = ("push", "pull")
DEFAULT_HORIZON = 1000
DEFAULT_DELTA = 0.3


@dataclass(frozen=True)
class DispatchSpec:
    """A validated ``msjgym/Dispatch-v0`` configuration.

    Attributes:
        model: the system with its information model (policy jsq-d, jsq, push or pull; see the module table).
        observation: "sampled", "estimates" or "histogram".
        levels: L, the histogram's length (estimates, histogram); the actions are levels 0..L (L: at least L).
        horizon: arrivals decided per episode (``NO_HORIZON`` with ``arrivals``).
        arrivals: None, or the protocol's arrivals per episode (an episode is then one replication of
            a built-in dispatcher's replication: it ends once every measured job has left).
        warmup: arrivals not measured (protocol episodes).
        reward: "holding" (−∫ jobs / N dt per step) or "response" (−the dispatched job's expected response time);
            see ``msjgym.systems.dispatch.control``. Training only: the agent runner's statistics do not use it.
    """

    model: DispatchModel
    observation: str
    levels: int
    horizon: int
    arrivals: int | None
    warmup: int
    reward: str = "holding"

    @classmethod
    def make(cls, servers: int = 100, lam: float = 0.9, dist: Distribution | str | None = None,
             observation: str = "histogram", d: int | None = None, information: str | None = None,
             delta: float | None = None, delta0: float | None = None, delta1: float | None = None, levels: int = 8,
             horizon: int | None = None, arrivals: int | None = None, warmup_fraction: float = 0.1,
             reward: str = "holding", fast_fraction: float | None = None,
             speed_ratio: float | None = None) -> DispatchSpec:
        if not isinstance(reward, str) or reward not in REWARDS:
            raise MsjgymError(f"reward = {show(reward)}: must be one of {', '.join(map(repr, REWARDS))}")
        if not isinstance(observation, str) or observation not in OBSERVATIONS:
            raise MsjgymError(f"observation = {show(observation)}: must be one of {', '.join(map(repr, OBSERVATIONS))}")
        if isinstance(dist, str):
            dist = paper_law(dist)
        dist = default_dist() if dist is None else dist
        if observation != "sampled" and d is not None:
            raise MsjgymError(f"d = {d!r}: only for observation='sampled' (servers sampled per arrival)")
        if information is not None and (not isinstance(information, str) or information not in INFORMATION):
            raise MsjgymError(f"information = {show(information)}: must be 'push' (probes at rate delta·N) or 'pull' "
                              "(server updates: delta, or delta0 and delta1)")
        if information is not None and observation != "estimates":
            raise MsjgymError(f"information = {show(information)}: only for observation='estimates' (the push / pull "
                              "information)")
        information = "push" if information is None else information
        if observation != "estimates" and any(x is not None for x in (delta, delta0, delta1)):
            raise MsjgymError("delta, delta0, delta1: only for observation='estimates' (the push / pull information)")
        speeds = None
        if (fast_fraction is None) != (speed_ratio is None):
            raise MsjgymError(f"fast_fraction = {fast_fraction!r}, speed_ratio = {speed_ratio!r}: give both (a fast "
                              "and a slow pool) or neither (unit-rate servers)")
        if fast_fraction is not None:
            if observation != "sampled":
                raise MsjgymError(f"fast_fraction, speed_ratio: only for observation='sampled' (the levels of "
                                  f"{observation!r} do not tell fast from slow servers)")
            speeds = pool_speeds(servers, fast_fraction, speed_ratio)
        if observation == "sampled":
            model = DispatchModel("jsq-d", servers, lam, dist, d=2 if d is None else d, speeds=speeds)
        elif observation == "histogram":
            model = DispatchModel("jsq", servers, lam, dist)
        else:
            if information not in INFORMATION:
                raise MsjgymError(f"information = {information!r}: must be 'push' (probes at rate delta·N) or "
                                  "'pull' (server updates: delta, or delta0 and delta1)")
            if information == "push":
                model = DispatchModel("push", servers, lam, dist, delta=DEFAULT_DELTA if delta is None else delta)
            else:
                if delta is None and delta0 is None:
                    delta = DEFAULT_DELTA
                model = DispatchModel("pull", servers, lam, dist, delta=delta, delta0=delta0, delta1=delta1)
        if not (isinstance(levels, (int, np.integer)) and levels >= 1):
            raise MsjgymError(f"levels = {levels!r}: must be an integer >= 1 (histogram length L)")
        if levels > MAX_WINDOW:
            raise MsjgymError(f"levels = {levels!r}: must be an integer in [1, {MAX_WINDOW:,}] (histogram length L: the "
                              "observation is rebuilt at every decision, in O(L))")
        if arrivals is not None:
            if horizon is not None:
                raise MsjgymError(f"horizon = {horizon!r}, arrivals = {arrivals!r}: give one (arrivals: an episode "
                                  "is one replication of the paper's protocol)")
            if not (isinstance(arrivals, (int, np.integer)) and arrivals >= 2):
                raise MsjgymError(f"arrivals = {arrivals!r}: must be an integer >= 2 (jobs per replication)")
            if not 0.0 <= warmup_fraction < 1.0:
                raise MsjgymError(f"warmup_fraction = {warmup_fraction!r}: must be in [0, 1)")
            warmup = int(round(warmup_fraction * arrivals))
            if warmup >= arrivals:
                raise MsjgymError(f"warmup_fraction = {warmup_fraction!r}: leaves no measured job of {arrivals}")
            return cls(model, observation, int(levels), dc.NO_HORIZON, int(arrivals), warmup, reward)
        horizon = DEFAULT_HORIZON if horizon is None else horizon
        if not (isinstance(horizon, (int, np.integer)) and horizon >= 1):
            raise MsjgymError(f"horizon = {horizon!r}: must be an integer >= 1 (arrivals per episode)")
        return cls(model, observation, int(levels), int(horizon), None, 0, reward)

    @property
    def mode(self) -> int:
        if self.model.speeds is not None:
            return dc.SAMPLED_SPEEDS
        return OBSERVATIONS[self.observation]

    @property
    def observation_size(self) -> int:
        return self.layout.size

    @property
    def action_count(self) -> int:
        return self.model.d if self.observation == "sampled" else self.levels + 1

    def describe(self) -> str:
        """The options that fix the observation and the actions (for messages)."""
        return (f"observation={self.observation!r}, d={self.model.d}, levels={self.levels}"
                + ("" if self.model.speeds is None else ", with speeds"))

    @cached_property
    def layout(self) -> DispatchLayout:
        """The observation's layout (:mod:`msjgym.systems.dispatch.observation`)."""
        return DispatchLayout(self.observation, self.model.servers, self.model.d, self.levels,
                              self.model.speeds is not None)

    def view(self, observation: np.ndarray) -> SampledView | LevelsView:
        """The named view of an observation: a :class:`~msjgym.systems.dispatch.observation.SampledView`
        ("sampled") or :class:`~msjgym.systems.dispatch.observation.LevelsView` ("histogram", "estimates");
        ValueError for an observation of the wrong shape."""
        return self.layout.view(observation)


def _stacked(num: int, rows: int, cols: int, dtype: type, offset: int = 0) -> np.ndarray:
    """``[num, rows, cols]``, each copy's rows 64-byte aligned at byte ``offset`` (when rows·cols·item % 64 == 0)."""
    return aligned(num * rows, cols, dtype, offset).reshape(num, rows, cols)


def _batch_state(num: int, n: int, jobs: int, levels: int, streams: np.ndarray) -> dc.DispatchBatchState:
    i64 = np.int64
    srv = _stacked(num, n, NV, i64)
    job = _stacked(num, jobs, NJ, i64)
    heap = -(-(n + jobs) // 4) * 4  # a multiple of 4 rows: every copy's heap keeps the 4-children alignment
    return dc.DispatchBatchState(
        si=np.zeros((num, NSI), i64), sf=np.zeros((num, NSF)), rng=streams, srv=srv, srvf=srv.view(np.float64),
        qord=np.empty((num, n), i64), qstart=np.full((num, levels + 2), n, i64), qcnt=np.zeros((num, levels + 1), i64),
        eord=np.empty((num, n), i64), estart=np.full((num, levels + 2), n, i64),
        idl=np.empty((num, n), i64), perm=np.empty((num, n), i64),
        hp=_stacked(num, heap, 2, np.float64, offset=16), jobi=job, jobf=job.view(np.float64),
        jfree=np.empty((num, jobs), i64), area=np.zeros((num, levels + 1)), last=np.zeros((num, levels + 1)),
        batch=np.zeros((num, 1), i64), own=np.zeros((num, 0), i64))  # no batches, no built-in dispatcher's area


class DispatchBatch(EnvBatch):
    """B dispatch systems under an agent's control, and the buffers of their steps (an
    :class:`~msjgym.core.env_batch.EnvBatch`)."""

    def __init__(self, spec: DispatchSpec, num: int) -> None:
        self.spec, self.num = spec, num
        m = spec.model
        end = spec.arrivals if spec.arrivals is not None else dc.NO_HORIZON
        warmup = spec.warmup  # 0 in training episodes: messages and time averages count from the first arrival
        self.levels = max(256, spec.levels)  # arrays' largest level (doubled on demand)
        self.jobs = sim.initial_jobs(m)  # job rows per copy (doubled on demand)
        self.params = sim.loop_params(m, end, warmup, self.levels, sim.uses_clocks(m, "auto"))
        self.state = _batch_state(num, m.servers, self.jobs, self.levels,
                                  np.zeros((num, 4), np.uint64) + np.uint64(1))
        self._buffers(num, spec.observation_size, spec.action_count)

    def step(self, actions: np.ndarray, resetting: np.ndarray) -> None:
        """Reset the copies in ``resetting``, place the others' arrivals by ``actions`` (``dc.SKIP``: untouched).
        Actions must be allowed (the caller checks the masks); the arrays grow when a copy needs it."""
        self._call(actions, resetting)
        while True:
            grow = self.codes >= dc.GROW_JOBS
            if not grow.any():
                break
            jobs = self.jobs * 2 if (self.codes == dc.GROW_JOBS).any() else self.jobs
            levels = self.levels * 2 if (self.codes == dc.GROW_LEVELS).any() else self.levels
            if levels > sim.MAX_LEVELS:
                raise MsjgymError(f"a queue (or estimate) exceeds {sim.MAX_LEVELS} jobs")
            self._grow(jobs, levels)
            self._call(np.where(grow, actions, dc.SKIP), np.zeros(self.num, np.bool_))
        status = self.state.si[:, S_STATUS]
        if ((status == NEED_JOBS) | (status == NEED_LEVELS)).any():  # _choose's checks make this unreachable
            raise RuntimeError(f"dispatch kernel overflow (status {status.max()}) despite the control layer's checks")
        if (self.codes == dc.BAD_ACTION).any():
            b = int(np.flatnonzero(self.codes == dc.BAD_ACTION)[0])
            raise MsjgymError(f"env {b}: action {int(actions[b])} was not allowed (the caller must check the mask)")

    def reset_copies(self, which: np.ndarray) -> None:
        resetting = np.zeros(self.num, np.bool_)
        resetting[which] = True
        self.step(np.full(self.num, dc.SKIP, np.int64), resetting)  # dc.SKIP: the others are not touched

    def info(self, b: int) -> dict:
        st = self.state
        return {"time": float(st.sf[b, T_NOW]), "events": int(st.si[b, S_EVENTS]), "messages": int(st.si[b, S_MSG])}

    def _call(self, actions: np.ndarray, resetting: np.ndarray) -> None:
        actions = np.asarray(actions, np.int64)
        step = self.__dict__.get("_step")
        if step is None or step.bound[0] is not self.state:  # first call, or the arrays grew: typed once more
            spec = self.spec
            step = self._step = FastCall(dc.step_batch, (self.state, self.params, spec.mode, REWARDS[spec.reward],
                                                         spec.levels, spec.horizon),
                                         (actions, resetting, self.obs, self.masks, self.rewards, self.dts,
                                          self.ended, self.codes))
        step(actions, resetting, self.obs, self.masks, self.rewards, self.dts, self.ended, self.codes)

    def _grow(self, jobs: int, levels: int) -> None:
        """Enlarge every copy's job pool and level arrays, keeping the systems as they are."""
        old, n = self.state, self.spec.model.servers
        new = _batch_state(self.num, n, jobs, levels, old.rng)
        for f in DispatchState._fields:
            if f in ("srvf", "jobf", "rng"):  # views of srv / jobi; the streams are shared
                continue
            a, w = getattr(old, f), getattr(new, f)
            w[tuple(slice(0, s) for s in a.shape)] = a
        added = jobs - self.jobs
        for b in range(self.num):  # the new rows are free
            free = int(old.si[b, S_NFREE])
            new.jfree[b, free:free + added] = np.arange(self.jobs, jobs)
            new.si[b, S_NFREE] = free + added
        self.state, self.jobs, self.levels = new, jobs, levels
        self.params.ints[P_LCAP] = levels

    def system(self, b: int) -> DispatchState:
        """Copy b's state as a ``DispatchState`` (views)."""
        st = self.state
        return DispatchState(*(st.rng if f == "rng" else getattr(st, f)[b] for f in DispatchState._fields))

    def replication(self, b: int, seconds: float) -> sim.Replication:
        """Copy b's statistics as a built-in dispatcher's replication reports them (protocol episodes, once ended)."""
        return sim.replication_result(self.system(b), self.spec.model, self.spec.arrivals - self.spec.warmup, seconds)


class DispatchAgentReplications:
    """``reps`` replications of ``spec``'s system whose arrivals ``policy`` dispatches, advanced one replication at a
    time (replication r: ``SeedSequence(seed).spawn(reps)[r]``, the stream a built-in dispatcher's replication r gets)."""

    def __init__(self, spec: DispatchSpec, policy: Any, reps: int, seed: int | None) -> None:
        self.spec, self.reps = spec, reps
        self.name, self.decide = load_user_policy(policy, spec)
        root = np.random.SeedSequence(seed)
        self.seed = int(root.entropy)
        self.batch = DispatchBatch(spec, reps)
        self.batch.seed(root.spawn(reps))
        self.batch.step(np.zeros(reps, np.int64), np.ones(reps, np.bool_))
        self.steps = np.zeros(reps, np.int64)
        self._actions = np.full(reps, dc.SKIP, np.int64)
        self._no_reset = np.zeros(reps, np.bool_)

    def ended(self, b: int) -> bool:
        return bool(self.batch.ended[b])

    def progress(self, b: int) -> int:
        """Decisions taken in replication b (one per arrival)."""
        return int(self.steps[b])

    def advance(self, b: int, max_steps: int) -> bool:
        """Let the dispatcher place up to ``max_steps`` arrivals of replication b; True when it has ended."""
        batch, actions = self.batch, self._actions
        for _ in range(max_steps):
            if batch.ended[b]:
                break
            actions[:] = dc.SKIP  # the other replications stay as they are
            actions[b] = checked_action(self.decide, batch.obs[b], batch.masks[b], self.name, b, int(self.steps[b]))
            batch.step(actions, self._no_reset)
            self.steps[b] += 1
        return self.ended(b)
