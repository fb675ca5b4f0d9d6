"""Property-based tests of every Gymnasium environment (``msjgym/MSJ-v0`` in both modes, ``msjgym/AdaptiveLoss-v0``,
``msjgym/Dispatch-v0`` with each observation): random valid arguments and random sequences of masked-valid actions.

After every step: the observation lies in the observation space (right shape, float32, within the bounds), the reward
is finite and not positive (−∫N dt, minus a blocking penalty, or −E[response time]), ``info["dt"]`` is finite and
>= 0, the clock ``info["time"]`` advances by exactly ``dt`` within an episode, and the mask allows at least one
action. A masked (invalid) action raises ``ValueError`` naming the step, and leaves the environment usable.
The vector environments get the same checks on every copy.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hypothesis_profiles import scaled

import gymnasium as gym

import msjgym  # noqa: E402,F401  registers the environments

MSJ, LOSS, DISPATCH = "msjgym/MSJ-v0", "msjgym/AdaptiveLoss-v0", "msjgym/Dispatch-v0"


@st.composite
def env_cases(draw) -> tuple[str, dict]:
    """(an environment id, valid keyword arguments)."""
    env_id = draw(st.sampled_from([MSJ, LOSS, DISPATCH]))
    if env_id == MSJ:
        mode = draw(st.sampled_from(["start", "preemptive"]))
        scenario = draw(st.sampled_from(["one-and-n", "finite-skip-fig6"]))
        kwargs = {"scenario": scenario, "mode": mode, "window": draw(st.integers(1, 6)),
                  "horizon_jobs": draw(st.integers(5, 60))}
        if scenario == "one-and-n":
            kwargs |= {"servers": draw(st.integers(1, 12)), "p_n": draw(st.floats(0.0, 0.5))}
        else:
            kwargs["load"] = draw(st.floats(0.1, 1.5))  # an agent may also face an overloaded system
        return env_id, kwargs
    if env_id == LOSS:
        servers = draw(st.integers(1, 40))
        kwargs = {"scenario": "loss-full-access", "servers": servers, "d": draw(st.integers(1, min(servers, 4))),
                  "lam": draw(st.floats(0.05, 0.95)), "horizon_jobs": draw(st.integers(5, 60)),
                  "blocking_penalty": draw(st.floats(0.0, 10.0))}
        return env_id, kwargs
    servers = draw(st.integers(1, 40))
    observation = draw(st.sampled_from(["sampled", "histogram", "estimates"]))
    kwargs = {"servers": servers, "lam": draw(st.floats(0.05, 0.95)), "observation": observation,
              "horizon": draw(st.integers(5, 60)), "reward": draw(st.sampled_from(["holding", "response"])),
              "dist": draw(st.sampled_from(["exp", "erlang(k=3)", "hyperexp(scv=4)"]))}
    if observation == "sampled":
        kwargs["d"] = draw(st.integers(1, servers))
    else:
        kwargs["levels"] = draw(st.integers(1, 10))
    if observation == "estimates":
        kwargs["information"] = draw(st.sampled_from(["push", "pull"]))
    return env_id, kwargs


def _check_step(env, obs, reward, info, where: str) -> None:
    space = env.observation_space
    assert obs.shape == space.shape and obs.dtype == np.float32, f"{where}: obs {obs.shape} {obs.dtype}"
    assert space.contains(obs), f"{where}: observation outside {space}: {obs}"
    assert math.isfinite(reward) and reward <= 0.0, f"{where}: reward {reward}"
    dt = info["dt"]
    assert math.isfinite(dt) and dt >= 0.0, f"{where}: dt {dt}"
    assert env.unwrapped.action_masks().any(), f"{where}: no action allowed"


@settings(max_examples=scaled(15))
@given(case=env_cases(), choices=st.lists(st.integers(0, 2**16), min_size=1, max_size=150),
       seed=st.integers(0, 2**31 - 1))
def test_random_masked_actions_keep_the_environment_consistent(case, choices, seed):
    env_id, kwargs = case
    env = gym.make(env_id, **kwargs)
    obs, info = env.reset(seed=seed)
    _check_step(env, obs, 0.0, {"dt": 0.0}, "reset")
    clock = info.get("time", 0.0)
    for i, choice in enumerate(choices):
        mask = env.unwrapped.action_masks()
        allowed = np.flatnonzero(mask)
        action = int(allowed[choice % allowed.size])
        obs, reward, terminated, truncated, info = env.step(action)
        _check_step(env, obs, reward, info, f"{env_id} {kwargs} step {i} action {action}")
        assert not terminated
        if "time" in info:
            assert math.isclose(info["time"], clock + info["dt"], rel_tol=1e-9, abs_tol=1e-9), \
                f"step {i}: time {info['time']} != {clock} + dt {info['dt']}"
            clock = info["time"]
        if truncated:
            obs, info = env.reset()
            clock = info.get("time", 0.0)


@settings(max_examples=scaled(10))
@given(case=env_cases(), choices=st.lists(st.integers(0, 2**16), min_size=1, max_size=20),
       bad=st.integers(0, 2**16), seed=st.integers(0, 2**31 - 1))
def test_a_masked_action_is_refused_and_the_environment_goes_on(case, choices, bad, seed):
    env_id, kwargs = case
    env = gym.make(env_id, **kwargs, invalid_action="raise").unwrapped  # the checkers' wrappers would intercept first
    env.reset(seed=seed)
    for choice in choices:
        mask = env.action_masks()
        refused = np.flatnonzero(~mask)
        if refused.size:
            with pytest.raises(ValueError, match=r"^step \d+: "):
                env.step(int(refused[bad % refused.size]))
            assert np.array_equal(env.action_masks(), mask)  # nothing happened
        for outside in (-1, mask.size):
            with pytest.raises(ValueError):
                env.step(outside)
        allowed = np.flatnonzero(env.action_masks())
        obs, reward, _, truncated, info = env.step(int(allowed[choice % allowed.size]))
        _check_step(env, obs, reward, info, f"{env_id} {kwargs}")
        if truncated:
            env.reset()


@settings(max_examples=scaled(6))
@given(case=env_cases(), num_envs=st.integers(1, 4), choices=st.lists(st.integers(0, 2**16), min_size=1,
                                                                        max_size=60),
       seed=st.integers(0, 2**31 - 1))
def test_vector_environments_random_masked_actions(case, num_envs, choices, seed):
    env_id, kwargs = case
    venv = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)
    obs, infos = venv.reset(seed=seed)
    space = venv.single_observation_space
    for step, choice in enumerate(choices):
        masks = venv.unwrapped.action_masks() if hasattr(venv.unwrapped, "action_masks") else infos["action_mask"]
        actions = np.array([np.flatnonzero(m)[(choice + i) % int(m.sum())] for i, m in enumerate(masks)], np.int64)
        obs, rewards, terminated, truncated, infos = venv.step(actions)
        assert obs.shape == (num_envs, *space.shape) and obs.dtype == np.float32
        for i in range(num_envs):
            assert space.contains(obs[i]), f"step {step}, copy {i}: {obs[i]} outside {space}"
        assert np.all(np.isfinite(rewards)) and np.all(rewards <= 0.0), rewards
        assert np.all(np.isfinite(infos["dt"])) and np.all(infos["dt"] >= 0.0), infos["dt"]
        assert not terminated.any()
    venv.close()
