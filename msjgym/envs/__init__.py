"""Gymnasium environments over msjgym's systems (needs the ``rl`` extra: gymnasium, and SB3 for ``to_sb3``).

``import msjgym`` registers ``msjgym/MSJ-v0`` when gymnasium is installed.
"""
from __future__ import annotations

import gymnasium as gym

from msjgym.envs.msj_env import MSJEnv
from msjgym.envs.vector import MSJVectorEnv

ENV_ID = "msjgym/MSJ-v0"


def register() -> None:
    """Register ``msjgym/MSJ-v0`` (single and native vector entry points) with Gymnasium (idempotent)."""
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="msjgym.envs.msj_env:MSJEnv",
                     vector_entry_point="msjgym.envs.vector:MSJVectorEnv")


register()

__all__ = ["MSJEnv", "MSJVectorEnv", "ENV_ID", "register"]
