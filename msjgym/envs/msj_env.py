"""``msjgym/MSJ-v0``: schedule multiserver jobs, one decision at a time."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from msjgym.envs._core import Batch, EnvSpec
from msjgym.errors import MsjgymError
from msjgym.evaluate.evaluator import summarize
from msjgym.evaluate.result import Result as EvaluationResult
from msjgym.systems.msj.family import EpisodeRuns
from msjgym.systems.msj import control as msj_control
from msjgym.systems.msj.state import RUNNING, S_EVENTS, T_NOW


class MaskedDiscrete(gym.spaces.Discrete):
    """A Discrete space whose ``sample()`` draws among the actions allowed now (the environment's mask), so that
    generic tools that sample random actions (Gymnasium's and SB3's environment checkers) only take valid ones."""

    def __init__(self, n: int, masks: Callable[[], np.ndarray], seed: int | None = None) -> None:
        super().__init__(n, seed=seed)
        self._masks = masks

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        if mask is None and probability is None:
            mask = self._masks().astype(np.int8)
        return super().sample(mask=mask, probability=probability)


class MSJEnv(gym.Env):
    """A multiserver-job system (n servers, K job classes, Poisson arrivals or a trace) scheduled by an agent.

    Event-driven: each step runs the system to the next decision epoch; time advances between steps by ``info["dt"]``
    (0 for several decisions at one instant).

    ======================  ===========================================================================================
    Action space            ``mode="start"`` (non-preemptive; a decision epoch is an instant at which some waiting job
                            fits): Discrete(W + K + 1): ``i < W`` starts the i-th oldest waiting job; ``W + c`` starts
                            the oldest waiting job of class c; ``W + K`` waits for the next event.
                            ``mode="preemptive"`` (a decision epoch follows every event): Discrete(K + 1): ``c < K``
                            adds the oldest not yet chosen class-c job to the set to serve; ``K`` commits the set
                            (the jobs not chosen are preempted, preempt-resume) and waits for the next event.
    Observation space       Box(0, inf, (D,), float32). ``start``: [free servers / n; per class: jobs waiting, jobs in
                            service, age of its oldest waiting job; per window slot (the W oldest waiting jobs):
                            present, need / n, age, class one-hot]. ``preemptive``: [servers left to choose / n,
                            1 if more than L jobs are present; per class: jobs present, chosen, in service; per
                            sequence slot (the oldest L jobs present, in arrival order): present, in service, class
                            one-hot]. Ages in the scenario's time unit.
    Reward                  −∫ (jobs in system) dt over the step: by Little's law, maximising the return minimises
                            the mean response time.
    Episode end             truncated at ``horizon_jobs`` arrivals or ``horizon_time`` (or, with ``jobs``, once that
                            many measured jobs have completed); never terminated.
    Action masks            ``action_masks()`` (sb3-contrib's convention); a masked action raises ``ValueError``;
                            ``action_space.sample()`` draws among the allowed actions.
    Arguments               ``scenario`` (built-in name or TOML path, default "one-and-n"), scenario parameters as
                            keywords (e.g. ``servers=16``), ``mode``, ``window`` (W or L, default 8), ``horizon_jobs``
                            (default 1000), ``horizon_time``, ``jobs``/``warmup``/``batches`` (measure the episode's
                            statistics as ``msjgym evaluate`` does, see ``episode_result``).
    ======================  ===========================================================================================
    """

    metadata = {"render_modes": []}

    def __init__(self, scenario: str = "one-and-n", mode: str = "start", window: int = 8,
                 horizon_jobs: int | None = 1000, horizon_time: float | None = None, jobs: int | None = None,
                 warmup: int = 0, batches: int = 20, **params: Any) -> None:
        self.spec_ = EnvSpec.make(scenario, mode, window, horizon_jobs, horizon_time, jobs, warmup, batches, **params)
        self._batch = Batch(self.spec_, 1)
        self.observation_space = gym.spaces.Box(0.0, np.inf, (self.spec_.observation_size,), np.float32)
        self.action_space = MaskedDiscrete(self.spec_.action_count, self.action_masks)
        self._steps = 0
        self._seeded = False
        self._ended = True

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is not None or not self._seeded:
            root = np.random.SeedSequence(seed if seed is not None else int(self.np_random.integers(2**63)))
            self._batch.seed(root.spawn(1))
            self._seeded = True
        batch = self._batch
        batch.codes[0] = 0
        msj_control.step_batch(batch.sim.state, batch.sim.params, batch.ctl, np.zeros(1, np.int64),
                               np.ones(1, np.bool_), batch.obs, batch.masks, batch.codes)
        batch.finish()
        self._steps = 0
        self._ended = bool(batch.ended()[0])
        return batch.obs[0].copy(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._ended:
            raise MsjgymError("step() after the episode ended: call reset() first")
        batch = self._batch
        action = int(action)
        if not (0 <= action < self.action_space.n) or not batch.masks[0, action]:
            valid = np.flatnonzero(batch.masks[0]).tolist()
            raise ValueError(f"step {self._steps}: action {action} is not allowed now; valid actions: {valid}")
        batch.codes[0] = msj_control.step_system(batch.sim.state, batch.sim.params, batch.ctl, 0, action,
                                                 batch.obs[0], batch.masks[0])
        batch.finish()
        self._steps += 1
        self._ended = bool(batch.ended()[0])
        reward = float(batch.ctl.floats[0, msj_control.F_REWARD])
        return batch.obs[0].copy(), reward, False, self._ended, self._info()

    def action_masks(self) -> np.ndarray:
        """The actions allowed now (bool[A])."""
        return self._batch.masks[0].copy()

    def _info(self) -> dict:
        state = self._batch.sim.state
        return {"dt": float(self._batch.ctl.floats[0, msj_control.F_DT]), "time": float(state.sys_f[0, T_NOW]),
                "events": int(state.sys_i[0, S_EVENTS])}

    def episode_result(self) -> EvaluationResult:
        """The episode's statistics, exactly as ``msjgym.evaluate`` reports them (meaningful with ``jobs``)."""
        sim = self._batch.sim
        if sim.status(0) == RUNNING:
            raise MsjgymError("episode_result(): the measurement is not complete (make the environment with jobs=N "
                              "and step until the episode ends)")
        return summarize(self.spec_.scenario, "agent", EpisodeRuns(self.spec_.scenario, sim), -1, 0.0, 0.0)
