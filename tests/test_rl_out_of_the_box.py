"""Reinforcement learning out of the box: on every registered environment a masked action falls back by
default (counted in ``info``), raises with ``invalid_action="raise"`` and costs ``invalid_action_penalty`` with
``"penalty"``; ``render_mode="ansi"`` draws the system; and a plain Stable-Baselines3 PPO learns through
``make_vec_env`` without an exception."""
from __future__ import annotations

import numpy as np
import pytest

import gymnasium as gym

import msjgym  # noqa: F401  registers the environments
from msjgym.envs import registrations
from masked_state import masked_state

IDS = [reg.id for reg in registrations()]
SMALL = {"msjgym/MSJ-v0": {"horizon_jobs": 200}, "msjgym/AdaptiveLoss-v0": {"servers": 6, "d": 3, "lam": 0.95},
         "msjgym/Dispatch-v0": {"servers": 6, "observation": "histogram", "levels": 3},
         "msjgym/FiniteSkip-v0": {"scenario": "finite-skip-fig6", "window": 4},
         "msjgym/JobScheduling-v0": {"processors": 64, "jobs": 2000, "window": 16},
         "msjgym/MultiResourceJobs-v0": {"window": 16, "time_scale": 1.0}}


def _masked_state(env_id: str, **kwargs):
    return masked_state(env_id, **SMALL[env_id], **kwargs)


@pytest.mark.parametrize("env_id", IDS)
def test_invalid_action_modes(env_id):
    env, bad = _masked_state(env_id)
    mask = env.action_masks()
    twin, _ = _masked_state(env_id, invalid_action="penalty", invalid_action_penalty=2.5)
    default = int(np.flatnonzero(mask)[-1])
    _, reward, _, _, info = env.step(bad)  # fallback: the mask's default action, counted
    assert info["fallback"] and info["fallbacks"] == 1
    _, penalised, _, _, info_p = twin.step(bad)
    assert info_p["fallback"] and penalised == pytest.approx(reward - 2.5)
    again, _ = _masked_state(env_id)
    _, reward_default, _, _, info_d = again.step(default)  # the same as choosing the default action
    assert reward_default == reward and not info_d["fallback"]
    strict, bad = _masked_state(env_id, invalid_action="raise")
    with pytest.raises(ValueError, match=rf"action {bad} is not allowed now"):
        strict.step(bad)
    with pytest.raises(ValueError, match="out of range"):
        env.step(env.action_space.n)  # out of range is never fixed
    with pytest.raises(ValueError, match="invalid_action = 'ignore'"):
        gym.make(env_id, invalid_action="ignore")
    with pytest.raises(ValueError, match="invalid_action_penalty = -1"):
        gym.make(env_id, invalid_action_penalty=-1)


@pytest.mark.parametrize("env_id", IDS)
def test_vector_env_falls_back_per_copy(env_id):
    venv = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", **SMALL[env_id],
                        invalid_action="penalty", invalid_action_penalty=1.0)
    venv.reset(seed=3)
    fallbacks = 0
    for step in range(300):
        masks = venv.action_masks()
        actions = np.where(np.arange(3) == step % 3, venv.single_action_space.n - 1, 0)
        _, rewards, _, _, infos = venv.step(actions)
        forbidden = ~masks[np.arange(3), actions]
        assert np.array_equal(infos["fallback"] & forbidden, infos["fallback"])
        fallbacks += int(infos["fallback"].sum())
    assert fallbacks > 0 and infos["fallbacks"].dtype == np.int64


@pytest.mark.parametrize("env_id", IDS)
def test_render_ansi(env_id):
    env = gym.make(env_id, **SMALL[env_id], render_mode="ansi")
    assert "ansi" in env.metadata["render_modes"]
    env.reset(seed=0)
    for _ in range(20):
        env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    text = env.render()
    assert isinstance(text, str) and text.strip() and ("busy" in text or "servers" in text or "queue" in text)
    plain = gym.make(env_id, **SMALL[env_id])
    plain.reset(seed=0)
    assert plain.render() is None
    venv = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", render_mode="ansi",
                        **SMALL[env_id])
    venv.reset(seed=0)
    assert venv.render().count("copy ") == 2


@pytest.mark.parametrize("env_id", IDS)
def test_plain_ppo_learns_through_make_vec_env(env_id):
    """Plain PPO (no masks) on every id, 1,024 steps, no exception."""
    pytest.importorskip("stable_baselines3", reason="needs the rl extra (pip install \"msjgym[rl]\")")
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    torch.set_num_threads(1)
    venv = make_vec_env(env_id, n_envs=2, seed=0)
    model = PPO("MlpPolicy", venv, n_steps=256, batch_size=128, n_epochs=1, seed=0, device="cpu")
    model.learn(1024)
    assert model.num_timesteps >= 1024
