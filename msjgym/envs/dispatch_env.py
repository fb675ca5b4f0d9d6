"""``msjgym/Dispatch-v0``: dispatch each arriving job of an N-server system (large-scale load balancing).

The single environment is the native vector environment (:class:`DispatchVectorEnv`) with one copy, so the two give
the same trajectories for the same seeds. The system, its information models and the built-in policies:
:mod:`msjgym.systems.dispatch.simulate`; the compiled control step: :mod:`msjgym.systems.dispatch.control`.
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from msjgym.envs._dispatch_core import DispatchBatch, DispatchSpec
from msjgym.envs._batch_env import BatchVectorEnv, OneCopyEnv, check_num_envs
from msjgym.envs.msj_env import MaskedDiscrete
from msjgym.errors import MsjgymError
from msjgym.systems.dispatch.simulate import Replication
from msjgym.systems.dispatch.control import SKIP
from msjgym.systems.dispatch.model import DispatchModel
from msjgym.systems.dispatch.state import S_EVENTS, S_MSG, T_NOW

DISPATCH_ENV_ID = "msjgym/Dispatch-v0"

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
    Arguments               ``servers`` N (100), ``lam`` arrival rate per server λ (0.9), ``dist`` job-size law (a
                            Distribution or a paper-law name, default Exp(1)), ``observation`` ("histogram"), ``d``
                            (sampled; 2), ``information`` ("push" or "pull"; estimates), ``delta`` (0.3), ``delta0``,
                            ``delta1`` (pull), ``levels`` L (8), ``horizon`` (1000), ``arrivals`` and
                            ``warmup_fraction`` (0.1) for protocol episodes, ``reward`` ("holding" or "response").
    ``info``                ``dt`` (time the step advanced), ``time``, ``events``, ``messages`` (samples, probes or
                            updates so far in the episode; protocol episodes: in the measured window).
    ======================  ===========================================================================================
"""


class DispatchVectorEnv(BatchVectorEnv, VectorEnv):
    """``num_envs`` independent copies of ``msjgym/Dispatch-v0`` stepped by one compiled call.

    Autoreset mode NEXT_STEP (the step after an episode's end resets that copy; its action is ignored; reward 0).
    ``reset(seed=s)`` seeds copy i from ``SeedSequence(s).spawn(num_envs)[i]``; masks in ``action_masks()`` and
    ``infos["action_mask"]``; ``infos["dt"]`` is the time each step advanced.
    """ + _DOC_TABLE

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        self.num_envs = check_num_envs(num_envs)
        self.spec_ = DispatchSpec.make(**kwargs)
        self._batch = DispatchBatch(self.spec_, num_envs)
        high = np.inf if self.spec_.observation == "sampled" else 1.0
        self._spaces(gym.spaces.Box(0.0, high, (self.spec_.observation_size,), np.float32), self.spec_.action_count)

    @property
    def model(self) -> DispatchModel:
        """The system and its information model (policy jsq-d, jsq, push or pull: what the agent replaces)."""
        return self.spec_.model

    def _step(self, actions: np.ndarray) -> np.ndarray:
        resetting = self._reset_next.copy()
        masks = self._batch.masks
        count = masks.shape[1]
        inside = (actions >= 0) & (actions < count)
        allowed = inside & masks[np.arange(self.num_envs), np.clip(actions, 0, count - 1)]
        bad = np.flatnonzero(~allowed & ~resetting)
        if bad.size:  # nothing has been advanced
            b = int(bad[0])
            raise ValueError(f"env {b}: action {int(actions[b])} is not allowed now; valid actions: "
                             f"{np.flatnonzero(masks[b]).tolist()}")
        self._batch.step(np.where(resetting, 0, actions), resetting)
        truncated = self._batch.ended & ~resetting
        self._reset_next[:] = truncated
        return truncated

    def reset_ended(self) -> tuple[np.ndarray, np.ndarray]:
        """Reset now the copies whose episode ended at the last step (same-step autoreset for SB3, see
        ``msjgym.envs.to_sb3``); returns their indices and every copy's observation (theirs: the new episode's
        first decision). The other copies are not touched."""
        ended = np.flatnonzero(self._reset_next)
        if ended.size:
            actions = np.full(self.num_envs, SKIP, np.int64)
            resetting = np.zeros(self.num_envs, np.bool_)
            resetting[ended] = True
            self._batch.step(actions, resetting)
        self._reset_next[ended] = False
        return ended, self._batch.obs.copy()


class DispatchEnv(OneCopyEnv, gym.Env):
    """N servers with FIFO queues behind a dispatcher, Poisson arrivals at rate λN, i.i.d. job sizes, unit-rate
    servers; an agent dispatches each arriving job. Event-driven: a step is one dispatch decision, after which the
    system runs its own events (completions, probes, updates) to the next arrival.
    """ + _DOC_TABLE

    metadata = {"render_modes": []}

    def __init__(self, **kwargs: Any) -> None:
        self._venv = DispatchVectorEnv(1, **kwargs)
        self.spec_ = self._venv.spec_
        self.observation_space = self._venv.single_observation_space
        self.action_space = MaskedDiscrete(self.spec_.action_count, self.action_masks)
        self._ended = True
        self._steps = 0

    @property
    def model(self) -> DispatchModel:
        return self._venv.model

    def episode_replication(self) -> Replication:
        """The ended protocol episode's statistics, exactly as ``simulate`` reports a replication (needs
        ``arrivals``; its time average then covers the paper's measurement window)."""
        if self.spec_.arrivals is None or not self._ended:
            raise MsjgymError("episode_replication(): make the environment with arrivals=... and step until the "
                              "episode ends")
        return self._venv._batch.replication(0, 0.0)

    def _info(self) -> dict:
        st = self._venv._batch.state
        return {"dt": float(self._venv._batch.dts[0]), "time": float(st.sf[0, T_NOW]),
                "events": int(st.si[0, S_EVENTS]), "messages": int(st.si[0, S_MSG])}
