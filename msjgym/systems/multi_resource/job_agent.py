"""The agent path of ``msjgym/MultiResourceJobs-v0`` (no gymnasium needed): its spec (:class:`ResourceJobSpec`), the
batch of systems behind the environment (:class:`ResourceJobBatch`), and the replications a policy of the user's
schedules through this observation for :func:`msjgym.evaluate.evaluate` (:class:`ResourceJobReplications`): the
multiserver-job family's job-scheduling agent path (:mod:`msjgym.systems.msj.job_agent`) on this family's record,
simulation and decision path (:mod:`msjgym.systems.multi_resource.job_control`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from msjgym.api import Scenario, load_scenario
from msjgym.core import rng
from msjgym.core.user_policy import check_saved_model
from msjgym.core.validation import check_number
from msjgym.errors import MsjgymError
from msjgym.systems.msj import backfilling
from msjgym.systems.msj import control as msj_control
from msjgym.systems.msj import job_control as msj_jc
from msjgym.systems.msj.agent import EnvSpec
from msjgym.systems.msj.family import AgentRuns, job_env_settings
from msjgym.systems.msj.job_agent import DEFAULT_WINDOW, MAX_JOB_WINDOW, JobAgentReplications, JobBatch, JobSpecViews
from msjgym.systems.msj.job_observation import DEFAULT_TIME_SCALE
from msjgym.systems.msj.simulation import DEFAULT_BSLD_THRESHOLD
from msjgym.systems.multi_resource import job_control as jc
from msjgym.systems.multi_resource.contract import MultiResourcePolicy
from msjgym.systems.multi_resource.job_observation import ResourceJobLayout
from msjgym.systems.multi_resource.model import MultiResourceModel
from msjgym.systems.multi_resource.simulation import (MultiResourceRuns, MultiResourceSimulation, demand_columns,
                                                      per_job_header)
from msjgym.systems.multi_resource.trace import resource_loop_integrals, resource_replay_metrics

RESOURCE_JOB_ENV_ID = "msjgym/MultiResourceJobs-v0"

ORDERS = ("fcfs", "sjf")
"""``base_order``: the ``priority`` policy's orders that read no server need (arrival order; shortest requested time
first). Its others weigh a job's need in servers, which a demand vector does not have."""
REWARDS = {"bounded-slowdown": msj_jc.R_BSLD, "mean-bounded-slowdown": msj_jc.R_MEAN_BSLD, "wait": msj_jc.R_WAIT}

RESOURCE_JOB_AGENT = MultiResourcePolicy(
    name="agent", summary="decisions taken by an agent through msjgym/MultiResourceJobs-v0", preemptive=False,
    source="", state=backfilling.STATE)
"""The systems' declaration: decisions taken by the agent (no kernel), with the area of the ``priority`` orders that
choose and sort the shown jobs."""


@dataclass(frozen=True)
class ResourceJobSpec(JobSpecViews):
    """A validated ``msjgym/MultiResourceJobs-v0`` configuration.

    Attributes:
        base: the system's part, validated as ``msjgym/MSJ-v0``'s (scenario, horizons, measurement, trace windows,
            τ of the bounded slowdown).
        window: K, the waiting jobs shown. base_order: the order that chooses and sorts them (:data:`ORDERS`).
        reward: see the environment's Reward. time_scale: T of the time columns log(1 + t / T) (time units).
    """

    base: EnvSpec
    window: int
    base_order: str
    reward: str
    time_scale: float

    @classmethod
    def make(cls, scenario: str | Scenario = "gpu-cluster", window: int = DEFAULT_WINDOW, base_order: str = "fcfs",
             reward: str = "mean-bounded-slowdown", horizon_jobs: int | None = 256, horizon_time: float | None = None,
             jobs: int | None = None, warmup: int = 0, batches: int = 1,
             bsld_threshold: float = DEFAULT_BSLD_THRESHOLD, trace_windows: bool | None = None,
             time_scale: float = DEFAULT_TIME_SCALE, **params: object) -> ResourceJobSpec:
        if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or not 1 <= window <= MAX_JOB_WINDOW:
            raise MsjgymError(f"window = {window!r}: must be an integer in [1, {MAX_JOB_WINDOW:,}] (K, the waiting "
                              "jobs shown)")
        for name, value, valid in (("base_order", base_order, ORDERS), ("reward", reward, REWARDS)):
            if value not in valid:
                raise MsjgymError(f"{name} = {value!r}: must be one of {', '.join(map(repr, valid))}")
        scale = check_number("time_scale", time_scale, 1e-9, 1e12, error=MsjgymError,
                             why="T of the time features log(1 + t / T), in the scenario's time unit")
        if isinstance(scenario, str):
            scenario = load_scenario(scenario, params)
            params = {}
        if not isinstance(scenario.model, MultiResourceModel):
            raise MsjgymError(f"scenario {scenario.name!r}: {RESOURCE_JOB_ENV_ID} runs multi-resource scenarios "
                              "(system = \"multi-resource\"; msjgym list)")
        if trace_windows is None:  # a trace: episodes are windows of horizon_jobs jobs
            trace_windows = scenario.model.trace is not None and bool(horizon_jobs)
        base = EnvSpec.make(scenario, "start", 1, horizon_jobs, horizon_time, jobs, warmup, batches, False, "holding",
                            bsld_threshold, trace_windows, **params)
        return cls(base, int(window), base_order, reward, float(scale))

    @property
    def action_count(self) -> int:
        return self.window

    @cached_property
    def layout(self) -> ResourceJobLayout:
        m = self.model
        return ResourceJobLayout(self.window, tuple(m.resources), tuple(m.capacity), int(m.nodes), self.time_scale)

    def describe(self) -> str:
        return f"window={self.window}, base_order={self.base_order!r}, resources={','.join(self.model.resources)}"

    def settings(self) -> dict[str, Any]:
        """The arguments that fix the observation and the actions (saved with a trained model by
        ``msjgym.envs.sb3.record_env``; read back by ``--policy sb3:MODEL.zip``)."""
        return {"window": self.window, "base_order": self.base_order, "time_scale": self.time_scale}


class ResourceJobBatch(JobBatch):
    """B multi-resource systems under an agent's job-by-job control: MSJ's :class:`~msjgym.systems.msj.job_agent.JobBatch`
    stepping this family's job control."""

    control = jc

    def __init__(self, spec: ResourceJobSpec, batch: int) -> None:
        self.spec = spec
        base = spec.base
        self.sim = MultiResourceSimulation(spec.model, RESOURCE_JOB_AGENT, base.config, rng.spawn_states(0, batch)[0])
        reward = REWARDS[spec.reward]
        self.ctl = msj_control.new_control(batch, msj_control.MODE_QUEUE, 1, base.horizon_time, base.horizon_jobs,
                                           False, msj_jc.control_reward(reward),
                                           base.horizon_jobs if base.trace_windows else 0)
        self.jc = jc.new_job_control(batch, spec.window, 1, msj_jc.ACTION_PICK, backfilling.ORDERS.index(
            spec.base_order), backfilling.B_NONE, reward, spec.time_scale)
        self._buffers(batch, spec.observation_size, spec.action_count)
        self.obs = np.zeros((batch, *spec.observation_shape), np.float32)


class ResourceJobReplications(JobAgentReplications):
    """``reps`` replications of a multi-resource scenario scheduled by ``policy`` (``FILE.py:NAME``, ``sb3:MODEL.zip``
    or a policy object) through ``msjgym/MultiResourceJobs-v0``'s observation (``settings``: its arguments, e.g. a
    model's saved ones), with the seeds of the built-in path (the interface of
    :class:`msjgym.systems.msj.job_agent.JobAgentReplications`)."""

    spec_class = ResourceJobSpec
    settings_keys = ("window", "base_order", "time_scale")

    batch_class = ResourceJobBatch


def check_user_policy(policy: Any, run: Any) -> dict[str, Any]:
    """The ``msjgym/MultiResourceJobs-v0`` arguments a policy of the user's decides with (an ``sb3:MODEL.zip`` saved
    from this environment, or an object, class or ``FILE.py:NAME`` with ``env_settings = {"id":
    "msjgym/MultiResourceJobs-v0", ...}``); a one-line error otherwise."""
    settings = job_env_settings(policy, run, RESOURCE_JOB_ENV_ID)
    if settings is None:
        check_saved_model(policy)  # a model that is not there: that error first
        raise MsjgymError(f"{policy}: a policy of yours schedules a multi-resource system through "
                          f"{RESOURCE_JOB_ENV_ID}: give an sb3:MODEL.zip trained on it (saved with "
                          "msjgym.envs.sb3.record_env) or a policy with env_settings = {\"id\": "
                          f"\"{RESOURCE_JOB_ENV_ID}\", \"window\": K}}")
    return settings


class ResourceAgentRuns(AgentRuns):
    """The evaluator's replications of a policy of the user's deciding through ``msjgym/MultiResourceJobs-v0``
    (MSJ's :class:`~msjgym.systems.msj.family.AgentRuns` with this family's replications and metrics)."""

    job_env = RESOURCE_JOB_ENV_ID

    @staticmethod
    def job_replications() -> type:
        return ResourceJobReplications

    def _unit_metrics(self, bstat: np.ndarray, bsys: np.ndarray, hist: np.ndarray) -> dict[str, float]:
        return MultiResourceRuns._unit_metrics(self, bstat, bsys, hist)

    def job_demand(self, trace: Any) -> dict[str, np.ndarray]:
        return demand_columns(self.model, trace)

    def per_job_header(self) -> dict[str, Any]:
        return per_job_header(self.model, self.name, self.scenario.name)

    def replay_metrics(self, trace: Any, completion: np.ndarray, wait: np.ndarray) -> dict[str, float]:
        if self.model.is_msj:
            return super().replay_metrics(trace, completion, wait)
        return resource_replay_metrics(self.model, trace, completion, wait, self.warmup, self.config.bsld_threshold)

    def check_values(self, rep: int, batch: int | None = None) -> dict[str, float]:
        m = self.model
        if m.is_msj:
            return super().check_values(rep, batch)
        if m.trace is not None:
            if self.warmup:
                return {}
            sim, b = self._at(rep)
            return resource_loop_integrals(m, sim.state, b)
        return MultiResourceRuns.check_values(self, rep, batch)  # its branch without super()

    def invariants(self) -> list:
        if self.model.is_msj or self.model.trace is not None:
            return super().invariants()
        return MultiResourceRuns.invariants(self)
