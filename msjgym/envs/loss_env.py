"""``msjgym/AdaptiveLoss-v0``: choose how many servers each arriving job runs on, in a loss system.

The single environment (:class:`AdaptiveLossEnv`) is the native vector environment (:class:`AdaptiveLossVectorEnv`)
with one copy, on the batched base of :mod:`msjgym.envs.base`; the systems and the spec:
:mod:`msjgym.systems.loss.agent`; the compiled control step: :mod:`msjgym.systems.loss.control`.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np

from msjgym.envs.base import BatchedEnv, BatchedVectorEnv, EnvRegistration
from msjgym.systems.loss.agent import LossBatch, LossSpec

LOSS_ENV_ID = "msjgym/AdaptiveLoss-v0"
ENVS = [EnvRegistration(LOSS_ENV_ID, "msjgym.envs.loss_env:AdaptiveLossEnv",
                        "msjgym.envs.loss_env:AdaptiveLossVectorEnv", "loss")]
__all__ = ["LOSS_ENV_ID", "AdaptiveLossEnv", "AdaptiveLossVectorEnv"]

_DOC_TABLE = """
    ======================  ===========================================================================================
    Action space            Discrete(d + 1): the arriving job's width, 0 = block, i = run on i of the idle servers in
                            its sample (allowed: i <= m).
    Observation space       Box(0, [d, 1, 1], (3,), float32): [m = min(l, d), the idle servers the job's sample of k shows
                            (capped at d); busy servers / n; jobs in system / n]. A sampling dispatcher sees only m;
                            the global fractions are extra context.
    Named view              ``env.unwrapped.view(obs)`` (= ``spec_.view(obs)``): ``LossView`` (``idle_sampled``,
                            ``busy_servers``, ``jobs``, ``busy_fraction``, ``jobs_per_server``); the layout:
                            :mod:`msjgym.systems.loss.observation`.
    Reward                  −∫ (jobs in system) dt from this arrival to the next − blocking_penalty if blocked (the
                            return is −∫N dt − penalty × blocked: with penalty 0, Little's law makes it the mean
                            response time of accepted jobs times the accepted count; the penalty prices losses).
    Episode end             truncated after ``horizon_jobs`` arrivals (default 1000; None: never); never terminated.
    Action masks            ``action_masks()`` (sb3-contrib convention): actions 0..m; a masked action raises
                            ``ValueError``; ``action_space.sample()`` draws among the allowed actions.
    Action check            the one check of every environment (:mod:`msjgym.core.actions`): ``step(action)`` takes
                            an int, a NumPy integer or a 0-d integer array, in range and allowed by the mask; a
                            float (even 2.0), a bool, a str, None or an array of shape (1,) raises ``TypeError`` (pass
                            an int or a 0-d array), out of range or masked ``ValueError``; nothing is coerced. The
                            vector env takes an integer array of shape (num_envs,), each copy checked the same way.
    Arguments               ``scenario`` ("loss-full-access" default, or "loss-sampled"), its parameters as keywords
                            (``servers``, ``d``, ``alpha``, ``beta``, ``lam``, ``k``), ``horizon_jobs``,
                            ``blocking_penalty`` (default 1.0, in units of job-time).
    ======================  ===========================================================================================
"""


class AdaptiveLossVectorEnv(BatchedVectorEnv):
    __doc__ = """``num_envs`` independent copies of ``msjgym/AdaptiveLoss-v0`` stepped by one compiled call.

    Autoreset mode NEXT_STEP (the step after an episode's end resets that copy; its action is ignored; reward 0).
    ``reset(seed=s)`` seeds copy i from ``SeedSequence(s).spawn(num_envs)[i]``; masks in ``action_masks()`` and
    ``infos["action_mask"]``; ``infos["dt"]`` is the time each step advanced (see
    :class:`~msjgym.envs.base.BatchedVectorEnv`).
    """ + _DOC_TABLE

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
    """ + _DOC_TABLE

    vector_type = AdaptiveLossVectorEnv
