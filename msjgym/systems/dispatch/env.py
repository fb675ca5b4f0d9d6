"""``msjgym/Dispatch-v0``: dispatch each arriving job of an N-server system (large-scale load balancing).

The single environment (:class:`DispatchEnv`) is the native vector environment (:class:`DispatchVectorEnv`) with one
copy, on the batched base of :mod:`msjgym.envs.base`. The system, its information models and the built-in policies:
:mod:`msjgym.systems.dispatch.simulation`; the systems and the spec: :mod:`msjgym.systems.dispatch.agent`; the compiled
control step: :mod:`msjgym.systems.dispatch.control`.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np

from msjgym.envs.base import BatchedEnv, BatchedVectorEnv, EnvRegistration
from msjgym.envs.docs import EnvDoc
from msjgym.errors import MsjgymError
from msjgym.systems.dispatch.agent import DispatchBatch, DispatchSpec
from msjgym.systems.dispatch.simulation import Replication

DISPATCH_ENV_ID = "msjgym/Dispatch-v0"
ENVS = [EnvRegistration(DISPATCH_ENV_ID, "msjgym.systems.dispatch.env:DispatchEnv",
                        "msjgym.systems.dispatch.env:DispatchVectorEnv", "dispatch")]
__all__ = ["DISPATCH_ENV_ID", "DispatchEnv", "DispatchVectorEnv"]

DOC = EnvDoc(
    id=DISPATCH_ENV_ID,
    title="Dispatch each arriving job to one of N FIFO servers (large-scale load balancing).",
    description="""N servers with FIFO queues behind a dispatcher, Poisson arrivals at rate λN, i.i.d. job sizes,
    unit-rate servers (or a fast and a slow pool); an agent dispatches each arriving job, seeing what an information
    model allows: the queue
    lengths of d sampled servers (as JSQ(d)), the histogram of all queue lengths (as JSQ), or the histogram of the
    dispatcher's estimates kept by push probes or pull updates (Hellemans, Kielanski & Van Houdt). Event-driven: a
    step is one dispatch decision, after which the system runs its own events (completions, probes, updates) to the
    next arrival.""",
    action_space="""``observation="sampled"``: Discrete(d), the index of the chosen server in the sample.
    ``"histogram"`` / ``"estimates"`` (default ``"histogram"``): Discrete(L + 1): a < L sends the job to a uniformly
    random server whose queue length (estimate) is exactly a, a = L to one with at least L. The estimates mode then
    counts the job in that server's estimate (e_i += 1, as push).""",
    observation=(
        ("i − 1, i = 1..L", "at least i", "the fraction of servers with at least i jobs (exact queue lengths)"),
        ("", "", "That is ``observation=\"histogram\"`` (the default), Box(0, 1, (L,)). ``\"estimates\"``: the same "
                 "over the dispatcher's estimates. ``\"sampled\"``: Box(0, inf, (d,)), the queue lengths of d "
                 "servers sampled uniformly without replacement at this arrival, in sample order (d messages per "
                 "arrival); with ``fast_fraction`` and ``speed_ratio``, Box(0, inf, (2d,)): then the d sampled "
                 "servers' speeds. Named views ``SampledView`` (``queue_lengths``, ``speeds``, ``shortest``, ``shortest_expected_delay``) / ``LevelsView`` "
                 "(``at_least``, ``level_fractions``, ``level_servers``, ``lowest_level``); layout: "
                 "``msjgym.systems.dispatch.observation``."),
    ),
    reward="""``reward="holding"`` (default): −∫ (jobs in system) / N dt from this arrival to the next (per server,
    so its scale does not change with N); its time average is −λ·E[response time] by Little's law.
    ``reward="response"``: −E[R | state, action], the expected response time of the job just dispatched (time units):
    (q + 1)·E[S] for exponential sizes (q: the chosen server's jobs); for other laws the work ahead of it (known to
    the simulator, not to the agent) + E[S]: a per-decision signal for credit assignment at large N that omits the
    delay the job causes to later jobs.""",
    starting_state="""Every server empty at time 0 (estimates 0), at the first arrival.""",
    episode_end="""Truncated after ``horizon`` arrivals have been dispatched (default 1000); with ``arrivals`` an
    episode is one replication of the paper's protocol (``DispatchEnv.episode_replication()``) and ends once every
    measured job has left. Never terminated.""",
    masks="""``action_masks()`` (sb3-contrib convention): the levels with at least one server (every sample index in
    "sampled"); ``action_space.sample()`` draws among the allowed actions.""",
    info="""``time``, ``events``, ``messages`` (samples, probes or updates so far in the episode; protocol episodes:
    in the measured window).""",
    arguments={
        "servers": "N, the servers",
        "lam": "λ, the arrival rate per server (< 1)",
        "dist": "the job-size law (a Distribution or a paper-law name; None: Exp(1))",
        "observation": "``\"histogram\"``, ``\"sampled\"`` or ``\"estimates\"`` (see Observation space)",
        "d": "the servers sampled per arrival (``\"sampled\"``; None: 2)",
        "information": "``\"push\"`` or ``\"pull\"`` (``\"estimates\"``)",
        "delta": "push: probes per server per time unit (None: 0.3)",
        "delta0": "pull: update rate of an idle server",
        "delta1": "pull: probability of an update at a completion",
        "levels": "L, the levels of the histogram",
        "horizon": "arrivals per episode (None: 1000)",
        "arrivals": "a protocol episode of this many arrivals (replaces ``horizon``)",
        "warmup_fraction": "the fraction of a protocol episode's arrivals not measured",
        "reward": "``\"holding\"`` or ``\"response\"`` (see Rewards)",
        "fast_fraction": "with ``speed_ratio``: a fast pool of this fraction of the servers (``\"sampled\"`` only; "
                         "None: unit-rate servers)",
        "speed_ratio": "fast speed / slow speed, in [1, 1000]; the speeds' mean is 1",
    },
    version_history=("v0: initial version; later added ``invalid_action`` (a masked action falls back by default "
                     "instead of raising), ``render_mode=\"ansi\"`` and two server pools (``fast_fraction``, "
                     "``speed_ratio``).",),
)


class DispatchVectorEnv(BatchedVectorEnv):
    __doc__ = """``num_envs`` independent copies of ``msjgym/Dispatch-v0`` stepped by one compiled call.

    Autoreset mode NEXT_STEP (the step after an episode's end resets that copy; its action is ignored; reward 0).
    ``reset(seed=s)`` seeds copy i from ``SeedSequence(s).spawn(num_envs)[i]``; masks in ``action_masks()`` and
    ``infos["action_mask"]``; ``infos["dt"]`` is the time each step advanced (see
    :class:`~msjgym.envs.base.BatchedVectorEnv`). ``model``: the system and its information model (policy jsq-d,
    jsq, push or pull: what the agent replaces).
    """ + DOC.docstring()

    doc = DOC
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
    """ + DOC.docstring()

    doc = DOC
    vector_type = DispatchVectorEnv

    def episode_replication(self) -> Replication:
        """The ended protocol episode's statistics, exactly as a built-in dispatcher's replication reports them (needs
        ``arrivals``; its time average then covers the paper's measurement window)."""
        if self.spec_.arrivals is None or not self._ended:
            raise MsjgymError("episode_replication(): make the environment with arrivals=... and step until the "
                              "episode ends")
        return self._venv._batch.replication(0, 0.0)
