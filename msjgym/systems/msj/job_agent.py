"""The agent path of ``msjgym/JobScheduling-v0`` (no gymnasium needed): its spec (:class:`JobSpec`, the validated
arguments, what a policy of the user's is built with), the batch of systems behind the environment
(:class:`JobBatch`), and the replications a policy of the user's schedules through this observation for
:func:`msjgym.evaluate.evaluate` (:class:`JobAgentReplications`). The environments: :mod:`msjgym.systems.msj.env`; the
compiled decision path: :mod:`msjgym.systems.msj.job_control`; the observation's columns:
:mod:`msjgym.systems.msj.job_observation`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from msjgym.api import Scenario
from msjgym.core import rng
from msjgym.core.env_batch import EnvBatch
from msjgym.core.fast_call import FastCall
from msjgym.core.user_policy import checked_action, load_user_policy
from msjgym.core.validation import check_number
from msjgym.errors import MsjgymError
from msjgym.systems.msj.contract import Policy
from msjgym.systems.msj import backfilling
from msjgym.systems.msj.backfilling import BACKFILLS, ORDERS
from msjgym.systems.msj import control as msj_control
from msjgym.systems.msj import job_control as jc
from msjgym.systems.msj import state as msj
from msjgym.systems.msj.agent import EnvSpec, _outputs
from msjgym.systems.msj.simulation import DEFAULT_BSLD_THRESHOLD, MSJSimulation
from msjgym.systems.msj.job_observation import DEFAULT_TIME_SCALE, JobLayout
from msjgym.systems.msj.model import MSJModel

JOB_ENV_ID = "msjgym/JobScheduling-v0"

ACTIONS = {"pick": jc.ACTION_PICK, "inspect": jc.ACTION_INSPECT, "backfill": jc.ACTION_BACKFILL}
REWARDS = {"bounded-slowdown": jc.R_BSLD, "mean-bounded-slowdown": jc.R_MEAN_BSLD, "wait": jc.R_WAIT,
           "utilization": jc.R_UTIL}
DEFAULT_WINDOW = 128
MAX_JOB_WINDOW = 4096
"""K, rows of the observation: a model's network runs over every row at every decision."""


JOB_AGENT = Policy(name="agent", summary="decisions taken by an agent through msjgym/JobScheduling-v0",
                   preemptive=False, source="", state=backfilling.STATE)
"""The systems' declaration: decisions taken by the agent (no kernel), with the state of the backfilling rules it
applies around the agent's picks (:mod:`msjgym.systems.msj.backfilling`)."""


class JobSpecViews:
    """What an environment and a policy's constructor read of a job-feature spec, from its ``base`` (the
    :class:`~msjgym.systems.msj.agent.EnvSpec` it runs on) and its ``layout`` (the observation's): shared by
    ``msjgym/JobScheduling-v0``'s spec and the multi-resource family's."""

    @property
    def scenario(self) -> Scenario:
        return self.base.scenario

    @property
    def model(self) -> MSJModel:
        """The scenario's validated model (an ``MSJModel``, or a family's subclass of it)."""
        return self.base.scenario.model

    @property
    def config(self):
        return self.base.config

    @property
    def observation_shape(self) -> tuple[int, int]:
        """(K, F): rows (shown jobs) × features (the layout's: F = 14, or 17 with ``estimate_accuracy``, in
        ``msjgym/JobScheduling-v0``; 11 + 3R in the multi-resource environment)."""
        return self.layout.shape

    @property
    def observation_size(self) -> int:
        """K·F, the observation's number of entries (it is a K × F array)."""
        return self.layout.size

    def view(self, observation: np.ndarray):
        """The named view of an observation (the layout's, e.g.
        :class:`~msjgym.systems.msj.job_observation.JobView`)."""
        return self.layout.view(observation)


@dataclass(frozen=True)
class JobSpec(JobSpecViews):
    """A validated ``msjgym/JobScheduling-v0`` configuration.

    Attributes:
        base: the system's part, validated as ``msjgym/MSJ-v0``'s (scenario, horizons, measurement, trace windows,
            τ of the bounded slowdown).
        window: K, the waiting jobs shown (rows). action: "pick", "inspect" or "backfill". base_order: the order that chooses
            and sorts the shown jobs and orders the backfilling candidates (``priority``'s orders). backfill: the
            rule around a head that does not fit. reward: see the environment's Reward. time_scale: T of the time
            columns log(1 + t / T) (time units). estimate_accuracy: the observation ends with the three
            estimate-accuracy columns (:data:`~msjgym.systems.msj.job_observation.ACCURACY_COLUMNS`; F = 17).
    """

    base: EnvSpec
    window: int
    action: str
    base_order: str
    backfill: str
    reward: str
    time_scale: float
    estimate_accuracy: bool = False

    @classmethod
    def make(cls, scenario: str | Scenario = "lublin-feitelson", window: int = DEFAULT_WINDOW, action: str = "pick",
             base_order: str = "fcfs", backfill: str = "easy", reward: str = "mean-bounded-slowdown",
             horizon_jobs: int | None = 256, horizon_time: float | None = None, jobs: int | None = None,
             warmup: int = 0, batches: int = 1, bsld_threshold: float = DEFAULT_BSLD_THRESHOLD,
             trace_windows: bool | None = None, time_scale: float = DEFAULT_TIME_SCALE,
             estimate_accuracy: bool = False, **params: object) -> JobSpec:
        if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or not 1 <= window <= MAX_JOB_WINDOW:
            raise MsjgymError(f"window = {window!r}: must be an integer in [1, {MAX_JOB_WINDOW:,}] (K, the waiting "
                              "jobs shown)")
        for name, value, valid in (("action", action, ACTIONS), ("base_order", base_order, ORDERS),
                                   ("backfill", backfill, BACKFILLS), ("reward", reward, REWARDS)):
            if value not in valid:
                raise MsjgymError(f"{name} = {value!r}: must be one of {', '.join(map(repr, valid))}")
        if action == "backfill" and backfill != "easy":
            raise MsjgymError(f"backfill = {backfill!r}: action = \"backfill\" chooses the jobs EASY may backfill; "
                              "it needs backfill = \"easy\"")
        if not isinstance(estimate_accuracy, (bool, np.bool_)):
            raise MsjgymError(f"estimate_accuracy = {estimate_accuracy!r}: must be true or false (the observation's "
                              "estimate-accuracy columns)")
        scale = check_number("time_scale", time_scale, 1e-9, 1e12, error=MsjgymError,
                             why="T of the time features log(1 + t / T), in the scenario's time unit")
        if trace_windows is None:  # a trace: episodes are windows of horizon_jobs jobs, as RLScheduler trains
            loaded = scenario if isinstance(scenario, Scenario) else None
            if loaded is None:
                from msjgym.api import load_scenario
                scenario = loaded = load_scenario(scenario, params)
                params = {}
            trace_windows = loaded.model.trace is not None and bool(horizon_jobs)
        base = EnvSpec.make(scenario, "start", 1, horizon_jobs, horizon_time, jobs, warmup, batches, False, "holding",
                            bsld_threshold, trace_windows, **params)
        return cls(base, int(window), action, base_order, backfill, reward, float(scale), bool(estimate_accuracy))

    # ------------------------------------------------------------------ what a policy's constructor reads
    @property
    def action_count(self) -> int:
        return 2 if self.action == "inspect" else self.window

    @cached_property
    def layout(self) -> JobLayout:
        return JobLayout(self.window, int(self.model.servers), self.time_scale, self.estimate_accuracy)

    def describe(self) -> str:
        return (f"window={self.window}, action={self.action!r}, base_order={self.base_order!r}, "
                f"backfill={self.backfill!r}" + (", estimate_accuracy=True" if self.estimate_accuracy else ""))

    def settings(self) -> dict[str, Any]:
        """The arguments that fix the observation, the actions and their meaning, as keywords of
        ``msjgym/JobScheduling-v0`` (saved with a trained model: ``msjgym.envs.sb3.record_env``, read back by
        ``--policy sb3:MODEL.zip``)."""
        settings = {"window": self.window, "action": self.action, "base_order": self.base_order,
                    "backfill": self.backfill, "time_scale": self.time_scale}
        if self.estimate_accuracy:  # only when on: the settings of a model without the columns are as before
            settings["estimate_accuracy"] = True
        return settings


class JobBatch(EnvBatch):
    """B systems under an agent's job-by-job control (an :class:`~msjgym.core.env_batch.EnvBatch`). ``control`` is
    the job-control module the batch steps (a derived family's batch sets its own and writes only ``__init__``)."""

    control = jc

    def __init__(self, spec: JobSpec, batch: int) -> None:
        self.spec = spec
        base = spec.base
        model = spec.model
        self.sim = MSJSimulation(model, JOB_AGENT, base.config, rng.spawn_states(0, batch)[0])
        backfill = BACKFILLS.index(spec.backfill)
        reward = REWARDS[spec.reward]
        self.ctl = msj_control.new_control(batch, jc.control_mode(backfill), 1, base.horizon_time, base.horizon_jobs,
                                           False, jc.control_reward(reward),
                                           base.horizon_jobs if base.trace_windows else 0)
        self.jc = jc.new_job_control(batch, spec.window, int(model.servers), ACTIONS[spec.action],
                                     ORDERS.index(spec.base_order), backfill, reward, spec.time_scale,
                                     spec.estimate_accuracy)
        self._buffers(batch, spec.observation_size, spec.action_count)
        self.obs = np.zeros((batch, *spec.observation_shape), np.float32)

    @property
    def state(self):
        return self.sim.state

    def step(self, actions: np.ndarray, resetting: np.ndarray) -> None:
        step = self.__dict__.get("_step")
        if step is None or step.bound[0] is not self.sim.state:  # first call, or the storage grew: typed once more
            step = self._step = FastCall(self.control.step_batch, (self.sim.state, self.sim.params, self.ctl, self.jc),
                                         (actions, resetting, self.obs, self.masks, self.codes))
        step(actions, resetting, self.obs, self.masks, self.codes)
        if self.codes.any():
            bad = np.flatnonzero(self.codes == 1)
            if bad.size:
                b = int(bad[0])
                raise RuntimeError(f"env {b}: the control layer refused action {int(actions[b])}, which its mask "
                                   "allowed")
            self.finish()
        self._outputs()

    def step_one(self, b: int, action: int) -> None:
        """Step system b alone (the agent path of :func:`msjgym.evaluate`)."""
        self.codes[b] = self.control.step_system(self.sim.state, self.sim.params, self.ctl, self.jc, b, action, self.obs[b],
                                       self.masks[b])
        if self.codes[b] == 1:
            raise RuntimeError(f"env {b}: the control layer refused action {action}, which its mask allowed")
        self.finish()

    def reset_copies(self, which: np.ndarray) -> None:
        state, params = self.sim.state, self.sim.params
        for b in which:
            self.control.reset_system(state, params, self.ctl, self.jc, b)
            self.control.observe(state, params, self.ctl, self.jc, b, self.obs[b], self.masks[b])
            self.masks[b, :] = True  # the initial state: every action is allowed (and starts the clock)
        self._outputs()

    def _outputs(self) -> None:
        _outputs(self.ctl.floats, self.ctl.ints, self.sim.state.sys_i, self.rewards, self.dts, self.ended)

    def info(self, b: int) -> dict:
        state = self.sim.state
        return {"time": float(state.sys_f[b, msj.T_NOW]), "events": int(state.sys_i[b, msj.S_EVENTS]),
                "waiting": int(state.sys_i[b, msj.S_NJOBS] - state.sys_i[b, msj.S_NSERV])}

    def finish(self) -> None:
        """Grow the job storage and resume the systems that ran out of it (codes == 2)."""
        while (self.codes == 2).any():
            self.sim.grow()
            self.control.resume_batch(self.sim.state, self.sim.params, self.ctl, self.jc, self.codes == 2, self.obs,
                            self.masks, self.codes)

    def ended_now(self) -> np.ndarray:
        """bool[B]: truncated at the horizon, or the measurement is complete."""
        return (self.ctl.ints[:, msj_control.X_TRUNCATED] != 0) | (self.sim.state.sys_i[:, msj.S_STATUS] != msj.RUNNING)


class JobAgentReplications:
    """``reps`` replications of a multiserver-job scenario scheduled by ``policy`` (``FILE.py:NAME``,
    ``sb3:MODEL.zip`` or a policy object) through ``msjgym/JobScheduling-v0``'s observation (``settings``: its
    arguments, e.g. a model's saved ones), with the seeds of the built-in path. The interface of
    :class:`msjgym.systems.msj.agent.AgentReplications`. ``spec_class``, ``batch_class`` and ``settings_keys`` are
    what a derived family's environment replaces."""

    spec_class = JobSpec
    batch_class = JobBatch
    settings_keys = ("window", "action", "base_order", "backfill", "time_scale", "estimate_accuracy")
    """The environment's arguments a saved model's settings carry into the evaluation."""

    def __init__(self, scenario: Scenario, policy: Any, settings: dict[str, Any], *, reps: int = 10,
                 jobs: int = 100_000, warmup: int = 0, batches: int = 20, seed: int = 0) -> None:
        spec = self.spec_class.make(scenario, horizon_jobs=None, jobs=jobs, warmup=warmup, batches=batches,
                                    trace_windows=False, reward="bounded-slowdown",
                                    **{k: v for k, v in settings.items() if k in self.settings_keys})
        self.name, self.decide = load_user_policy(policy, spec)
        self.batch = batch = self.batch_class(spec, reps)
        batch.seed(np.random.SeedSequence(seed).spawn(reps))
        batch.step(np.zeros(reps, np.int64), np.ones(reps, np.bool_))
        self.steps = [0] * reps

    def advance(self, b: int, max_steps: int) -> int:
        """Let the policy take up to ``max_steps`` decisions in replication b; returns its simulation status."""
        batch = self.batch
        for _ in range(max_steps):
            if batch.ended_now()[b]:
                break
            action = checked_action(self.decide, batch.obs[b], batch.masks[b], self.name, b, self.steps[b])
            batch.step_one(b, action)
            self.steps[b] += 1
        return batch.sim.status(b)


