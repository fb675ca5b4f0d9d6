"""What the batch-backed environments (``AdaptiveLoss-v0``, ``Dispatch-v0``) share: the step buffers of B systems,
the vector environment's reset / step / masks over them, and a single environment that is its vector environment
with one copy (so the two give the same trajectories for the same seeds)."""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from msjgym.core import rng
from msjgym.errors import MsjgymError


class StepBuffers:
    """Per-copy outputs of a compiled step (observations, masks, rewards, dt, ended, codes); ``state.rng`` holds
    the B streams (set by the subclass)."""

    state: Any

    def _buffers(self, num: int, observation_size: int, action_count: int) -> None:
        self.obs = np.zeros((num, observation_size), np.float32)
        self.masks = np.zeros((num, action_count), np.bool_)
        self.rewards = np.zeros(num)
        self.dts = np.zeros(num)
        self.ended = np.zeros(num, np.bool_)
        self.codes = np.zeros(num, np.int64)

    def seed(self, seeds: list[np.random.SeedSequence]) -> None:
        self.state.rng[:] = rng.seed_states(seeds)


def check_num_envs(num_envs: object) -> int:
    """``num_envs``, an integer >= 1, or a ValueError naming it."""
    if not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs = {num_envs!r}: must be an integer >= 1")
    return num_envs


class BatchVectorEnv:
    """Mixin for a ``gymnasium.vector.VectorEnv`` over a batch (``_batch``: ``StepBuffers`` with ``seed``); the
    subclass builds its batch, calls ``_spaces`` and gives ``_step(actions)``, which returns the copies truncated by
    this step."""

    _batch: Any

    def _spaces(self, observation: gym.spaces.Box, action_count: int) -> None:
        """Set the single and batched spaces (``Discrete(action_count)`` actions) and the unseeded, to-reset state."""
        self.single_observation_space = observation
        self.single_action_space = gym.spaces.Discrete(action_count)
        self.observation_space = gym.vector.utils.batch_space(observation, self.num_envs)
        self.action_space = gym.spaces.MultiDiscrete(np.full(self.num_envs, action_count))
        self._reset_next = np.ones(self.num_envs, np.bool_)
        self._seeded = False

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        if seed is not None or not self._seeded:
            self._batch.seed(np.random.SeedSequence(seed).spawn(self.num_envs))
            self._seeded = True
        self._reset_next[:] = True
        self._step(np.zeros(self.num_envs, np.int64))
        return self._batch.obs.copy(), self._infos()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        actions = np.asarray(actions).reshape(self.num_envs)
        if not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(f"actions of dtype {actions.dtype}: must be integers")
        truncated = self._step(actions.astype(np.int64))
        return (self._batch.obs.copy(), self._batch.rewards.copy(), np.zeros(self.num_envs, np.bool_), truncated,
                self._infos())

    def action_masks(self) -> np.ndarray:
        """bool[num_envs, A]: each copy's allowed actions now."""
        return self._batch.masks.copy()

    def _infos(self) -> dict:
        return {"dt": self._batch.dts.copy(), "action_mask": self._batch.masks.copy()}


class OneCopyEnv:
    """Mixin for a ``gymnasium.Env`` whose ``_venv`` is its vector environment with one copy (set in ``__init__``,
    with ``_ended = True`` and ``_steps = 0``); the subclass gives ``_info()``."""

    _venv: Any

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is None and not self._venv._seeded:
            seed = int(self.np_random.integers(2**63))
        obs, _ = self._venv.reset(seed=seed) if seed is not None else self._venv.reset()
        self._ended = False
        self._steps = 0
        return obs[0], self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._ended:
            raise MsjgymError("step() after the episode ended: call reset() first")
        mask = self._venv.action_masks()[0]
        value = np.asarray(action).reshape(-1)
        if value.size != 1 or not np.issubdtype(value.dtype, np.integer) or not 0 <= value[0] < mask.size \
                or not mask[value[0]]:
            raise ValueError(f"step {self._steps}: action {action!r} is not allowed now; valid actions: "
                             f"{np.flatnonzero(mask).tolist()}")
        obs, rewards, _, truncated, _ = self._venv.step(value.astype(np.int64))
        self._ended = bool(truncated[0])
        self._steps += 1
        return obs[0], float(rewards[0]), False, self._ended, self._info()

    def action_masks(self) -> np.ndarray:
        """The actions allowed now (bool[A])."""
        return self._venv.action_masks()[0]
