"""``msjgym/MSJ-v0``: schedule multiserver jobs, one decision at a time.

The single environment (:class:`MSJEnv`) is the native vector environment (:class:`MSJVectorEnv`) with one copy, on
the batched base of :mod:`msjgym.envs.base`; the systems and the spec: :mod:`msjgym.systems.msj.agent`; the compiled
control step: :mod:`msjgym.systems.msj.control`.
"""
from __future__ import annotations

from msjgym.envs.base import BatchedEnv, BatchedVectorEnv, EnvRegistration
from msjgym.envs.docs import EnvDoc
from msjgym.errors import MsjgymError
from msjgym.evaluate.evaluator import summarize
from msjgym.evaluate.result import Result
from msjgym.systems.msj.agent import EnvSpec, MSJBatch
from msjgym.systems.msj.family import EpisodeRuns
from msjgym.systems.msj.state import RUNNING

ENV_ID = "msjgym/MSJ-v0"
ENVS = [EnvRegistration(ENV_ID, "msjgym.systems.msj.env:MSJEnv", "msjgym.systems.msj.env:MSJVectorEnv", "msj")]
__all__ = ["ENV_ID", "MSJEnv", "MSJVectorEnv"]

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
