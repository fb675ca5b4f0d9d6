"""``msjgym/Dispatch-v0``: dispatch each arriving job of an N-server system (large-scale load balancing).

The single environment (:class:`DispatchEnv`) is the native vector environment (:class:`DispatchVectorEnv`) with one
copy, on the batched base of :mod:`msjgym.envs.base`. The system, its information models and the built-in policies:
:mod:`msjgym.systems.dispatch.simulate`; the systems and the spec: :mod:`msjgym.systems.dispatch.agent`; the compiled
control step: :mod:`msjgym.systems.dispatch.control`.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np

from msjgym.envs.base import BatchedEnv, BatchedVectorEnv, EnvRegistration
from msjgym.errors import MsjgymError
from msjgym.systems.dispatch.agent import DispatchBatch, DispatchSpec
from msjgym.systems.dispatch.simulate import Replication

DISPATCH_ENV_ID = "msjgym/Dispatch-v0"
ENVS = [EnvRegistration(DISPATCH_ENV_ID, "msjgym.envs.dispatch_env:DispatchEnv",
                        "msjgym.envs.dispatch_env:DispatchVectorEnv", "dispatch")]
__all__ = ["DISPATCH_ENV_ID", "DispatchEnv", "DispatchVectorEnv"]

_DOC_TABLE = """
    ======================  ===========================================================================================
    Action space            ``observation="sampled"``: Discrete(d), the index of the chosen server in the sample.
                            ``"histogram"`` / ``"estimates"``: Discrete(L + 1): a < L sends the job to a uniformly
                            random server whose queue length (estimate) is exactly a, a = L to one with at least L.
                            The estimates mode then counts the job in that server's estimate (e_i += 1, as push).
    Observation space       ``"sampled"``: Box(0, inf, (d,), float32), the queue lengths of d servers sampled uniformly
                            without replacement at this arrival (jsq-d's draws; d messages per arrival), in sample
                            order.
                            ``"histogram"``: Box(0, 1, (L,), float32), the fraction of servers with at least i jobs,
                            i = 1..L (exact queue lengths). ``"estimates"``: the same over the dispatcher's estimates,
                            kept by probes at rate δN (push) or by server updates (pull: at completions with
                            probability δ₁, at rate δ₀ while idle). Both histograms are O(L) per step at any N.
    Named view              ``env.unwrapped.view(obs)`` (= ``spec_.view(obs)``): ``SampledView`` (``queue_lengths``,
                            ``shortest``) or ``LevelsView`` (``at_least``, ``level_fractions``, ``level_servers``,
                            ``lowest_level``, ``estimated``); the layout: :mod:`msjgym.systems.dispatch.observation`.
    Reward                  ``reward="holding"`` (default): −∫ (jobs in system) / N dt from this arrival to the next
                            (per server, so its scale does not change with N). Its time average is −(mean jobs per
                            server) = −λ · E[response time] by Little's law: maximising the return minimises the mean
                            response time. ``reward="response"``: −E[R | state, action], the expected response time
                            of the job just dispatched (time units): (q + 1)·E[S]/speed for exponential sizes (q: the
                            chosen server's jobs; exact by memorylessness); for other laws the work ahead of it (known
                            to the simulator, not to the agent) / speed + E[S]/speed. O(1) per step. Its mean over
                            jobs is −E[response time], with no noise from the other servers' events: a per-decision
                            signal for credit assignment at large N; it omits the delay the job causes to later
                            jobs, which only the return over later steps sees.
    Episode end             truncated after ``horizon`` arrivals have been dispatched (default 1000); with ``arrivals``
                            an episode is one replication of the paper's protocol (as ``simulate``) and ends once
                            every measured job has left. Never terminated.
    Action masks            ``action_masks()`` (sb3-contrib convention): the levels with at least one server (every
                            sample index in "sampled"); a masked action raises ``ValueError`` naming it and the valid
                            ones; ``action_space.sample()`` draws among the allowed actions.
    Action check            the one check of every environment (:mod:`msjgym.core.actions`): ``step(action)`` takes
                            an int, a NumPy integer or a 0-d integer array, in range and allowed by the mask; a
                            float (even 2.0), a bool, a str, None or an array of shape (1,) raises ``TypeError`` (pass
                            an int or a 0-d array), out of range or masked ``ValueError``; nothing is coerced. The
                            vector env takes an integer array of shape (num_envs,), each copy checked the same way.
    Arguments               ``servers`` N (100), ``lam`` arrival rate per server λ (0.9), ``dist`` job-size law (a
                            Distribution or a paper-law name, default Exp(1)), ``observation`` ("histogram"), ``d``
                            (sampled; 2), ``information`` ("push" or "pull"; estimates), ``delta`` (0.3), ``delta0``,
                            ``delta1`` (pull), ``levels`` L (8), ``horizon`` (1000), ``arrivals`` and
                            ``warmup_fraction`` (0.1) for protocol episodes, ``reward`` ("holding" or "response").
    ``info``                ``dt`` (time the step advanced), ``time``, ``events``, ``messages`` (samples, probes or
                            updates so far in the episode; protocol episodes: in the measured window).
    ======================  ===========================================================================================
"""


class DispatchVectorEnv(BatchedVectorEnv):
    __doc__ = """``num_envs`` independent copies of ``msjgym/Dispatch-v0`` stepped by one compiled call.

    Autoreset mode NEXT_STEP (the step after an episode's end resets that copy; its action is ignored; reward 0).
    ``reset(seed=s)`` seeds copy i from ``SeedSequence(s).spawn(num_envs)[i]``; masks in ``action_masks()`` and
    ``infos["action_mask"]``; ``infos["dt"]`` is the time each step advanced (see
    :class:`~msjgym.envs.base.BatchedVectorEnv`). ``model``: the system and its information model (policy jsq-d,
    jsq, push or pull: what the agent replaces).
    """ + _DOC_TABLE

    spec_type = DispatchSpec
    batch_type = DispatchBatch

    @staticmethod
    def observation_space_of(spec: DispatchSpec) -> gym.spaces.Box:
        high = np.inf if spec.observation == "sampled" else 1.0
        return gym.spaces.Box(0.0, high, (spec.observation_size,), np.float32)


class DispatchEnv(BatchedEnv):
    __doc__ = """N servers with FIFO queues behind a dispatcher, Poisson arrivals at rate λN, i.i.d. job sizes, unit-rate
    servers; an agent dispatches each arriving job. Event-driven: a step is one dispatch decision, after which the
    system runs its own events (completions, probes, updates) to the next arrival.
    """ + _DOC_TABLE

    vector_type = DispatchVectorEnv

    def episode_replication(self) -> Replication:
        """The ended protocol episode's statistics, exactly as ``simulate`` reports a replication (needs
        ``arrivals``; its time average then covers the paper's measurement window)."""
        if self.spec_.arrivals is None or not self._ended:
            raise MsjgymError("episode_replication(): make the environment with arrivals=... and step until the "
                              "episode ends")
        return self._venv._batch.replication(0, 0.0)
