"""``msjgym/AdaptiveLoss-v0``: choose how many servers each arriving job runs on, in a loss system.

The single environment is the native vector environment (:class:`AdaptiveLossVectorEnv`) with one copy, so the two
give the same trajectories for the same seeds.
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from msjgym.envs._loss_core import LossBatch as _LossBatch
from msjgym.envs._batch_env import BatchVectorEnv, OneCopyEnv, check_num_envs
from msjgym.envs.msj_env import MaskedDiscrete
from msjgym.systems.loss import kernel as ls
from msjgym.systems.loss import control as lc
from msjgym.systems.loss.model import LossModel

LOSS_ENV_ID = "msjgym/AdaptiveLoss-v0"


_DOC_TABLE = """
    ======================  ===========================================================================================
    Action space            Discrete(d + 1): the arriving job's width, 0 = block, i = run on i of the idle servers in
                            its sample (allowed: i <= m).
    Observation space       Box(0, [d, 1, 1], (3,), float32): [m = min(l, d), the idle servers the job's sample of k shows
                            (capped at d); busy servers / n; jobs in system / n]. A sampling dispatcher sees only m;
                            the global fractions are extra context.
    Reward                  −∫ (jobs in system) dt from this arrival to the next − blocking_penalty if blocked (the
                            return is −∫N dt − penalty × blocked: with penalty 0, Little's law makes it the mean
                            response time of accepted jobs times the accepted count; the penalty prices losses).
    Episode end             truncated after ``horizon_jobs`` arrivals (default 1000; None: never); never terminated.
    Action masks            ``action_masks()`` (sb3-contrib convention): actions 0..m; a masked action raises
                            ``ValueError``; ``action_space.sample()`` draws among the allowed actions.
    Arguments               ``scenario`` ("loss-full-access" default, or "loss-sampled"), its parameters as keywords
                            (``servers``, ``d``, ``alpha``, ``beta``, ``lam``, ``k``), ``horizon_jobs``,
                            ``blocking_penalty`` (default 1.0, in units of job-time).
    ======================  ===========================================================================================
"""


class AdaptiveLossVectorEnv(BatchVectorEnv, VectorEnv):
    """``num_envs`` independent copies of ``msjgym/AdaptiveLoss-v0`` stepped by one compiled call.

    Autoreset mode NEXT_STEP (the step after an episode's end resets that copy; its action is ignored; reward 0).
    ``reset(seed=s)`` seeds copy i from ``SeedSequence(s).spawn(num_envs)[i]``; masks in ``action_masks()`` and
    ``infos["action_mask"]``; ``infos["dt"]`` is the time each step advanced.
    """ + _DOC_TABLE

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, scenario: str = "loss-full-access", horizon_jobs: int | None = 1000,
                 blocking_penalty: float = 1.0, **params: Any) -> None:
        self.num_envs = check_num_envs(num_envs)
        self._batch = _LossBatch(scenario, horizon_jobs, blocking_penalty, num_envs, params)
        d = self._batch.model.d
        self._spaces(gym.spaces.Box(np.zeros(lc.OBS_SIZE, np.float32), np.array([d, 1.0, 1.0], np.float32),
                                    dtype=np.float32), d + 1)

    @property
    def model(self) -> LossModel:
        return self._batch.model

    def _step(self, actions: np.ndarray) -> np.ndarray:
        batch = self._batch
        resetting = self._reset_next.copy()
        if (actions[~resetting] < 0).any():
            b = int(np.flatnonzero((actions < 0) & ~resetting)[0])
            raise ValueError(f"env {b}: action {int(actions[b])} is not allowed now (actions are widths 0..d)")
        masks_before = batch.masks.copy()
        batch.step(actions, resetting)
        bad = np.flatnonzero(batch.codes == lc.BAD_ACTION)
        if bad.size:
            b = int(bad[0])
            raise ValueError(f"env {b}: action {int(actions[b])} is not allowed now; valid actions: "
                             f"{np.flatnonzero(masks_before[b]).tolist()} (the other environments were advanced)")
        truncated = batch.ended & ~resetting
        self._reset_next[:] = truncated
        return truncated

    def reset_ended(self) -> tuple[np.ndarray, np.ndarray]:
        """Reset now the copies whose episode ended at the last step (same-step autoreset for SB3); returns their
        indices and every copy's observation (theirs: the new episode's first decision)."""
        ended = np.flatnonzero(self._reset_next)
        if ended.size:
            resetting = np.zeros(self.num_envs, np.bool_)
            resetting[ended] = True
            self._step_only(resetting)  # the other copies are not touched
        self._reset_next[ended] = False
        return ended, self._batch.obs.copy()

    def _step_only(self, resetting: np.ndarray) -> None:
        """Reset the copies in ``resetting`` without advancing the others."""
        batch = self._batch
        for b in np.flatnonzero(resetting):
            sub = slice(int(b), int(b) + 1)
            st, m = batch.state, batch.model
            lc.step_batch(st.x[sub], st.ints[sub], st.flts[sub], st.pmf[sub], st.stats[sub], st.rng[sub],
                          st.trace[sub], st.logfact, m.servers, m.d, m.k, m.lam, ls.GREEDY, batch.warmup,
                          batch.horizon, batch.batches, batch.penalty, np.zeros(1, np.int64), np.ones(1, np.bool_), batch.obs[sub],
                          batch.masks[sub], batch.rewards[sub], batch.dts[sub], batch.ended[sub], batch.codes[sub])

class AdaptiveLossEnv(OneCopyEnv, gym.Env):
    """A loss system with adaptive multiserver jobs (n servers, no waiting room, widths 1..d, samples of k servers)
    in which an agent decides each arriving job's width. Event-driven: each step runs to the next arrival.
    """ + _DOC_TABLE

    metadata = {"render_modes": []}

    def __init__(self, scenario: str = "loss-full-access", horizon_jobs: int | None = 1000,
                 blocking_penalty: float = 1.0, **params: Any) -> None:
        self._venv = AdaptiveLossVectorEnv(1, scenario, horizon_jobs, blocking_penalty, **params)
        self.observation_space = self._venv.single_observation_space
        self.action_space = MaskedDiscrete(self._venv.model.d + 1, self.action_masks)
        self._ended = True
        self._steps = 0

    @property
    def model(self) -> LossModel:
        return self._venv.model

    def _info(self) -> dict:
        st = self._venv._batch.state
        return {"dt": float(self._venv._batch.dts[0]), "time": float(st.flts[0, ls.F_TIME]),
                "events": int(st.ints[0, ls.I_EVENTS])}


def to_sb3_loss(venv: AdaptiveLossVectorEnv) -> Any:
    """An SB3 ``VecEnv`` over :class:`AdaptiveLossVectorEnv`, with the semantics of ``msjgym.envs.to_sb3``
    (same-step autoreset, terminal observations, ``TimeLimit.truncated``, masks for sb3-contrib)."""
    from stable_baselines3.common.vec_env import VecEnv

    from msjgym.envs import sb3

    base = sb3._classes()["SB3VecEnv"]
    if not isinstance(venv, AdaptiveLossVectorEnv):
        raise TypeError(f"to_sb3_loss: expected an AdaptiveLossVectorEnv, got {type(venv).__name__}")

    class LossSB3VecEnv(base):  # type: ignore[valid-type, misc]
        def __init__(self, venv: AdaptiveLossVectorEnv) -> None:
            self.venv = venv
            self._actions = None
            self._seed = None
            VecEnv.__init__(self, venv.num_envs, venv.single_observation_space, venv.single_action_space)

    return LossSB3VecEnv(venv)
