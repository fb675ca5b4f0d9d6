"""Stable-Baselines3 glue: ``to_sb3`` turns the native vector environment into an SB3 ``VecEnv``.

Needs stable-baselines3 (and torch), imported on first use only: ``import msjgym`` stays fast and works without
them. sb3-contrib's MaskablePPO gets the action masks through ``get_action_masks``.

    >>> from sb3_contrib import MaskablePPO
    >>> from msjgym.envs import MSJVectorEnv, to_sb3
    >>> env = to_sb3(MSJVectorEnv(64, scenario="one-and-n", horizon_jobs=2000))
    >>> model = MaskablePPO("MlpPolicy", env).learn(100_000)

``Log1pExtractor`` is an optional features extractor (``policy_kwargs={"features_extractor_class":
Log1pExtractor}``): it feeds log(1 + observation) to the network, so that counts and ages, which are unbounded, stay
of order 1 without a running normalisation that would have to be saved beside the model. ``Log1pMlpPolicy`` is
SB3's ``MlpPolicy`` (PPO, A2C) with that extractor, for configuration files that can name a policy class but not
an extractor (RL Zoo: ``policy: msjgym.envs.sb3.Log1pMlpPolicy``, ``baselines/rl_zoo/ppo.yml``).
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from msjgym.core.user_policy import greedy_actor
from msjgym.envs.base import BatchedVectorEnv
from msjgym.envs.wrappers import RunningAverageCost

__all__ = ["to_sb3", "greedy_actor", "record_env", "SB3VecEnv", "Log1pExtractor", "Log1pMlpPolicy",
           "AverageCostReward"]


def record_env(model: Any, venv: BatchedVectorEnv) -> dict[str, Any]:
    """Keep with ``model`` (saved by ``model.save`` in its zip) the arguments of ``venv`` that fix the observation and
    the actions (``venv.spec_.settings()``, e.g. ``mode``, ``window``, ``estimates`` of ``msjgym/MSJ-v0``), so that
    ``msjgym evaluate --policy sb3:MODEL.zip`` builds the same observation without being told
    (:func:`msjgym.core.user_policy.saved_env_settings`); the reward and the episodes are training's, not saved.
    Call it before ``model.save``; returns what it recorded."""
    from msjgym.core.user_policy import SAVED_ENV_KEY

    settings = getattr(venv.spec_, "settings", None)
    if settings is None:
        raise TypeError(f"record_env: {type(venv).__name__} has no settings to record")
    recorded = {"id": getattr(type(venv), "doc").id, **settings()}
    setattr(model, SAVED_ENV_KEY, recorded)
    return recorded


def to_sb3(venv: BatchedVectorEnv) -> Any:
    """An SB3 ``VecEnv`` over any native vector environment of msjgym (a
    :class:`~msjgym.envs.base.BatchedVectorEnv`, e.g. ``gym.make_vec(id, n, vectorization_mode="vector_entry_point")``
    for any registered id): same-step autoreset, terminal observations, masks; see ``SB3VecEnv``. Wrap it in
    ``VecMonitor`` to log episode returns."""
    return _classes()["SB3VecEnv"](venv)


def __getattr__(name: str) -> Any:  # the SB3 classes are defined on first use (they import SB3, torch)
    if name in ("SB3VecEnv", "Log1pExtractor", "Log1pMlpPolicy", "AverageCostReward"):
        return _classes()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _classes() -> dict[str, type]:
    import torch
    from stable_baselines3.common.policies import ActorCriticPolicy
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
    from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn

    class SB3VecEnv(VecEnv):
        """An SB3 ``VecEnv`` over a native vector environment (made by ``to_sb3``), with SB3's semantics.

        * ``step_wait``: where a copy's episode ended, ``dones[i]`` is True, ``infos[i]["terminal_observation"]``
          holds its last observation, ``infos[i]["TimeLimit.truncated"]`` is True (msjgym's episodes end by
          truncation, never by termination: bootstrapping from the terminal observation is right), and the returned
          observation is the new episode's first (its initial state, where every action is allowed). Every
          ``infos[i]`` has ``"dt"``, the time the step advanced.
        * ``action_masks()``, and ``env_method("action_masks")`` (one row per copy), which is what sb3-contrib's
          ``get_action_masks`` calls.
        * ``seed(s)``: the next ``reset()`` is the vector environment's ``reset(seed=s)`` (copy i seeded from
          ``SeedSequence(s).spawn(num_envs)[i]``); later resets continue the streams.
        * ``get_attr(name)``: the vector environment's attribute, repeated per copy; ``env_method`` knows only
          ``action_masks`` (the copies are one batched object, not separate environments).
        """

        def __init__(self, venv: BatchedVectorEnv) -> None:
            if not isinstance(venv, BatchedVectorEnv):
                raise TypeError(f"to_sb3: expected a native vector environment of msjgym (a BatchedVectorEnv, from "
                                f"gym.make_vec(..., vectorization_mode='vector_entry_point')), got "
                                f"{type(venv).__name__}")
            self.venv = venv
            self._actions: np.ndarray | None = None
            self._seed: int | None = None
            super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)

        # ------------------------------------------------------------------ stepping
        def reset(self) -> np.ndarray:
            obs, _ = self.venv.reset(seed=self._seed)
            self._seed = None
            self._reset_seeds()
            self._reset_options()
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = np.asarray(actions).reshape(self.num_envs)  # checked by the vector environment

        def step_wait(self) -> VecEnvStepReturn:
            if self._actions is None:
                raise RuntimeError("step_wait() without step_async()")
            obs, rewards, terminations, truncations, info = self.venv.step(self._actions)
            self._actions = None
            dones = terminations | truncations
            dts = info["dt"]
            infos: list[dict[str, Any]] = [{"dt": float(dt)} for dt in dts]
            if dones.any():
                ended, new_obs = self.venv.reset_ended()
                for i in ended:
                    infos[i]["terminal_observation"] = obs[i]
                    infos[i]["TimeLimit.truncated"] = bool(truncations[i] and not terminations[i])
                obs = new_obs
            return obs, rewards.astype(np.float32), dones, infos

        def action_masks(self) -> np.ndarray:
            """bool[num_envs, A]: each copy's allowed actions now."""
            return self.venv.action_masks()

        def seed(self, seed: int | None = None) -> Sequence[int | None]:
            """Seed the next ``reset()``: the vector environment's ``reset(seed=seed)``. Returns
            ``[seed] * num_envs`` (copy i draws from ``SeedSequence(seed).spawn(num_envs)[i]``)."""
            if seed is None:
                seed = int(np.random.randint(0, np.iinfo(np.uint32).max, dtype=np.uint32))
            self._seed = int(seed)
            return [self._seed] * self.num_envs

        def close(self) -> None:
            self.venv.close()

        # ------------------------------------------------------------------ attributes
        def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
            value = getattr(self.venv, attr_name)  # AttributeError when missing, as SB3 expects
            return [value for _ in self._get_indices(indices)]

        def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
            raise AttributeError(f"set_attr({attr_name!r}): the copies of a vector environment share their attributes; "
                                 "set it on the vector environment itself")

        def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                       **method_kwargs: Any) -> list[Any]:
            if method_name == "action_masks":
                masks = self.venv.action_masks()
                return [masks[i] for i in self._get_indices(indices)]
            raise AttributeError(f"env_method({method_name!r}): a vector environment's copies are one batched object; "
                                 "only 'action_masks' is available per copy")

        def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
            return [False for _ in self._get_indices(indices)]

        def get_images(self) -> Sequence[np.ndarray | None]:
            return [None for _ in range(self.num_envs)]


    class Log1pExtractor(BaseFeaturesExtractor):
        """Features = log(1 + observation), flattened (msjgym's observations are >= 0). Saved with the model by
        reference, so loading it needs msjgym installed."""

        features_transform = "log1p"  # what msjgym.core.user_policy.greedy_actor applies before the network

        def __init__(self, observation_space: gym.spaces.Box) -> None:
            super().__init__(observation_space, int(np.prod(observation_space.shape)))

        def forward(self, observations: torch.Tensor) -> torch.Tensor:
            return torch.log1p(torch.clamp(observations.flatten(1), min=0.0))

    class Log1pMlpPolicy(ActorCriticPolicy):
        """SB3's ``MlpPolicy`` (actor-critic: PPO, A2C) whose features extractor defaults to ``Log1pExtractor``;
        any other ``policy_kwargs`` (``net_arch``, ``activation_fn``, ...) as ``MlpPolicy``'s."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("features_extractor_class", Log1pExtractor)
            super().__init__(*args, **kwargs)

    class AverageCostReward(VecEnvWrapper):
        """Reward −∫ (N − ρ) dt instead of −∫ N dt over each step: the average-cost (differential) reward.

        Why: PPO discounts per step, and an msjgym step lasts a variable time dt. With the raw reward, a policy that
        makes more decisions per unit time has its costs discounted away faster; on "1 and n" MaskablePPO then
        learns to keep servers idle (every event becomes a decision epoch), worse than random. Subtracting ρ·dt,
        ρ ≈ the policy's own time-average number in system, makes rewards average zero per unit time, so that how
        many steps a unit of time takes no longer matters to first order; it does not change which policy has the
        lower average number in system. ``average``: a fixed ρ (jobs), or "adaptive": ρ tracks Σcost / Σdt over
        the vector steps with exponential forgetting at ``rate`` per vector step.
        """

        def __init__(self, venv: VecEnv, average: float | str = "adaptive", rate: float = 1e-3) -> None:
            super().__init__(venv)
            if average != "adaptive" and (isinstance(average, bool) or not isinstance(average, (int, float))
                                          or not average >= 0):
                raise ValueError(f"average = {average!r}: a number of jobs >= 0, or \"adaptive\"")
            if not 0 < rate <= 1:
                raise ValueError(f"rate = {rate!r}: must be in (0, 1] (forgetting per vector step)")
            self.adaptive = average == "adaptive"
            self.rho = 0.0 if self.adaptive else float(average)
            self._average = RunningAverageCost(rate)

        def reset(self) -> np.ndarray:
            return self.venv.reset()

        def step_wait(self) -> VecEnvStepReturn:
            obs, rewards, dones, infos = self.venv.step_wait()
            dt = np.array([info["dt"] for info in infos])
            if self.adaptive:
                self.rho = self._average.update(-float(rewards.sum()), float(dt.sum()))
            return obs, (rewards + self.rho * dt).astype(np.float32), dones, infos

    classes = {"SB3VecEnv": SB3VecEnv, "Log1pExtractor": Log1pExtractor, "Log1pMlpPolicy": Log1pMlpPolicy,
               "AverageCostReward": AverageCostReward}
    for name, cls in classes.items():  # importable (and picklable) as msjgym.envs.sb3.NAME
        cls.__module__, cls.__qualname__ = __name__, name
    globals().update(classes)
    return classes
