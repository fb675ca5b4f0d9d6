"""The native batched environment: B multiserver-job systems advanced together in one compiled call per step."""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from msjgym.envs._core import Batch, EnvSpec
from msjgym.systems.msj import control as msj_control


class MSJVectorEnv(VectorEnv):
    """``num_envs`` independent copies of ``msjgym/MSJ-v0`` (same arguments), stepped by one compiled call.

    Autoreset mode NEXT_STEP (Gymnasium's default): the step after an episode's end resets that copy (its action
    is ignored) and returns the new episode's first observation with reward 0. Each copy's action mask is in
    ``action_masks()`` (bool[num_envs, A]) and in ``infos["action_mask"]``; a masked action raises ``ValueError``
    naming the copy. ``reset(seed=s)`` seeds copy i from ``SeedSequence(s).spawn(num_envs)[i]``.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs = {num_envs!r}: must be an integer >= 1")
        self.spec_ = EnvSpec.make(**kwargs)
        self.num_envs = num_envs
        self._batch = Batch(self.spec_, num_envs)
        self.single_observation_space = gym.spaces.Box(0.0, np.inf, (self.spec_.observation_size,), np.float32)
        self.single_action_space = gym.spaces.Discrete(self.spec_.action_count)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gym.spaces.MultiDiscrete(np.full(num_envs, self.spec_.action_count))
        self._reset_next = np.ones(num_envs, dtype=np.bool_)
        self._rewards = np.zeros(num_envs, dtype=np.float64)
        self._truncations = np.zeros(num_envs, dtype=np.bool_)
        self._terminations = np.zeros(num_envs, dtype=np.bool_)
        self._seeded = False

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        if seed is not None or not self._seeded:
            root = np.random.SeedSequence(seed)
            self._batch.seed(root.spawn(self.num_envs))
            self._seeded = True
        self._reset_next[:] = True
        self._step(np.zeros(self.num_envs, dtype=np.int64))
        return self._batch.obs.copy(), self._infos()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)
        self._step(actions)
        return self._batch.obs.copy(), self._rewards.copy(), self._terminations.copy(), \
            self._truncations.copy(), self._infos()

    def _step(self, actions: np.ndarray) -> None:
        batch = self._batch
        resetting = self._reset_next.copy()
        msj_control.step_batch(batch.sim.state, batch.sim.params, batch.ctl, actions, resetting, batch.obs,
                               batch.masks, batch.codes)
        bad = np.flatnonzero(batch.codes == 1)
        if bad.size:
            b = int(bad[0])
            raise ValueError(f"env {b}: action {int(actions[b])} is not allowed now (see action_masks()); the other "
                             f"environments of this step were advanced")
        batch.finish()
        self._rewards[:] = np.where(resetting, 0.0, batch.ctl.floats[:, msj_control.F_REWARD])
        ended = batch.ended() & ~resetting
        self._truncations[:] = ended
        self._reset_next[:] = ended

    def action_masks(self) -> np.ndarray:
        return self._batch.masks.copy()

    def reset_ended(self) -> tuple[np.ndarray, np.ndarray]:
        """Reset now, rather than at the next step, the copies whose episode ended at the last step (same-step
        autoreset, as Stable-Baselines3 wants; see ``msjgym.envs.to_sb3``).

        Returns their indices and the observations of all copies (theirs: the new episode's first, in the initial
        state where every action is allowed). Their next step is then the new episode's first step, exactly as the
        step after a NEXT_STEP autoreset would be: the trajectories are the same, minus the reset step.
        """
        ended = np.flatnonzero(self._reset_next)
        batch = self._batch
        for b in ended:
            msj_control.reset_system(batch.sim.state, batch.sim.params, batch.ctl, b)
            msj_control.observe(batch.sim.state, batch.sim.params, batch.ctl, b, batch.obs[b], batch.masks[b])
            batch.masks[b, :] = True
        self._reset_next[ended] = False
        return ended, batch.obs.copy()

    def _infos(self) -> dict:
        return {"dt": self._batch.ctl.floats[:, msj_control.F_DT].copy(), "action_mask": self._batch.masks.copy()}
