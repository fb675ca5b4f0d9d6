"""RLlib's view of msjgym's environments: the action mask inside the observation, and the env creator Ray runs.

RLlib's PPO takes no separate action mask; its action-masking RLModule
(``ray.rllib.examples.rl_modules.classes.action_masking_rlm.ActionMaskingTorchRLModule``) reads one from a Dict
observation ``{"observations": obs, "action_mask": mask}`` and adds log(mask) to the logits, so a masked action is
never sampled. :class:`MaskInObservation` makes that Dict from any msjgym environment (``env.unwrapped.action_masks()``
after every reset and step); actions pass through unchanged — a masked action still raises ``ValueError`` in the
environment, nothing is remapped. :func:`make_env` is the creator registered with
``ray.tune.registry.register_env`` under :data:`ENV_NAME`: it imports msjgym inside the env runner (which registers
the Gymnasium ids there) and makes the environment with ``gymnasium.make``.

No module here imports Ray: the env runners import this module (by the creator's reference), and ``import msjgym``
stays fast without Ray. The loader of trained modules is ``rllib:CHECKPOINT`` in
:func:`msjgym.core.user_policy.load_user_policy`.
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from msjgym.envs.wrappers import RunningAverageCost

__all__ = ["AverageCost", "MaskInObservation"]  # exported by msjgym.envs; the rest: from msjgym.envs.rllib

ENV_NAME = "msjgym-rllib"
"""The name :func:`make_env` is registered under (``config.environment(ENV_NAME, env_config=...)``)."""
OBS_KEY = "observations"
MASK_KEY = "action_mask"
"""The Dict observation's keys: RLlib's action-masking RLModule's names."""


class MaskInObservation(gym.ObservationWrapper):
    """``{"observations": obs, "action_mask": mask}``: the observation and the allowed actions (float32 0/1 of
    length A, from ``env.unwrapped.action_masks()``), for RLlib's action-masking RLModule. Actions are not touched;
    the action space is a plain ``Discrete(A)``."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        if not isinstance(env.action_space, gym.spaces.Discrete):
            raise TypeError(f"MaskInObservation: needs a Discrete action space, not {env.action_space}")
        self._masks = env.unwrapped.action_masks
        # a plain Discrete: the environment's samples among allowed actions through a bound method of the
        # environment, which RLlib cannot deep-copy into its module spec (the mask is in the observation instead)
        self.action_space = gym.spaces.Discrete(int(env.action_space.n))
        self.observation_space = gym.spaces.Dict({
            OBS_KEY: env.observation_space,
            MASK_KEY: gym.spaces.Box(0.0, 1.0, (int(env.action_space.n),), np.float32),
        })

    def observation(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        return {OBS_KEY: observation, MASK_KEY: np.asarray(self._masks(), dtype=np.float32)}


class ScaleReward(gym.RewardWrapper):
    """The reward times ``scale`` (> 0): keeps PPO's value targets O(1) when a step's cost is an integral of jobs
    over time. Training only: evaluation measures response times, not rewards."""

    def __init__(self, env: gym.Env, scale: float) -> None:
        super().__init__(env)
        if not (isinstance(scale, (int, float)) and np.isfinite(scale) and scale > 0):
            raise ValueError(f"reward_scale = {scale!r}: must be a finite number > 0")
        self.scale = float(scale)

    def reward(self, reward: float) -> float:
        return float(reward) * self.scale


class AverageCost(gym.Wrapper):
    """Reward −∫ (N − ρ) dt instead of −∫ N dt over each step (``info["dt"]``): the average-cost (differential)
    reward of ``msjgym.envs.sb3.AverageCostReward``, per environment copy.

    Why: PPO discounts per step, and a step lasts a variable time dt; with the raw reward a policy that makes more
    decisions per unit time has its costs discounted away faster, and PPO learns to keep servers idle. Subtracting
    ρ·dt, ρ ≈ the policy's own time-average number in system, makes rewards average zero per unit time; it does not
    change which policy has the lower average number in system. ρ = Σ cost / Σ dt over this copy's steps, with
    exponential forgetting at ``rate`` per step. Training only.
    """

    def __init__(self, env: gym.Env, rate: float = 1e-3) -> None:
        super().__init__(env)
        if not (isinstance(rate, (int, float)) and 0 < rate <= 1):
            raise ValueError(f"average_cost_rate = {rate!r}: must be in (0, 1] (forgetting per step)")
        self.average = RunningAverageCost(rate)

    @property
    def rho(self) -> float:
        """The current centre ρ (jobs)."""
        return self.average.rho

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        dt = float(info["dt"])
        rho = self.average.update(-float(reward), dt)
        return obs, float(reward) + rho * dt, terminated, truncated, info


def make_env(config: dict[str, Any]) -> gym.Env:
    """The env creator: ``config`` (RLlib's ``env_config``) holds ``env_id`` (``"msjgym/MSJ-v0"`` or
    ``"msjgym/Dispatch-v0"``), optional ``average_cost`` (True: :class:`AverageCost`, with ``average_cost_rate``),
    optional ``reward_scale`` (default 1), and the environment's keyword arguments. Returns
    ``MaskInObservation(gymnasium.make(env_id, **kwargs))``, its reward centred and scaled when asked."""
    import msjgym.envs  # noqa: F401  registers the Gymnasium ids in this (possibly remote) process

    kwargs = dict(config)
    env_id = kwargs.pop("env_id", None)
    if not isinstance(env_id, str):
        raise ValueError(f"env_config['env_id'] = {env_id!r}: must be a registered id such as 'msjgym/MSJ-v0'")
    scale = kwargs.pop("reward_scale", 1.0)
    average, rate = kwargs.pop("average_cost", False), kwargs.pop("average_cost_rate", 1e-3)
    env = gym.make(env_id, **kwargs)
    if average:
        env = AverageCost(env, rate)
    if scale != 1.0:
        env = ScaleReward(env, scale)
    return MaskInObservation(env)
