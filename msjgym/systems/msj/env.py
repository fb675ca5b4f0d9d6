"""``msjgym/MSJ-v0``: schedule multiserver jobs, one decision at a time; ``msjgym/JobScheduling-v0``: pick the next
job of an HPC machine from the K best waiting jobs, each a row of normalised features.

The single environments (:class:`MSJEnv`, :class:`JobSchedulingEnv`) are the native vector environments
(:class:`MSJVectorEnv`, :class:`JobSchedulingVectorEnv`) with one copy, on the batched base of
:mod:`msjgym.envs.base`; the systems and the specs: :mod:`msjgym.systems.msj.agent`,
:mod:`msjgym.systems.msj.job_agent`; the compiled control steps: :mod:`msjgym.systems.msj.control`,
:mod:`msjgym.systems.msj.job_control`.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np

from msjgym.envs.base import BatchedEnv, BatchedVectorEnv, EnvRegistration
from msjgym.envs.docs import EnvDoc
from msjgym.errors import MsjgymError
from msjgym.evaluate.evaluator import summarize
from msjgym.evaluate.result import Result
from msjgym.systems.msj.agent import EnvSpec, MSJBatch
from msjgym.systems.msj.family import EpisodeRuns
from msjgym.systems.msj.job_agent import JOB_ENV_ID, JobBatch, JobSpec
from msjgym.systems.msj.job_observation import ACCURACY_COLUMNS, COLUMNS
from msjgym.systems.msj.state import RUNNING

ENV_ID = "msjgym/MSJ-v0"
ENVS = [EnvRegistration(ENV_ID, "msjgym.systems.msj.env:MSJEnv", "msjgym.systems.msj.env:MSJVectorEnv", "msj"),
        EnvRegistration(JOB_ENV_ID, "msjgym.systems.msj.env:JobSchedulingEnv",
                        "msjgym.systems.msj.env:JobSchedulingVectorEnv", "msj")]
__all__ = ["ENV_ID", "JOB_ENV_ID", "MSJEnv", "MSJVectorEnv", "JobSchedulingEnv", "JobSchedulingVectorEnv"]

DOC = EnvDoc(
    id=ENV_ID,
    title="Schedule the jobs of a multiserver-job system, one decision at a time.",
    description="""A multiserver-job system: n servers, K job classes, a job of class c needs v_c servers at once for
    its whole service; Poisson arrivals (or a trace) at the scenario's rates (``msjgym list scenarios``; default
    "one-and-n", Grosof et al.'s "1 and n" system, 10 servers). An agent decides which waiting jobs start
    (``mode="start"``, non-preemptive) or which set of jobs is served after every event (``mode="preemptive"``,
    preempt-resume). Event-driven: each step runs the system to the next decision epoch; time advances between
    steps by ``info["dt"]`` (0 for several decisions at one instant).""",
    action_space="""``mode="start"`` (a decision epoch is an instant at which some waiting job fits):
    Discrete(W + K + 1): ``i < W`` starts the i-th oldest waiting job; ``W + c`` starts the oldest waiting job of
    class c; ``W + K`` waits for the next event. ``mode="preemptive"`` (a decision epoch follows every event):
    Discrete(K + 1): ``c < K`` adds the oldest not yet chosen class-c job to the set to serve; ``K`` commits the set
    (the jobs not chosen are preempted, preempt-resume) and waits for the next event. Named actions:
    ``StartView.start_slot(i)``, ``start_class(c)``, ``wait``; ``PreemptiveView.choose(c)``, ``commit``.""",
    observation=(
        ("0", "free servers", "servers free now / n"),
        ("1 + 3c + 0", "class c waiting", "jobs of class c waiting"),
        ("1 + 3c + 1", "class c in service", "jobs of class c in service"),
        ("1 + 3c + 2", "class c oldest age", "age of its oldest waiting job (time units; 0: none)"),
        ("1 + 3K + (3 + K)·i + 0", "slot i present", "1 if the i-th oldest waiting job exists (i < W)"),
        ("1 + 3K + (3 + K)·i + 1", "slot i need", "its need / n"),
        ("1 + 3K + (3 + K)·i + 2", "slot i age", "its age (time units)"),
        ("1 + 3K + (3 + K)·i + 3 + c", "slot i class", "one-hot: 1 if its class is c"),
        ("1 + 3K + (3 + K)·W + i", "slot i requested time", "only with ``estimates=True``: its requested run time "
                                                           "(runtime estimate; time units; 0: empty slot)"),
        ("", "", "That is ``mode=\"start\"`` (the default). ``mode=\"preemptive\"``: [servers left to choose / n, 1 if "
                 "more than L jobs are present; per class: jobs present, chosen, in service; per sequence slot (the "
                 "L oldest jobs present, in arrival order): present, in service, class one-hot; with "
                 "``estimates=True``, then each sequence slot's requested run time]. Layout: "
                 "``msjgym.systems.msj.observation``; named views ``StartView`` / ``PreemptiveView``."),
    ),
    reward="""``reward="holding"`` (the default): −∫ (jobs in system) dt over the step: by Little's law, maximising the
    return minimises the mean response time. ``reward="bounded-slowdown"``: −max(1, (wait + run time) / max(run
    time, τ)) for each job that completed during the step (its bounded slowdown, τ = ``bsld_threshold``; Feitelson,
    Rudolph, Schwiegelshohn, Sevcik & Wong, "Theory and practice in parallel job scheduling", JSSPP 1997), so an
    episode's return is −Σ bounded slowdowns of the jobs it completed: the objective of RLScheduler (Zhang, Dai, Bao,
    Xie & Lu, "RLScheduler: an automated HPC batch job scheduler using reinforcement learning", SC'20, §3), the HPC
    literature's measure for traces (``msjgym evaluate`` reports its mean as ``bounded_slowdown``). Jobs still in the
    system when an episode is truncated are not credited: on a trace, let episodes run to completion (the whole
    trace, or ``trace_windows=True``).""",
    starting_state="""An empty system at time 0 (every action allowed at the first step, which starts the clock);
    with a trace, the trace's first arrival.""",
    episode_end="""Truncated at ``horizon_jobs`` arrivals (default 1000) or at ``horizon_time``, or, with ``jobs``,
    once that many measured jobs have completed; a replayed trace's episode ends when its last job completed, and
    with ``trace_windows=True`` each episode is a window of ``horizon_jobs`` consecutive trace jobs from a start drawn
    uniformly at reset, run until all of them completed (``MSJEnv.episode_result()`` then reports the episode's statistics
    exactly as ``msjgym evaluate``). Never terminated.""",
    masks="""``action_masks()`` (sb3-contrib's convention): the window slots and classes whose job fits in the free
    servers (start), the classes with a job not yet chosen that fits (preemptive); wait / commit always, but once a
    replayed trace has no arrival left and nothing would run (waiting would strand the jobs).
    ``action_space.sample()`` draws among the allowed actions.""",
    info="""``time``, ``events`` (cumulative).""",
    arguments={
        "scenario": "a built-in scenario's name or a TOML scenario file (``msjgym list scenarios``)",
        "mode": "``\"start\"`` (non-preemptive starts) or ``\"preemptive\"`` (choose the set served after every "
                "event)",
        "window": "W (start: the oldest waiting jobs shown) or L (preemptive: the oldest jobs present shown)",
        "horizon_jobs": "arrivals per episode (0 or None: no job horizon)",
        "horizon_time": "simulated time per episode (None: none)",
        "jobs": "measure the episode as ``msjgym evaluate`` does: it ends once this many measured jobs completed",
        "warmup": "arrivals not measured (with ``jobs``)",
        "batches": "batches of the batch-means CI (with ``jobs``)",
        "estimates": "``True``: the observation ends with the W (L) window (sequence) jobs' requested run times (SWF "
                     "field 9 or CSV ``requested`` on a trace; else the scenario's ``estimate`` law, exact by "
                     "default: the durations themselves). Default ``False`` (observations keep their size)",
        "reward": "``\"holding\"`` (default: −∫ jobs in system dt) or ``\"bounded-slowdown\"`` (−bounded slowdown of each "
                  "job at its completion); see Reward",
        "bsld_threshold": "τ of the bounded slowdown, in the scenario's time unit (default 10, the literature's 10 s, "
                          "as ``msjgym evaluate --bsld-threshold``)",
        "trace_windows": "``True`` (a replayed trace): each episode replays ``horizon_jobs`` consecutive jobs from a "
                         "random start, to completion (training on a trace's many windows, as RLScheduler does); "
                         "default ``False``: every episode replays the trace from its first job",
        "**params": "the scenario's parameters as keywords (e.g. ``servers=16``, ``arrival_rate=...``)",
    },
    version_history=("v0: initial version; later added ``invalid_action`` (a masked action falls back by default "
                     "instead of raising), ``render_mode=\"ansi\"`` and ``estimates`` (off by default).",
                     "v0: added ``reward=\"bounded-slowdown\"`` with ``bsld_threshold``, and ``trace_windows`` (the "
                     "default reward and episodes unchanged).",),
)


class MSJVectorEnv(BatchedVectorEnv):
    __doc__ = """``num_envs`` independent copies of ``msjgym/MSJ-v0`` (same arguments), stepped by one compiled call.

    Autoreset mode NEXT_STEP: the step after an episode's end resets that copy (its action is ignored) and returns
    the new episode's first observation with reward 0. ``reset(seed=s)`` seeds copy i from
    ``SeedSequence(s).spawn(num_envs)[i]``; masks in ``action_masks()`` (bool[num_envs, A]) and
    ``infos["action_mask"]``; a masked action falls back (``invalid_action``) (see
    :class:`~msjgym.envs.base.BatchedVectorEnv`).
    """ + DOC.docstring()

    doc = DOC
    spec_type = EnvSpec
    batch_type = MSJBatch


class MSJEnv(BatchedEnv):
    __doc__ = """A multiserver-job system (n servers, K job classes, Poisson arrivals or a trace) scheduled by an agent.

    Event-driven: each step runs the system to the next decision epoch; time advances between steps by ``info["dt"]``
    (0 for several decisions at one instant). ``info`` also has ``time`` and ``events`` (cumulative).
    """ + DOC.docstring()

    doc = DOC
    vector_type = MSJVectorEnv

    def episode_result(self) -> Result:
        """The episode's statistics, exactly as ``msjgym.evaluate`` reports them (meaningful with ``jobs``)."""
        sim = self._venv._batch.sim
        if sim.status(0) == RUNNING:
            raise MsjgymError("episode_result(): the measurement is not complete (make the environment with jobs=N "
                              "and step until the episode ends)")
        return summarize(self.spec_.scenario, "agent", EpisodeRuns(self.spec_.scenario, sim), -1, 0.0, 0.0)


_FEATURE_ROWS = tuple((f"[i, {k}]", name, meaning) for k, (name, meaning) in enumerate(COLUMNS + ACCURACY_COLUMNS))

EPISODE_ARGUMENTS = {
    "horizon_jobs": "arrivals per episode (the window length with ``trace_windows``; 0 or None: no job horizon)",
    "horizon_time": "simulated time per episode (None: none)",
    "jobs": "measure the episode as ``msjgym evaluate`` does: it ends once this many measured jobs completed",
    "warmup": "arrivals not measured (with ``jobs``)",
    "batches": "batches of the batch-means CI (with ``jobs``)",
    "bsld_threshold": "τ of the bounded slowdown, in the scenario's time unit (default 10, the literature's 10 s)",
    "trace_windows": "a replayed trace: ``True``, each episode replays ``horizon_jobs`` consecutive jobs from a "
                     "random start, to completion; ``False``, from the trace's first job; None (default): True "
                     "on a trace with a job horizon",
}
"""The episode and measurement arguments of the job-feature environments (``msjgym/JobScheduling-v0`` and the
multi-resource family's ``msjgym/MultiResourceJobs-v0``), as their pages document them."""

JOB_DOC = EnvDoc(
    id=JOB_ENV_ID,
    title="Pick the next job of an HPC machine from the K best waiting jobs, each a row of normalised features.",
    description="""A multiserver-job system seen as an HPC machine: n servers (processors), rigid jobs that each
    hold their need of servers for their whole run time; a replayed trace (an SWF log, a TOML scenario file such as
    ``examples/lublin_256.toml``, or the built-in ``lublin-feitelson`` workload model, the default) or Poisson
    arrivals (any multiserver-job scenario). The observation is a fixed window of the K best waiting jobs (under
    ``base_order``), one row of F = 14 features per job (17 with ``estimate_accuracy=True``), every feature normalised (a fraction of the machine, a fixed
    transform of a time, or a ratio) so that one model runs unchanged on any trace, machine size or Poisson scenario;
    the machine's features are repeated in every row, so one network shared by the rows (a job-scoring network,
    permutation-equivariant) sees them. The design of RLScheduler (Zhang, Dai, He, Bao & Xie, "RLScheduler: an
    automated HPC batch job scheduler using reinforcement learning", SC'20): 128 waiting jobs as per-job feature
    vectors, a pick of the next job, and the episode's mean bounded slowdown as the reward over 256-job windows of a
    trace. Event-driven: each step runs the system to the next decision epoch (``info["dt"]``: the time it advanced;
    0 for several decisions at one instant).""",
    action_space="""``action="pick"`` (default): Discrete(K): i picks the job of row i as the *head*. If it fits in
    the free servers it starts now, and if jobs still wait the agent picks again at the same instant. If it does not
    fit, it is reserved: the ``backfill`` rule (the code of the ``priority`` policy, the other waiting jobs in the
    base order) starts the jobs it allows around it, the system runs to the next event, and the agent picks again (it
    may pick another job). ``"none"``: nothing is backfilled; ``"easy"``: EASY backfilling around the head's shadow
    time and extra servers (Lifka, JSSPP 1995; Mu'alem & Feitelson, IEEE TPDS 12(6), 2001, §2);
    ``"easy-narrow"``: RLScheduler's rule (a job backfills only if it ends before the shadow time, candidates in
    arrival order, the head kept until it starts: the agent is not asked while it waits); ``"conservative"``: one
    pick per event, the picked job placed first in the compression of the schedule (every waiting job holds a
    reservation, Mu'alem & Feitelson §2), the others in the base order. Decision epochs: with ``"none"`` and
    ``"easy"`` the instants at which some waiting job fits (when none fits, no pick could start anything), with
    ``"conservative"`` and ``"easy-narrow"`` those at which some job waits; with nothing waiting the system runs to
    the next arrival. These are the ``priority`` policy's semantics with the agent choosing the head, so an agent
    that picks ``priority``'s head reproduces its schedule job for job. ``action="inspect"`` (SchedInspector: Zhang,
    Dai, Bao, Xie & Lu, "SchedInspector: a batch job scheduling inspector using reinforcement learning", HPDC'22):
    Discrete(2): 0 accepts the base order's pick (row 0, flagged by the ``heuristic`` column), which is then picked as
    above; 1 delays it: nothing starts now (no backfilling either) and the next decision comes after the next event.
    ``action="backfill"`` (RLBackfilling: Kolker-Hicks, Zhang & Dai, "A reinforcement learning based backfilling
    strategy for HPC batch jobs", PMBS workshop at SC'23, arXiv:2404.09264; needs ``backfill="easy"``): Discrete(K):
    the base order chooses the head (row 0), started while it fits; when it does not fit it is reserved at its shadow
    time, and i backfills the job of row i now, one job per step, among the jobs EASY allows (the mask); when no shown
    job is allowed, the system runs to the next event. An agent taking the first allowed row is ``priority`` with
    EASY, job for job, while at most K jobs wait. Named actions: ``JobView.pick(i)``, ``JobView.accept``,
    ``JobView.delay``.""",
    observation=_FEATURE_ROWS + (
        ("", "", "Row i (i < K) is the i-th best waiting job under ``base_order`` (``\"fcfs\"``: arrival order; "
                 "``\"sjf\"``, ``\"saf\"``, ``\"f1\"``, ``\"wfp3\"``, ``\"unicep\"``: the ``priority`` policy's orders, "
                 "msjgym/systems/msj/backfilling.py), best first; when more than K jobs wait, the K best are shown, the others "
                 "are not (the ``queue`` column says how many wait). Rows past the waiting jobs are empty: ``present`` "
                 "0 and every job column 0 (the machine columns are still filled). T = ``time_scale`` (default 3600, "
                 "an hour of a trace in seconds: set it to your scenario's typical requested time, e.g. 1 for a "
                 "Poisson scenario with mean duration 1). Requested times r are the jobs' runtime estimates (SWF field "
                 "9 on a trace, else the scenario's ``estimate`` law, exact by default); the run times of waiting and "
                 "running jobs are never shown. ``estimate_accuracy=True`` (default off) adds columns 14-16, built "
                 "only from the jobs completed so far in the episode (their run times are known once they end, as "
                 "to a real scheduler): how accurate requested times have been, and each job's run time predicted "
                 "from them. Why: users' requested times are mostly a few round values far above the run times "
                 "(Tsafrir, Etsion & Feitelson, \"Modeling user runtime estimates\", JSSPP 2005), predicting run "
                 "times from completed jobs helps the scheduler (Tsafrir, Etsion & Feitelson, \"Backfilling using "
                 "system-generated predictions rather than user runtime estimates\", IEEE TPDS 18(6), 2007), and "
                 "learned schedulers gain most where estimates are inaccurate (RLBackfilling, arXiv:2404.09264); "
                 "without such a column one model cannot tell exact requested times from users' estimates. With "
                 "exact requested times the three columns are 1, ``requested`` and ``wait_ratio``. No column is scaled by a trace's maxima, and there are no class one-hots. Layout: "
                 "``msjgym.systems.msj.job_observation``; named view ``JobView`` (``view.column(\"wait\")``, "
                 "``view.needs``, ``view.requested``)."),),
    reward="""``reward="mean-bounded-slowdown"`` (default): 0 on every step but the episode's last, which gets −(the
    mean bounded slowdown of the jobs completed in the episode), max(1, (wait + run time) / max(run time, τ)) with τ =
    ``bsld_threshold``: RLScheduler's reward (SC'20, §3), an undiscounted (γ = 1) episode objective. 
    ``"bounded-slowdown"``: −Σ bounded slowdowns of the jobs that completed during the step (the return is −Σ over the
    episode, as ``msjgym/MSJ-v0``'s). ``"wait"``: −∫ (waiting jobs) dt over the step, so the return is −Σ waiting
    times (of the episode's jobs until its end: all of them when the episode runs to completion). ``"utilization"``:
    0 on every step but the last, which gets the episode's utilization ∫ (busy servers) dt / (n · (end − first
    arrival)) (with episodes run to completion, the busy time is the episode's work: maximising it minimises the
    makespan). Jobs still in the system when an episode is truncated are not credited: on a trace, let episodes run
    to completion (``trace_windows``).""",
    starting_state="""An empty machine at time 0 (every action allowed at the first step, which starts the clock);
    with a trace, the first arrival of the episode's window.""",
    episode_end="""With ``trace_windows`` (the default on a trace) each episode replays ``horizon_jobs`` (default 256)
    consecutive trace jobs from a start drawn uniformly at reset, until all of them completed; else truncated at
    ``horizon_jobs`` arrivals or at ``horizon_time``, or, with ``jobs``, once that many measured jobs completed
    (``JobSchedulingEnv.episode_result()`` then reports the episode's statistics exactly as ``msjgym evaluate``).
    Never terminated.""",
    masks="""``action_masks()`` (sb3-contrib's convention): pick: the rows holding a job (a job that does not fit may
    be picked: it is reserved); inspect: accept, and delay unless nothing runs and no job will arrive (delaying would
    strand the waiting jobs); backfill: the shown jobs EASY allows now behind the reserved head (they fit, and end
    by its shadow time by their requested times or fit in the servers it leaves free then). ``action_space.sample()``
    draws among the allowed actions.""",
    info="""``time``, ``events`` (cumulative), ``waiting`` (jobs waiting now).""",
    arguments={
        "scenario": "a built-in scenario's name or a TOML scenario file (``msjgym list``; default "
                    "``\"lublin-feitelson\"``, a 10,000-job synthetic trace on 256 processors)",
        "window": "K, the waiting jobs shown (rows of the observation; actions of ``action=\"pick\"``)",
        "action": "``\"pick\"`` (pick the head among the K shown jobs), ``\"inspect\"`` (accept or delay the base "
                  "order's pick) or ``\"backfill\"`` (choose which job EASY backfills)",
        "base_order": "which K jobs are shown and in which order, and the order of the backfilling candidates: "
                      "``\"fcfs\"``, ``\"sjf\"``, ``\"saf\"``, ``\"f1\"``, ``\"wfp3\"``, ``\"unicep\"`` (the "
                      "``priority`` policy's orders, by requested times)",
        "backfill": "``\"none\"``, ``\"easy\"``, ``\"conservative\"`` or ``\"easy-narrow\"`` (the ``priority`` "
                    "policy's rules, its code): see Action space",
        "reward": "``\"mean-bounded-slowdown\"``, ``\"bounded-slowdown\"``, ``\"wait\"`` or ``\"utilization\"``: see "
                  "Reward",
        **EPISODE_ARGUMENTS,
        "time_scale": "T of the time features log(1 + t / T), in the scenario's time unit (default 3600: an hour in "
                      "seconds)",
        "estimate_accuracy": "``True``: the observation ends with the three estimate-accuracy columns (14-16: "
                             "``accuracy``, ``predicted``, ``predicted_wait_ratio``); default ``False`` (F = 14)",
        "**params": "the scenario's parameters as keywords (e.g. ``processors=1024``, ``seed=3``)",
    },
    version_history=("v0: initial version (pick and inspect actions; four rewards); later added "
                     "``action=\"backfill\"`` and the ``estimate_accuracy`` option (off by default: the "
                     "observation of F = 14 is unchanged).",),
)


class JobSchedulingVectorEnv(BatchedVectorEnv):
    __doc__ = """``num_envs`` independent copies of ``msjgym/JobScheduling-v0`` (same arguments), stepped by one
    compiled call (see :class:`~msjgym.envs.base.BatchedVectorEnv`: NEXT_STEP autoreset, ``reset(seed=s)`` seeds copy
    i from ``SeedSequence(s).spawn(num_envs)[i]``, masks in ``action_masks()``).
    """ + JOB_DOC.docstring()

    doc = JOB_DOC
    spec_type = JobSpec
    batch_type = JobBatch

    @staticmethod
    def observation_space_of(spec: JobSpec) -> gym.spaces.Box:
        """Box(0, inf, (K, F), float32)."""
        return gym.spaces.Box(0.0, np.inf, spec.observation_shape, np.float32)


class JobSchedulingEnv(BatchedEnv):
    __doc__ = """An HPC machine (a multiserver-job system) whose next job an agent picks from the K best waiting
    jobs, each a row of normalised features.
    """ + JOB_DOC.docstring()

    doc = JOB_DOC
    vector_type = JobSchedulingVectorEnv

    def episode_result(self) -> Result:
        """The episode's statistics, exactly as ``msjgym.evaluate`` reports them (meaningful with ``jobs``)."""
        sim = self._venv._batch.sim
        if sim.status(0) == RUNNING:
            raise MsjgymError("episode_result(): the measurement is not complete (make the environment with jobs=N "
                              "and step until the episode ends)")
        return summarize(self.spec_.scenario, "agent", EpisodeRuns(self.spec_.scenario, sim), -1, 0.0, 0.0)
