"""A test helper shared by the environment tests: a seeded environment stepped until some action is masked."""
from __future__ import annotations

import gymnasium as gym
import numpy as np


def masked_state(env_id: str, **kwargs):
    """A single env made with ``kwargs`` (seed 1, seeded random allowed actions) at a state where some action is
    masked; that action."""
    env = gym.make(env_id, **kwargs).unwrapped
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(5000):
        mask = env.action_masks()
        if not mask.all():
            return env, int(np.flatnonzero(~mask)[0])
        _, _, _, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if truncated:
            env.reset()
    raise AssertionError(f"{env_id}: no masked action in 5000 steps")
