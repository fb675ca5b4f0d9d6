"""The agent path of the loss family (no gymnasium needed): the spec of ``msjgym/AdaptiveLoss-v0`` (its validated
arguments, what a policy of the user's is built with), the batch of loss systems under an agent's control behind the
environment, and the replications a policy of the user's decides for :func:`msjgym.evaluate.evaluate`."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from msjgym.api import load_scenario
from msjgym.core.env_batch import EnvBatch
from msjgym.core.fast_call import FastCall
from msjgym.core.policy_registry import registered
from msjgym.core.user_policy import checked_action, load_user_policy
from msjgym.errors import MsjgymError
from msjgym.systems.loss import control as lc
from msjgym.systems.loss.contract import KERNELS
from msjgym.systems.loss.loop import reset_all
from msjgym.systems.loss.model import LossModel
from msjgym.systems.loss.observation import OBS_SIZE, LossLayout, LossView
from msjgym.systems.loss.state import F_TIME, I_EVENTS, new_params, new_state, rows

GREEDY = "greedy"
"""The policy whose P(block | state) and P(width d | state) the environment path's statistics integrate."""


@dataclass(frozen=True)
class LossSpec:
    """A validated ``msjgym/AdaptiveLoss-v0`` configuration (what a policy's constructor receives).

    Attributes:
        scenario: the loaded loss scenario; ``model`` its :class:`~msjgym.systems.loss.model.LossModel` (n
            servers, maximum width d, sample size k, arrival rate per server λ; also as ``servers``, ``d``, ``k``,
            ``lam``).
        horizon_jobs: arrivals decided per episode (None: no horizon).
        blocking_penalty: subtracted from the reward of a blocked arrival (units of job-time).
    """

    scenario: Any
    horizon_jobs: int | None = 1000
    blocking_penalty: float = 1.0

    @classmethod
    def make(cls, scenario: str | Any = "loss-full-access", horizon_jobs: int | None = 1000,
             blocking_penalty: float = 1.0, **params: Any) -> LossSpec:
        if isinstance(scenario, str):
            sc = load_scenario(scenario, params)
        elif params:
            raise MsjgymError(f"scenario parameters {sorted(params)}: give them with a scenario name, not a Scenario")
        else:
            sc = scenario
        if not isinstance(sc.model, LossModel):
            raise MsjgymError(f"scenario = {scenario!r}: not a loss scenario (use loss-full-access or loss-sampled)")
        if horizon_jobs is not None and (not isinstance(horizon_jobs, int) or horizon_jobs < 1):
            raise MsjgymError(f"horizon_jobs = {horizon_jobs!r}: must be an integer >= 1 or None")
        if not (isinstance(blocking_penalty, (int, float)) and np.isfinite(blocking_penalty)
                and blocking_penalty >= 0):
            raise MsjgymError(f"blocking_penalty = {blocking_penalty!r}: must be a finite number >= 0")
        if sc.model.service is not None:
            raise MsjgymError(f"service = {sc.model.service}: msjgym/AdaptiveLoss-v0 simulates Exp(1) sizes only "
                              "(the count chain); use msjgym evaluate for other laws")
        return cls(sc, horizon_jobs, float(blocking_penalty))

    @property
    def model(self) -> LossModel:
        return self.scenario.model

    @property
    def servers(self) -> int:
        return self.model.servers

    @property
    def d(self) -> int:
        return self.model.d

    @property
    def k(self) -> int:
        return self.model.k

    @property
    def lam(self) -> float:
        return self.model.lam

    @property
    def observation_size(self) -> int:
        return OBS_SIZE

    @property
    def action_count(self) -> int:
        return self.model.d + 1

    def describe(self) -> str:
        return f"d={self.model.d}"

    @cached_property
    def layout(self) -> LossLayout:
        """The observation's layout (:mod:`msjgym.systems.loss.observation`)."""
        return LossLayout(self.model.servers, self.model.d)

    def view(self, observation: np.ndarray) -> LossView:
        """The named view of an observation (:class:`~msjgym.systems.loss.observation.LossView`); ValueError for an
        observation of the wrong shape."""
        return self.layout.view(observation)


class LossBatch(EnvBatch):
    """B loss systems and the buffers of their steps (an :class:`~msjgym.core.env_batch.EnvBatch`); ``warmup`` and
    ``batches``: the statistics' warm-up arrivals and batches (the agent runner's; 0 and 1 in the environment)."""

    def __init__(self, spec: LossSpec, num: int, warmup: int = 0, batches: int = 1) -> None:
        self.spec, self.model = spec, spec.model
        self.scenario = spec.scenario
        self.horizon = lc.NO_HORIZON if spec.horizon_jobs is None else spec.horizon_jobs
        self.warmup, self.batches = warmup, batches
        self.penalty = spec.blocking_penalty
        self.state = new_state(self.model, np.zeros((num, 4), np.uint64) + np.uint64(1), batches)
        # the statistics integrate greedy's P(block | state); arrivals warmup .. horizon − 1 are measured
        self.params = new_params(self.model, warmup, self.horizon - warmup, batches,
                                 KERNELS.addresses(registered("loss")[GREEDY]))
        reset_all(self.state, self.params)
        self._buffers(num, spec.observation_size, spec.action_count)
        self._step = FastCall(lc.step_batch, (self.state, self.params, self.horizon, self.penalty),
                              (np.zeros(num, np.int64), np.zeros(num, np.bool_), *self._outputs()))

    def step(self, actions: np.ndarray, resetting: np.ndarray) -> None:
        """As ``EnvBatch.step``; ``lc.SKIP`` leaves a copy untouched (the agent runner's finished replications)."""
        self._call(slice(None), actions, resetting)
        bad = np.flatnonzero(self.codes == lc.BAD_ACTION)
        if bad.size:  # the callers check the masks first: a mismatch between mask and kernel
            b = int(bad[0])
            raise RuntimeError(f"env {b}: the control layer refused action {int(actions[b])}, which its mask allowed")

    def reset_copies(self, which: np.ndarray) -> None:
        for b in which:
            self._call(slice(int(b), int(b) + 1), np.zeros(1, np.int64), np.ones(1, np.bool_))

    def info(self, b: int) -> dict:
        return {"time": float(self.state.flts[b, F_TIME]), "events": int(self.state.ints[b, I_EVENTS])}

    def _call(self, sub: slice, actions: np.ndarray, resetting: np.ndarray) -> None:
        if sub == slice(None):  # every copy: the records bound, typed once
            self._step(actions, resetting, *self._outputs())
        else:
            lc.step_batch(rows(self.state, sub), self.params, self.horizon, self.penalty, actions, resetting,
                          *self._outputs(sub))

    def _outputs(self, sub: slice | None = None) -> tuple[np.ndarray, ...]:
        """The step's output buffers (rows ``sub``; None: the whole arrays)."""
        if sub is None:
            return self.obs, self.masks, self.rewards, self.dts, self.ended, self.codes
        return self.obs[sub], self.masks[sub], self.rewards[sub], self.dts[sub], self.ended[sub], self.codes[sub]


def loss_spec(scenario) -> LossSpec:
    """The spec a policy of the user's is built with on a loss scenario (``load_user_policy(text, loss_spec(sc))``)."""
    return LossSpec.make(scenario)


class LossAgentReplications:
    """``reps`` replications of a loss scenario whose widths ``policy`` (``FILE.py:NAME`` or ``sb3:MODEL.zip``)
    decides; replication r uses ``SeedSequence(seed).spawn(reps)[r]``, the streams of the compiled path, so a
    built-in policy's agent reproduces its compiled trajectory. Advanced one replication at a time by
    :func:`msjgym.evaluate.evaluate`."""

    def __init__(self, scenario, policy: Any, *, reps: int, jobs: int, warmup: int, batches: int, seed: int) -> None:
        self.name, self.decide = load_user_policy(policy, loss_spec(scenario))
        self.reps = reps
        self.batch = LossBatch(LossSpec.make(scenario, warmup + jobs, 0.0), reps, warmup=warmup, batches=batches)
        self.batch.seed(np.random.SeedSequence(seed).spawn(reps))
        self.batch.step(np.zeros(reps, np.int64), np.ones(reps, np.bool_))
        self.steps = np.zeros(reps, np.int64)
        self._actions = np.zeros(reps, np.int64)
        self._no_reset = np.zeros(reps, np.bool_)

    def ended(self, rep: int) -> bool:
        return bool(self.batch.ended[rep])

    def advance(self, rep: int, max_steps: int) -> bool:
        """Let the policy decide up to ``max_steps`` arrivals of replication ``rep``; True when it has ended."""
        batch, actions = self.batch, self._actions
        for _ in range(max_steps):
            if batch.ended[rep]:
                break
            actions[:] = lc.SKIP  # the other replications stay as they are
            actions[rep] = checked_action(self.decide, batch.obs[rep], batch.masks[rep], self.name, rep,
                                          int(self.steps[rep]))
            batch.step(actions, self._no_reset)
            self.steps[rep] += 1
        return self.ended(rep)
