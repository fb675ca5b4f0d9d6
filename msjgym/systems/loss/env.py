"""``msjgym/AdaptiveLoss-v0``: choose how many servers each arriving job runs on, in a loss system.

The single environment (:class:`AdaptiveLossEnv`) is the native vector environment (:class:`AdaptiveLossVectorEnv`)
with one copy, on the batched base of :mod:`msjgym.envs.base`; the systems and the spec:
:mod:`msjgym.systems.loss.agent`; the compiled control step: :mod:`msjgym.systems.loss.control`.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np

from msjgym.envs.base import BatchedEnv, BatchedVectorEnv, EnvRegistration
from msjgym.envs.docs import EnvDoc
from msjgym.systems.loss.agent import LossBatch, LossSpec

LOSS_ENV_ID = "msjgym/AdaptiveLoss-v0"
ENVS = [EnvRegistration(LOSS_ENV_ID, "msjgym.systems.loss.env:AdaptiveLossEnv",
                        "msjgym.systems.loss.env:AdaptiveLossVectorEnv", "loss")]
__all__ = ["LOSS_ENV_ID", "AdaptiveLossEnv", "AdaptiveLossVectorEnv"]

DOC = EnvDoc(
    id=LOSS_ENV_ID,
    title="Choose how many servers each arriving job runs on, in a loss system with adaptive multiserver jobs.",
    description="""A loss system (no waiting room) of n servers with adaptive multiserver jobs: an arriving job
    samples k servers and may run on 1..d of the idle ones it finds (widths), or is blocked; Exp(1) sizes shared over
    its width. An agent decides each arriving job's width. Event-driven: each step runs to the next arrival.""",
    action_space="""Discrete(d + 1): the arriving job's width, 0 = block, i = run on i of the idle servers in its
    sample (allowed: i <= m).""",
    observation=(
        ("0", "idle sampled", "m = min(l, d), the idle servers the job's sample of k shows (capped at d)"),
        ("1", "busy fraction", "busy servers / n"),
        ("2", "jobs per server", "jobs in system / n"),
        ("", "", "A sampling dispatcher sees only m; the global fractions are extra context. Named view ``LossView`` "
                 "(``idle_sampled``, ``busy_servers``, ``jobs``, ...); layout: ``msjgym.systems.loss.observation``."),
    ),
    reward="""−∫ (jobs in system) dt from this arrival to the next − ``blocking_penalty`` if blocked (with penalty 0,
    Little's law makes the return the mean response time of accepted jobs times the accepted count; the penalty
    prices losses).""",
    starting_state="""Every server idle at time 0, at the first arrival.""",
    episode_end="""Truncated after ``horizon_jobs`` arrivals (default 1000; None: never). Never terminated.""",
    masks="""``action_masks()`` (sb3-contrib convention): actions 0..m; ``action_space.sample()`` draws among the
    allowed actions.""",
    info="""``time``, ``events``.""",
    arguments={
        "scenario": "``\"loss-full-access\"`` or ``\"loss-sampled\"``",
        "horizon_jobs": "arrivals per episode (None: no horizon)",
        "blocking_penalty": "subtracted from the reward of a blocked arrival (units of job-time)",
        "**params": "the scenario's parameters: ``servers``, ``d``, ``alpha``, ``beta``, ``lam``, ``k``",
    },
    version_history=("v0: initial version; later added ``invalid_action`` (a masked action falls back by default "
                     "instead of raising) and ``render_mode=\"ansi\"``.",),
)


class AdaptiveLossVectorEnv(BatchedVectorEnv):
    __doc__ = """``num_envs`` independent copies of ``msjgym/AdaptiveLoss-v0`` stepped by one compiled call.

    Autoreset mode NEXT_STEP (the step after an episode's end resets that copy; its action is ignored; reward 0).
    ``reset(seed=s)`` seeds copy i from ``SeedSequence(s).spawn(num_envs)[i]``; masks in ``action_masks()`` and
    ``infos["action_mask"]``; ``infos["dt"]`` is the time each step advanced (see
    :class:`~msjgym.envs.base.BatchedVectorEnv`).
    """ + DOC.docstring()

    doc = DOC
    spec_type = LossSpec
    batch_type = LossBatch

    @staticmethod
    def observation_space_of(spec: LossSpec) -> gym.spaces.Box:
        return gym.spaces.Box(np.zeros(spec.observation_size, np.float32),
                              np.array([spec.model.d, 1.0, 1.0], np.float32), dtype=np.float32)


class AdaptiveLossEnv(BatchedEnv):
    __doc__ = """A loss system with adaptive multiserver jobs (n servers, no waiting room, widths 1..d, samples of k servers)
    in which an agent decides each arriving job's width. Event-driven: each step runs to the next arrival.
    ``info``: ``dt``, ``time``, ``events``.
    """ + DOC.docstring()

    doc = DOC
    vector_type = AdaptiveLossVectorEnv
