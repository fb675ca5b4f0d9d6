"""A tiny stand-in of ``msjgym/JobScheduling-v0``'s interface for the scoring policy's tests (not a product
feature): K slots of F features, column 0 "slot present" (as the real layout), ``Discrete(K)`` picks (or ``Discrete(2)``),
``action_masks()``. Reward: minus the picked job's feature 1 (a shortest-first task)."""
from __future__ import annotations

import gymnasium as gym
import numpy as np


class JobWindowStandIn(gym.Env):
    def __init__(self, rows: int = 8, features: int = 4, actions: int | None = None, steps: int = 16) -> None:
        self.rows, self.features, self.steps = rows, features, steps
        self.observation_space = gym.spaces.Box(0.0, 1.0, (rows, features), np.float32)
        self.action_space = gym.spaces.Discrete(rows if actions is None else actions)
        self.rng = np.random.default_rng(0)

    def _draw(self) -> None:
        count = int(self.rng.integers(1, self.rows + 1))
        self.obs = np.zeros((self.rows, self.features), np.float32)
        self.obs[:count, 1:] = self.rng.random((count, self.features - 1))
        self.obs[:count, 0] = 1.0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.t = 0
        self._draw()
        return self.obs.copy(), {}

    def step(self, action):
        reward = -float(self.obs[int(action) % self.rows, 1])
        self.t += 1
        self._draw()
        return self.obs.copy(), reward, False, self.t >= self.steps, {}

    def action_masks(self) -> np.ndarray:
        if self.action_space.n == 2:
            return np.ones(2, bool)
        return self.obs[:, 0] > 0.5
