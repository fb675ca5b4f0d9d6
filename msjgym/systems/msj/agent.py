"""The agent path of the multiserver-job family (no gymnasium needed): the spec of ``msjgym/MSJ-v0`` (its validated
arguments, what a policy of the user's is built with), the batch of systems under an agent's control behind the
environment, and the replications a policy of the user's schedules for :func:`msjgym.evaluate.evaluate`."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from msjgym.api import Scenario, load_scenario
from msjgym.core import rng
from msjgym.core.fast_call import FastCall
from msjgym.core.jit import njit
from msjgym.core.limits import MAX_WINDOW, TIME_RANGE
from msjgym.core.validation import check_number
from msjgym.core.env_batch import EnvBatch
from msjgym.core.user_policy import checked_action, load_user_policy
from msjgym.errors import MsjgymError
from msjgym.systems.msj.contract import Policy
from msjgym.systems.msj import control as msj_control
from msjgym.systems.msj import state as msj
from msjgym.systems.msj.simulation import DEFAULT_BSLD_THRESHOLD, MSJSimulation, RunConfig
from msjgym.systems.msj.observation import MSJLayout, PreemptiveView, StartView

AGENT = Policy(name="agent", summary="decisions taken by an agent through msjgym.envs", preemptive=False,
               source="")  # no kernel: the compiled scheduler leaves every decision to the agent
MODES = {"start": msj_control.MODE_START, "preemptive": msj_control.MODE_SET}
REWARDS = {"holding": msj_control.REWARD_JOBS, "bounded-slowdown": msj_control.REWARD_BSLD}
"""``reward``: ``"holding"`` (−∫ jobs in system dt, the default) or ``"bounded-slowdown"`` (−bounded slowdown of each
job at its completion)."""


@dataclass(frozen=True)
class EnvSpec:
    """A validated environment configuration.

    Attributes:
        scenario: the loaded scenario (built-in name or TOML path, with parameter overrides).
        mode: "start" (non-preemptive: start one waiting job or wait) or "preemptive" (choose the set in service).
        window: W, waiting jobs shown and startable by slot ("start"); L, jobs shown in arrival order ("preemptive").
        horizon_jobs: an episode is truncated before its (horizon_jobs+1)-th arrival (0: no job horizon).
        horizon_time: an episode is truncated at this time (inf: no time horizon).
        config: the measurement of the episode's statistics (``episode_result``), as ``msjgym.evaluate`` makes it
            (``jobs``, ``warmup``, ``batches``): an episode with ``jobs`` ends when that measurement is complete, or
            when its number of jobs keeps growing (the instability detector, as in ``evaluate``).
        estimates: the observation ends with the requested run time (runtime estimate, time units) of each window
            (sequence) slot's job; off by default, so observations keep their size.
        reward: ``"holding"`` (each step: −∫ jobs in system dt over it) or ``"bounded-slowdown"`` (each step: −Σ
            max(1, response / max(run time, τ)) over the jobs that completed during it, τ = ``config.bsld_threshold``
            time units). Either does not change the observation or the actions.
        trace_windows: a replayed trace's episodes are windows of ``horizon_jobs`` consecutive jobs, each from a
            start drawn uniformly at reset, run until every job of the window completed (False: every episode
            replays the trace from its first job).
    """

    scenario: Scenario
    mode: int
    window: int
    horizon_jobs: int
    horizon_time: float
    config: RunConfig
    estimates: bool = False
    reward: str = "holding"
    trace_windows: bool = False

    @classmethod
    def make(cls, scenario: str | Scenario = "one-and-n", mode: str = "start", window: int = 8,
             horizon_jobs: int | None = 1000, horizon_time: float | None = None, jobs: int | None = None,
             warmup: int = 0, batches: int = 20, estimates: bool = False, reward: str = "holding",
             bsld_threshold: float = DEFAULT_BSLD_THRESHOLD, trace_windows: bool = False,
             **params: object) -> EnvSpec:
        if isinstance(scenario, str):
            scenario = load_scenario(scenario, params)
        elif params:
            raise MsjgymError(f"scenario parameters {sorted(params)}: give them with a scenario name, not a Scenario")
        if mode not in MODES:
            raise MsjgymError(f"mode = {mode!r}: must be one of {', '.join(map(repr, MODES))}")
        if isinstance(window, bool) or not isinstance(window, int) or not 1 <= window <= MAX_WINDOW:
            raise MsjgymError(f"window = {window!r}: must be an integer in [1, {MAX_WINDOW:,}] (the observation is "
                              "rebuilt at every decision, in O(window))")
        if not isinstance(estimates, (bool, np.bool_)):
            raise MsjgymError(f"estimates = {estimates!r}: must be True or False (whether the observation shows the "
                              "window's requested run times)")
        if reward not in REWARDS:
            raise MsjgymError(f"reward = {reward!r}: must be one of {', '.join(map(repr, REWARDS))}")
        tau = check_number("bsld_threshold", bsld_threshold, 0.0, TIME_RANGE[1], error=MsjgymError,
                           why="the bounded slowdown's threshold τ, in the scenario's time unit")
        horizon_jobs = 0 if horizon_jobs is None else horizon_jobs
        if not isinstance(horizon_jobs, int) or horizon_jobs < 0:
            raise MsjgymError(f"horizon_jobs = {horizon_jobs!r}: must be an integer >= 0 (0 or None: no job horizon)")
        if not isinstance(trace_windows, (bool, np.bool_)):
            raise MsjgymError(f"trace_windows = {trace_windows!r}: must be True or False")
        trace = scenario.model.trace
        if trace_windows and (trace is None or not 1 <= horizon_jobs <= len(trace)):
            raise MsjgymError(f"trace_windows = True: episodes are windows of horizon_jobs consecutive jobs of a "
                              "replayed trace; needs a trace scenario and horizon_jobs in [1, "
                              f"{'the trace length' if trace is None else f'{len(trace):,}'}] (got "
                              f"{'no trace' if trace is None else f'horizon_jobs = {horizon_jobs!r}'})")
        horizon_time = math.inf if horizon_time is None else float(horizon_time)
        if not horizon_time > 0:
            raise MsjgymError(f"horizon_time = {horizon_time!r}: must be > 0")
        if jobs is None and horizon_jobs == 0 and horizon_time == math.inf and scenario.model.trace is None:
            raise MsjgymError("give a horizon (horizon_jobs or horizon_time) or a measurement (jobs): episodes "
                              "would never end")
        measured = jobs if jobs is not None else max(horizon_jobs, 1) if horizon_jobs else 10**15
        if jobs is None and trace is not None:  # an episode of a replayed trace measures at most the trace's jobs
            measured = max(min(measured, len(trace) - warmup), 1)
        config = RunConfig(jobs=measured, warmup=warmup, batches=min(batches, measured),
                           detect_instability=jobs is not None, bsld_threshold=float(tau))
        return cls(scenario, MODES[mode], window, horizon_jobs, horizon_time, config, bool(estimates), reward,
                   bool(trace_windows))

    @property
    def model(self):
        """The scenario's validated model (an ``MSJModel``)."""
        return self.scenario.model

    @property
    def mode_name(self) -> str:
        """"start" or "preemptive"."""
        return next(name for name, code in MODES.items() if code == self.mode)

    def describe(self) -> str:
        """The options that fix the observation and the actions (for messages)."""
        return f"mode={self.mode_name!r}, window={self.window}" + (", estimates=True" if self.estimates else "")

    def settings(self) -> dict[str, Any]:
        """The arguments that fix the observation and the actions, as keywords of ``msjgym/MSJ-v0`` (saved with a
        trained model: ``msjgym.envs.sb3.record_env``, read back by ``--policy sb3:MODEL.zip``)."""
        return {"mode": self.mode_name, "window": self.window, "estimates": self.estimates}

    @property
    def observation_size(self) -> int:
        return self.layout.size

    @property
    def action_count(self) -> int:
        return self.layout.wait_action + 1

    @cached_property
    def layout(self) -> MSJLayout:
        """The observation's layout (:mod:`msjgym.systems.msj.observation`)."""
        model = self.scenario.model
        return MSJLayout(self.mode, model.num_classes, self.window, model.servers, tuple(int(v) for v in model.needs),
                         self.estimates)

    def view(self, observation: np.ndarray) -> StartView | PreemptiveView:
        """The named view of an observation: a :class:`~msjgym.systems.msj.observation.StartView` (mode "start") or
        :class:`~msjgym.systems.msj.observation.PreemptiveView`; ValueError for an observation of the wrong shape."""
        return self.layout.view(observation)


class MSJBatch(EnvBatch):
    """B multiserver-job systems under external control (an :class:`~msjgym.core.env_batch.EnvBatch`)."""

    def __init__(self, spec: EnvSpec, batch: int) -> None:
        self.spec = spec
        self.sim = MSJSimulation(spec.scenario.model, AGENT, spec.config, rng.spawn_states(0, batch)[0])
        self.ctl = msj_control.new_control(batch, spec.mode, spec.window, spec.horizon_time, spec.horizon_jobs,
                                           spec.estimates, REWARDS[spec.reward],
                                           spec.horizon_jobs if spec.trace_windows else 0)
        self._buffers(batch, spec.observation_size, spec.action_count)

    @property
    def state(self):
        return self.sim.state

    def step(self, actions: np.ndarray, resetting: np.ndarray) -> None:
        step = self.__dict__.get("_step")
        if step is None or step.bound[0] is not self.sim.state:  # first call, or the storage grew: typed once more
            step = self._step = FastCall(msj_control.step_batch, (self.sim.state, self.sim.params, self.ctl),
                                         (actions, resetting, self.obs, self.masks, self.codes))
        step(actions, resetting, self.obs, self.masks, self.codes)
        if self.codes.any():  # 1: refused (never, the environments check the masks first); 2: storage full
            bad = np.flatnonzero(self.codes == 1)
            if bad.size:  # a mismatch between mask and kernel
                b = int(bad[0])
                raise RuntimeError(f"env {b}: the control layer refused action {int(actions[b])}, which its mask "
                                   "allowed")
            self.finish()
        self._outputs()

    def reset_copies(self, which: np.ndarray) -> None:
        state, params, ctl = self.sim.state, self.sim.params, self.ctl
        for b in which:
            msj_control.reset_system(state, params, ctl, b)
            msj_control.observe(state, params, ctl, b, self.obs[b], self.masks[b])
            self.masks[b, :] = True  # the initial state: every action is allowed (and starts the clock)
        self._outputs()

    def _outputs(self) -> None:
        _outputs(self.ctl.floats, self.ctl.ints, self.sim.state.sys_i, self.rewards, self.dts, self.ended)

    def info(self, b: int) -> dict:
        state = self.sim.state
        return {"time": float(state.sys_f[b, msj.T_NOW]), "events": int(state.sys_i[b, msj.S_EVENTS])}

    def finish(self) -> None:
        """Grow the job storage and resume the systems that ran out of it (codes == 2)."""
        while (self.codes == 2).any():
            self.sim.grow()
            msj_control.resume_batch(self.sim.state, self.sim.params, self.ctl, self.codes == 2, self.obs,
                                     self.masks, self.codes)

    def ended_now(self) -> np.ndarray:
        """bool[B]: truncated at the horizon, or the measurement is complete."""
        return (self.ctl.ints[:, msj_control.X_TRUNCATED] != 0) | (self.sim.state.sys_i[:, msj.S_STATUS] != msj.RUNNING)


class AgentReplications:
    """``reps`` replications of a multiserver-job scenario scheduled by ``policy`` (``FILE.py:NAME``,
    ``sb3:MODEL.zip`` or a policy object) through ``msjgym/MSJ-v0``'s interface, with the seeds of the built-in path
    (replication r: ``SeedSequence(seed).spawn(reps)[r]``). Advanced one replication at a time by
    :func:`msjgym.evaluate.evaluate`."""

    def __init__(self, scenario: Scenario, policy: Any, *, mode: str = "start", window: int = 8, reps: int = 10,
                 jobs: int = 100_000, warmup: int = 0, batches: int = 20, seed: int = 0,
                 estimates: bool = False) -> None:
        spec = EnvSpec.make(scenario, mode, window, None, None, jobs, warmup, batches, estimates)
        self.name, self.decide = load_user_policy(policy, spec)
        self.batch = batch = MSJBatch(spec, reps)
        batch.seed(np.random.SeedSequence(seed).spawn(reps))
        msj_control.step_batch(batch.sim.state, batch.sim.params, batch.ctl, np.zeros(reps, np.int64),
                               np.ones(reps, np.bool_), batch.obs, batch.masks, batch.codes)
        self.steps = [0] * reps

    def advance(self, b: int, max_steps: int) -> int:
        """Let the policy take up to ``max_steps`` decisions in replication b; returns its simulation status."""
        batch = self.batch
        for _ in range(max_steps):
            if batch.ended_now()[b]:
                break
            action = checked_action(self.decide, batch.obs[b], batch.masks[b], self.name, b, self.steps[b])
            batch.codes[b] = msj_control.step_system(batch.sim.state, batch.sim.params, batch.ctl, b, action,
                                                     batch.obs[b], batch.masks[b])
            batch.finish()
            self.steps[b] += 1
        return batch.sim.status(b)


@njit
def _outputs(floats, ints, sys_i, rewards, dts, ended):
    """Each copy's reward, elapsed time and end of episode (truncated, or its measurement complete) after a step: one
    compiled call rather than four array operations per step."""
    for b in range(rewards.shape[0]):
        rewards[b] = floats[b, msj_control.F_REWARD]
        dts[b] = floats[b, msj_control.F_DT]
        ended[b] = ints[b, msj_control.X_TRUNCATED] != 0 or sys_i[b, msj.S_STATUS] != msj.RUNNING
