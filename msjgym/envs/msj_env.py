"""``msjgym/MSJ-v0``: schedule multiserver jobs, one decision at a time.

The single environment (:class:`MSJEnv`) is the native vector environment (:class:`MSJVectorEnv`) with one copy, on
the batched base of :mod:`msjgym.envs.base`; the systems and the spec: :mod:`msjgym.systems.msj.agent`; the compiled
control step: :mod:`msjgym.systems.msj.control`.
"""
from __future__ import annotations

from msjgym.envs.base import BatchedEnv, BatchedVectorEnv, EnvRegistration
from msjgym.errors import MsjgymError
from msjgym.evaluate.evaluator import summarize
from msjgym.evaluate.result import Result as EvaluationResult
from msjgym.systems.msj.agent import EnvSpec, MSJBatch
from msjgym.systems.msj.family import EpisodeRuns
from msjgym.systems.msj.state import RUNNING

ENV_ID = "msjgym/MSJ-v0"
ENVS = [EnvRegistration(ENV_ID, "msjgym.envs.msj_env:MSJEnv", "msjgym.envs.msj_env:MSJVectorEnv", "msj")]
__all__ = ["ENV_ID", "MSJEnv", "MSJVectorEnv"]

_DOC_TABLE = """
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
    Named view              ``env.unwrapped.view(obs)`` (= ``spec_.view(obs)``, what a policy built with the spec
                            uses): ``StartView`` (``free_servers``, ``waiting``, ``in_service``, ``oldest_ages``,
                            ``window_classes``, ``window_needs``, ``window_ages``, ``truncated``; actions
                            ``start_slot(i)``, ``start_class(c)``, ``wait``) or ``PreemptiveView`` (``servers_left``,
                            ``present``, ``chosen``, ``in_service``, ``sequence_classes``, ...; ``choose(c)``,
                            ``commit``); the layout: :mod:`msjgym.systems.msj.observation`.
    Reward                  −∫ (jobs in system) dt over the step: by Little's law, maximising the return minimises
                            the mean response time.
    Episode end             truncated at ``horizon_jobs`` arrivals or ``horizon_time`` (or, with ``jobs``, once that
                            many measured jobs have completed); never terminated.
    Action masks            ``action_masks()`` (sb3-contrib's convention); a masked action raises ``ValueError``;
                            ``action_space.sample()`` draws among the allowed actions.
    Action check            the one check of every environment (:mod:`msjgym.core.actions`): ``step(action)`` takes
                            an int, a NumPy integer or a 0-d integer array, in range and allowed by the mask; a
                            float (even 2.0), a bool, a str, None or an array of shape (1,) raises ``TypeError`` (pass
                            an int or a 0-d array), out of range or masked ``ValueError``; nothing is coerced. The
                            vector env takes an integer array of shape (num_envs,), each copy checked the same way.
    Arguments               ``scenario`` (built-in name or TOML path, default "one-and-n"), scenario parameters as
                            keywords (e.g. ``servers=16``), ``mode``, ``window`` (W or L, default 8), ``horizon_jobs``
                            (default 1000), ``horizon_time``, ``jobs``/``warmup``/``batches`` (measure the episode's
                            statistics as ``msjgym evaluate`` does, see ``episode_result``).
    ======================  ===========================================================================================
"""


class MSJVectorEnv(BatchedVectorEnv):
    __doc__ = """``num_envs`` independent copies of ``msjgym/MSJ-v0`` (same arguments), stepped by one compiled call.

    Autoreset mode NEXT_STEP: the step after an episode's end resets that copy (its action is ignored) and returns
    the new episode's first observation with reward 0. ``reset(seed=s)`` seeds copy i from
    ``SeedSequence(s).spawn(num_envs)[i]``; masks in ``action_masks()`` (bool[num_envs, A]) and
    ``infos["action_mask"]``; a masked action raises ``ValueError`` naming the copy (see
    :class:`~msjgym.envs.base.BatchedVectorEnv`).
    """ + _DOC_TABLE

    spec_type = EnvSpec
    batch_type = MSJBatch


class MSJEnv(BatchedEnv):
    __doc__ = """A multiserver-job system (n servers, K job classes, Poisson arrivals or a trace) scheduled by an agent.

    Event-driven: each step runs the system to the next decision epoch; time advances between steps by ``info["dt"]``
    (0 for several decisions at one instant). ``info`` also has ``time`` and ``events`` (cumulative).
    """ + _DOC_TABLE

    vector_type = MSJVectorEnv

    def episode_result(self) -> EvaluationResult:
        """The episode's statistics, exactly as ``msjgym.evaluate`` reports them (meaningful with ``jobs``)."""
        sim = self._venv._batch.sim
        if sim.status(0) == RUNNING:
            raise MsjgymError("episode_result(): the measurement is not complete (make the environment with jobs=N "
                              "and step until the episode ends)")
        return summarize(self.spec_.scenario, "agent", EpisodeRuns(self.spec_.scenario, sim), -1, 0.0, 0.0)
