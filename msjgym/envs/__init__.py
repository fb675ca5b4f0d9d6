"""Gymnasium environments over msjgym's systems, and the runner that evaluates any policy like a built-in one.

The environments need the ``rl`` extra (gymnasium; Stable-Baselines3 for ``to_sb3``). ``import msjgym`` registers
``msjgym/MSJ-v0``, ``msjgym/AdaptiveLoss-v0`` and ``msjgym/Dispatch-v0`` when gymnasium is installed. ``msjgym.envs.agent_runner`` works without gymnasium.
"""
from __future__ import annotations

ENV_ID = "msjgym/MSJ-v0"

try:
    import gymnasium as gym
except ImportError:  # the environments are optional
    gym = None

if gym is not None:
    from msjgym.envs.msj_env import MSJEnv
    from msjgym.envs.sb3 import to_sb3
    from msjgym.envs.vector import MSJVectorEnv
    from msjgym.envs.wrappers import ContinuousDiscount
    from msjgym.envs.loss_env import LOSS_ENV_ID, AdaptiveLossEnv, AdaptiveLossVectorEnv, to_sb3_loss  # loss systems
    from msjgym.envs.dispatch_env import DISPATCH_ENV_ID, DispatchEnv, DispatchVectorEnv  # large-scale dispatch


def register() -> None:
    """Register ``msjgym/MSJ-v0``, ``msjgym/AdaptiveLoss-v0`` and ``msjgym/Dispatch-v0`` (single and native vector
    entry points) with Gymnasium (idempotent)."""
    if gym is not None and ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="msjgym.envs.msj_env:MSJEnv",
                     vector_entry_point="msjgym.envs.vector:MSJVectorEnv")
    if gym is not None and "msjgym/AdaptiveLoss-v0" not in gym.registry:  # loss systems
        gym.register(id="msjgym/AdaptiveLoss-v0", entry_point="msjgym.envs.loss_env:AdaptiveLossEnv",
                     vector_entry_point="msjgym.envs.loss_env:AdaptiveLossVectorEnv")
    if gym is not None and "msjgym/Dispatch-v0" not in gym.registry:  # large-scale dispatch
        gym.register(id="msjgym/Dispatch-v0", entry_point="msjgym.envs.dispatch_env:DispatchEnv",
                     vector_entry_point="msjgym.envs.dispatch_env:DispatchVectorEnv")


register()

__all__ = ["MSJEnv", "MSJVectorEnv", "ENV_ID", "register", "to_sb3", "ContinuousDiscount", "DispatchEnv",
           "DispatchVectorEnv"]
