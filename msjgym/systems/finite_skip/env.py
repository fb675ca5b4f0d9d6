"""``msjgym/FiniteSkip-v0``: allocate the capacity of a finite-skip system (heterogeneous M/G/k, LPS(k), threshold
parallelism, multiserver jobs as a rate model) one job at a time.

The single environment (:class:`FiniteSkipEnv`) is the native vector environment (:class:`FiniteSkipVectorEnv`) with
one copy, on the batched base of :mod:`msjgym.envs.base`; the spec, view and batch:
:mod:`msjgym.systems.finite_skip.env_agent`; the compiled control step: :mod:`msjgym.systems.finite_skip.control`.
"""
from __future__ import annotations

from msjgym.envs.base import BatchedEnv, BatchedVectorEnv, EnvRegistration
from msjgym.envs.docs import EnvDoc
from msjgym.systems.finite_skip.env_agent import FiniteSkipEnvBatch, FiniteSkipEnvSpec

FINITE_SKIP_ENV_ID = "msjgym/FiniteSkip-v0"
ENVS = [EnvRegistration(FINITE_SKIP_ENV_ID, "msjgym.systems.finite_skip.env:FiniteSkipEnv",
                        "msjgym.systems.finite_skip.env:FiniteSkipVectorEnv", "finite-skip")]
__all__ = ["FINITE_SKIP_ENV_ID", "FiniteSkipEnv", "FiniteSkipVectorEnv"]

DOC = EnvDoc(
    id=FINITE_SKIP_ENV_ID,
    title="Allocate a finite-skip system's capacity among the jobs present, after every arrival and completion.",
    description="""The rate models of Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver
    analysis" (§§4–7): capacity normalised to 1, Poisson arrivals, jobs of K classes with i.i.d. sizes (capacity ×
    time units), each served at a rate that is a fraction of the capacity. The system is the scenario's: heterogeneous
    M/G/k (finite-skip-fig2: speeds 0.4, 0.3, 0.2, 0.1), LPS(k) (fig3), threshold parallelism (fig4a, fig4b: a job of
    threshold P runs on up to P of k = 8 servers) or multiserver jobs (fig6, fig7: a job holds exactly its need v).
    Event-driven: after every arrival and completion the allocation is rebuilt (preemptive), the agent choosing the
    jobs to serve one at a time at the same instant, then committing; the system runs with those rates to its next
    event. The same random streams as ``msjgym evaluate``'s compiled path: an agent that allocates as a built-in
    policy reproduces its trajectory (``tests/test_finite_skip_env.py``).""",
    action_space="""Discrete(W + 1), W = ``window`` (8). Action i < W chooses the i-th oldest job present (window
    slot i) and gives it its share: heterogeneous servers, the fastest idle server (rate = its speed); LPS(k), an
    equal share of the capacity among the (at most k) chosen jobs; threshold parallelism, min(P, idle servers)
    servers (rate q/k); multiserver jobs, its v servers (rate v/k). Action W commits: the system runs with the chosen
    rates to its next event. Preemptive policies that serve the oldest jobs by any priority are expressible; a
    non-preemptive heterogeneous rule (fsf-np, ssf-np, random) or slowest-server-first (ssf) is not (a choice always
    takes the fastest idle server).""",
    observation=(
        ("0", "free capacity", "the fraction of the capacity (1) not yet given at this epoch"),
        ("1", "jobs", "N, the jobs present (unbounded)"),
        ("2", "truncated", "1 if N > W (more jobs than the window shows)"),
        ("3 + (4 + K)·i + 0", "slot i present", "1 if the i-th oldest job exists (i < W)"),
        ("3 + (4 + K)·i + 1", "slot i chosen", "1 if it has been chosen at this epoch"),
        ("3 + (4 + K)·i + 2", "slot i parameter", "its threshold P or need v, / k (1/k in HET and LPS)"),
        ("3 + (4 + K)·i + 3", "slot i age", "time since its arrival (time units)"),
        ("3 + (4 + K)·i + 4 + c", "slot i class", "one-hot: 1 if its class is c (c < K)"),
        ("", "", "Size 3 + W·(4 + K); job sizes are not observed (as the paper's policies, which see classes and "
                 "order only)."),
    ),
    reward="""−∫ N dt over the time the step advanced (0 for a choice, which takes no time): the return is −∫ N dt
    over the episode, so by Little's law maximising it minimises the mean response time.""",
    starting_state="""An empty system at time 0; the first step's observation is the first arrival's decision epoch
    (the system runs through moments with no job present by itself).""",
    episode_end="""Truncated at the ``horizon_jobs``-th arrival (default 1000; the observation shows the system with
    that job present), or at an arrival that finds ``capacity`` jobs present (``info["overflow"]``). Never
    terminated.""",
    masks="""``action_masks()`` (sb3-contrib convention): window slots holding a job not yet chosen that can get a
    share now (an idle server; LPS: fewer than k chosen; multiserver jobs: its need fits in the idle servers); commit
    always. When nothing more can be chosen the commit is automatic.""",
    info="""``time``, ``events`` (arrivals and completions in the episode), ``arrivals``, ``jobs`` (N), ``overflow``.""",
    arguments={
        "scenario": "a finite-skip scenario: finite-skip-fig2 (heterogeneous), -fig3 (LPS), -fig4a / -fig4b "
                    "(threshold parallelism), -fig6 / -fig7 (multiserver jobs)",
        "window": "W, the oldest jobs the agent sees and can choose (integer >= 1)",
        "horizon_jobs": "the arrival at which an episode ends (integer >= 1)",
        "capacity": "the most jobs present; an arrival beyond ends the episode (integer >= 1)",
        "**params": "the scenario's parameters: ``load`` (ρ = λE[S], default 0.6), fig2 ``speeds``, fig3 ``servers``, "
                    "fig4a/b ``servers`` and ``threshold``",
    },
    version_history=("v0: initial version.",),
)


class FiniteSkipVectorEnv(BatchedVectorEnv):
    __doc__ = """``num_envs`` independent copies of ``msjgym/FiniteSkip-v0`` stepped by one compiled call.

    Autoreset mode NEXT_STEP (the step after an episode's end resets that copy; its action is ignored; reward 0).
    ``reset(seed=s)`` seeds copy i from ``SeedSequence(s).spawn(num_envs)[i]``; masks in ``action_masks()`` and
    ``infos["action_mask"]``; ``infos["dt"]`` is the time each step advanced (see
    :class:`~msjgym.envs.base.BatchedVectorEnv`).
    """ + DOC.docstring()

    doc = DOC
    spec_type = FiniteSkipEnvSpec
    batch_type = FiniteSkipEnvBatch


class FiniteSkipEnv(BatchedEnv):
    __doc__ = """A finite-skip system (capacity 1, jobs served at fractions of it) whose allocation an agent builds
    one job at a time after every event.
    """ + DOC.docstring()

    doc = DOC
    vector_type = FiniteSkipVectorEnv
