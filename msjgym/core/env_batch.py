"""What every family supplies to its environment: B systems under an agent's control (no gymnasium needed).

The environments (:mod:`msjgym.envs.base`) and the agent paths of the families drive a family's systems through this
one interface; a family implements it over its compiled control layer (``msjgym.systems.<family>.control``), in
``msjgym.systems.<family>.agent``. Batching is the leading axis:
copy b is row b of every array, with its own random stream.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from msjgym.core import rng


class EnvBatch:
    """B systems of one family, each at a decision epoch, and the outputs of their last step.

    Attributes (row b: copy b), updated by every ``step`` and ``reset_copies``:
        obs: float32[B, D], the observations. masks: bool[B, A], the actions allowed now.
        rewards: float64[B], the reward of the last step (0 for a copy just reset). dts: float64[B], the time it
            advanced. ended: bool[B], whether the copy's episode is over (truncated at its horizon, or its
            measurement complete).
        state: the family's state record; ``state.rng`` holds the B random streams (``seed``).

    A family subclass implements ``step``, ``reset_copies`` and, for the single environment's ``info``, ``info``.
    """

    state: Any
    num: int

    def _buffers(self, num: int, observation_size: int, action_count: int) -> None:
        """Allocate the per-copy outputs (call from ``__init__``)."""
        self.num = num
        self.obs = np.zeros((num, observation_size), np.float32)
        self.masks = np.zeros((num, action_count), np.bool_)
        self.rewards = np.zeros(num)
        self.dts = np.zeros(num)
        self.ended = np.zeros(num, np.bool_)
        self.codes = np.zeros(num, np.int64)

    def seed(self, seeds: list[np.random.SeedSequence]) -> None:
        """Copy b draws from ``seeds[b]`` from now on."""
        self.state.rng[:] = rng.seed_states(seeds)

    def step(self, actions: np.ndarray, resetting: np.ndarray) -> None:
        """Reset the copies in ``resetting`` (a new episode, at its first decision epoch; their actions are ignored)
        and apply ``actions`` (int64[B], already checked against ``masks``) to the others, running each to its next
        decision epoch."""
        raise NotImplementedError

    def reset_copies(self, which: np.ndarray) -> None:
        """Reset the copies ``which`` (indices) as ``step`` would, without advancing the others."""
        raise NotImplementedError

    def info(self, b: int) -> dict[str, Any]:
        """Copy b's ``info`` besides ``dt`` (e.g. ``time``, ``events``)."""
        return {}
