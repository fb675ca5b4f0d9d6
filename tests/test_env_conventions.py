"""Gymnasium conventions of every msjgym environment: render() before reset() raises ResetNeeded (also
on the unwrapped and the native vector environments, which no OrderEnforcing wrapper guards), unknown string
options are refused, and the native vector environments accept every seed form ``SyncVectorEnv.reset`` does."""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import msjgym  # noqa: F401  registers the environments
from msjgym import envs
from msjgym.errors import MsjgymError

ENV_IDS = [r.id for r in envs.registrations()] if hasattr(envs, "registrations") else [
    "msjgym/MSJ-v0", "msjgym/Dispatch-v0", "msjgym/FiniteSkip-v0", "msjgym/AdaptiveLoss-v0"]
SMALL = {"msjgym/Dispatch-v0": {"servers": 4}}


def _vec(env_id: str, n: int, **kwargs):
    return gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **SMALL.get(env_id, {}), **kwargs)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_render_before_reset_raises_reset_needed(env_id):
    single = gym.make(env_id, render_mode="ansi", **SMALL.get(env_id, {})).unwrapped
    with pytest.raises(gym.error.ResetNeeded, match="reset"):
        single.render()
    single.reset(seed=1)
    assert isinstance(single.render(), str)
    venv = _vec(env_id, 2, render_mode="ansi")
    with pytest.raises(gym.error.ResetNeeded):
        venv.render()
    venv.reset(seed=1)
    assert venv.render().count("copy ") == 2


@pytest.mark.parametrize("option, value", [("observation", "histogramm"), ("information", "bogus"),
                                           ("reward", "holdng"), ("information", "pull")])
def test_dispatch_refuses_unknown_or_unused_string_options(option, value):
    """An unknown value, or an option the chosen observation does not use (information without 'estimates')."""
    with pytest.raises(MsjgymError, match=option):
        gym.make("msjgym/Dispatch-v0", servers=4, **{option: value})


def _single_obs(env_id: str, seed: int | None) -> np.ndarray:
    env = gym.make(env_id, **SMALL.get(env_id, {})).unwrapped
    return env.reset(seed=seed)[0]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_list_of_seeds_seeds_each_copy_as_the_single_env(env_id):
    """reset(seed=[s0, None, s2]): copies 0 and 2 start as the single environment reset with s0 and s2 (the
    SyncVectorEnv rule); after seeding, a None copy continues its own stream (its next episode is not the one a
    re-seed would give); an int seeds copy i from SeedSequence(s).spawn(n)[i]; wrong length or type: one error."""
    venv = _vec(env_id, 3)
    obs, _ = venv.reset(seed=[11, None, 13])
    assert np.array_equal(obs[0], _single_obs(env_id, 11)) and np.array_equal(obs[2], _single_obs(env_id, 13))
    again, _ = venv.reset(seed=[11, None, 13])
    assert np.array_equal(again[0], obs[0]) and np.array_equal(again[2], obs[2])
    a, _ = _vec(env_id, 3).reset(seed=5)
    b, _ = _vec(env_id, 3).reset(seed=5)
    assert np.array_equal(a, b)
    for bad, kind in (([1, 2], ValueError), ([1, 2, "x"], TypeError), ([1, -2, 3], ValueError), (1.5, TypeError),
                      (True, TypeError)):
        with pytest.raises(kind, match="seed"):
            venv.reset(seed=bad)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(0, 2**64 - 1)), min_size=3, max_size=3))
def test_every_list_of_ints_or_none_is_accepted_and_reproducible(seeds):
    env_id = "msjgym/MSJ-v0"
    first, _ = _vec(env_id, 3).reset(seed=seeds)
    second, _ = _vec(env_id, 3).reset(seed=seeds)
    for i, s in enumerate(seeds):
        if s is not None:
            assert np.array_equal(first[i], second[i])
