"""``msjgym/MultiResourceJobs-v0``: pick the next job of a multi-resource machine (cores, GPUs, memory, ...) from the K
best waiting jobs, each a row of normalised features (its demand vector as fractions of a node's capacity, the
machine's free vector).

The single environment (:class:`MultiResourceJobsEnv`) is the native vector environment
(:class:`MultiResourceJobsVectorEnv`) with one copy, on the batched base of :mod:`msjgym.envs.base`; the spec and the
batch: :mod:`msjgym.systems.multi_resource.job_agent`; the compiled steps:
:mod:`msjgym.systems.multi_resource.job_control`; the columns: :mod:`msjgym.systems.multi_resource.job_observation`.
"""
from __future__ import annotations

from msjgym.envs.base import EnvRegistration
from msjgym.envs.docs import EnvDoc
from msjgym.systems.msj.env import EPISODE_ARGUMENTS, JobSchedulingEnv, JobSchedulingVectorEnv
from msjgym.systems.multi_resource.job_agent import (
    RESOURCE_JOB_ENV_ID, ResourceJobBatch, ResourceJobSpec)
from msjgym.systems.multi_resource.job_observation import FIXED_COLUMNS, RESOURCE_COLUMNS

ENVS = [EnvRegistration(RESOURCE_JOB_ENV_ID, "msjgym.systems.multi_resource.env:MultiResourceJobsEnv",
                        "msjgym.systems.multi_resource.env:MultiResourceJobsVectorEnv", "multi-resource")]
__all__ = ["RESOURCE_JOB_ENV_ID", "MultiResourceJobsEnv", "MultiResourceJobsVectorEnv"]

_ROWS = tuple((f"[i, {k}]", name, meaning) for k, (name, meaning) in enumerate(FIXED_COLUMNS)) + tuple(
    (f"[i, 11 + {q}R + r]", f"{name}[r]", meaning) for q, (name, meaning) in enumerate(RESOURCE_COLUMNS))

DOC = EnvDoc(
    id=RESOURCE_JOB_ENV_ID,
    title="Pick the next job of a multi-resource machine from the K best waiting jobs, each a row of normalised "
          "features.",
    description="""A multi-resource machine: N identical nodes, each with a capacity vector over named resources
    (cores, GPUs, memory, ...); each job holds a demand vector on one node for its whole run time
    (``system = "multi-resource"`` scenarios: the built-in ``gpu-cluster``, the default, or a TOML file, Poisson
    arrivals or a replayed trace, ``arrivals = { trace = FILE }``). The observation is a fixed window of the K best
    waiting jobs (under ``base_order``), one row of F = 11 + 3R features per job (R resources): the job-feature view
    of ``msjgym/JobScheduling-v0`` (RLScheduler's design: Zhang, Dai, He, Bao & Xie, SC'20) with each job's demand
    as fractions of one node's capacity and the machine's free and queued amounts as fractions of its total, so one
    model runs unchanged on any machine size and any trace or Poisson scenario with the same resources (their
    number fixes F). The machine's columns are repeated in every row, for one network shared by the rows.
    Event-driven: each step runs the system to the next decision epoch (``info["dt"]``: the time it advanced).""",
    action_space="""Discrete(K): i picks the job of row i. If it fits some node it starts now, on the first node it
    fits, and if a waiting job still fits the agent picks again at the same instant. If it fits no node it is the
    reserved head: nothing else starts and the system runs to the next event, where the agent picks again (it may
    pick another job) -- no backfilling (``backfill="none"`` of ``msjgym/JobScheduling-v0``). Decision epochs are
    the instants at which some waiting job fits some node. Named action: ``ResourceJobView.pick(i)``.""",
    observation=_ROWS + (
        ("", "", "Row i (i < K) is the i-th best waiting job under ``base_order`` (``\"fcfs\"``: arrival order; "
                 "``\"sjf\"``: shortest requested time first, the ``priority`` policy's orders), best first; when "
                 "more than K jobs wait, the K best are shown (the ``queue`` column says how many wait). Rows past "
                 "the waiting jobs are empty (``present`` 0 and every job column 0; the machine columns are filled). "
                 "d_r is the job's demand of resource r, C_r one node's capacity, N the nodes, T = ``time_scale``. "
                 "Requested times r are the jobs' runtime estimates (a trace's requested times, else the scenario's "
                 "``estimate`` law); actual run times are never shown. No column depends on a trace's maxima or its "
                 "classes. Layout: ``msjgym.systems.multi_resource.job_observation``; named view "
                 "``ResourceJobView`` (``view.demands``, ``view.free``, ``view.column(\"free[gpus]\")``)."),),
    reward="""``reward="mean-bounded-slowdown"`` (default): 0 on every step but the episode's last, which gets −(the
    mean bounded slowdown of the jobs completed in the episode), max(1, (wait + run time) / max(run time, τ)), τ =
    ``bsld_threshold`` (RLScheduler's reward, γ = 1). ``"bounded-slowdown"``: −Σ bounded slowdowns of the jobs that
    completed during the step. ``"wait"``: −∫ (waiting jobs) dt over the step.""",
    starting_state="""An empty machine at time 0 (every action allowed at the first step, which starts the clock);
    with a trace, the first arrival of the episode's window.""",
    episode_end="""With ``trace_windows`` (the default on a trace) each episode replays ``horizon_jobs`` (default 256)
    consecutive trace jobs from a start drawn uniformly at reset, until all of them completed; else truncated at
    ``horizon_jobs`` arrivals or at ``horizon_time``, or, with ``jobs``, once that many measured jobs completed
    (``episode_result()`` then reports the episode's statistics as ``msjgym evaluate`` does). Never terminated.""",
    masks="""``action_masks()``: the rows holding a job (a job that fits no node may be picked: it is reserved).
    ``action_space.sample()`` draws among the allowed actions.""",
    info="""``time``, ``events`` (cumulative), ``waiting`` (jobs waiting now).""",
    arguments={
        "scenario": "a multi-resource scenario's name or TOML file (``msjgym list``; default ``\"gpu-cluster\"``)",
        "window": "K, the waiting jobs shown (rows of the observation; the actions)",
        "base_order": "which K jobs are shown and in which order: ``\"fcfs\"`` or ``\"sjf\"`` (by requested times)",
        "reward": "``\"mean-bounded-slowdown\"``, ``\"bounded-slowdown\"`` or ``\"wait\"``: see Reward",
        **EPISODE_ARGUMENTS,
        "time_scale": "T of the time features log(1 + t / T), in the scenario's time unit (default 3600: an hour in "
                      "seconds; set it to the scenario's typical requested time, e.g. 1 for a Poisson scenario with "
                      "mean duration 1)",
        "**params": "the scenario's parameters as keywords (e.g. ``load=0.8``)",
    },
    version_history=("v0: initial version (pick action, no backfilling; three rewards).",),
)


class MultiResourceJobsVectorEnv(JobSchedulingVectorEnv):
    __doc__ = """``num_envs`` independent copies of ``msjgym/MultiResourceJobs-v0`` (same arguments), stepped by one
    compiled call (see :class:`~msjgym.envs.base.BatchedVectorEnv`: NEXT_STEP autoreset, ``reset(seed=s)`` seeds copy
    i from ``SeedSequence(s).spawn(num_envs)[i]``, masks in ``action_masks()``); MSJ's job-scheduling vector
    environment with this family's spec and batch.
    """ + DOC.docstring()

    doc = DOC
    spec_type = ResourceJobSpec
    batch_type = ResourceJobBatch


class MultiResourceJobsEnv(JobSchedulingEnv):
    __doc__ = """A multi-resource machine whose next job an agent picks from the K best waiting jobs, each a row of
    normalised features.
    """ + DOC.docstring()

    doc = DOC
    vector_type = MultiResourceJobsVectorEnv

