"""msjgym/MSJ-v0 and its native vector environment: registration, checkers, masks, seeds, autoreset."""
from __future__ import annotations

import numpy as np
import pytest

import gymnasium as gym

import msjgym  # noqa: E402  registers the environments
import msjgym.envs  # noqa: E402
from msjgym.envs import ENV_ID, MSJEnv  # noqa: E402


@pytest.mark.parametrize("env_id", [reg.id for reg in msjgym.envs.registrations()])
def test_every_registered_id_makes_with_its_defaults_and_steps(env_id):
    """gymnasium is a core dependency: every id the env modules declare is registered on ``import msjgym`` and
    ``gym.make(id)`` with no arguments gives an environment that resets and takes one allowed step."""
    assert env_id in gym.registry
    env = gym.make(env_id)
    obs, _ = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    mask = env.unwrapped.action_masks()
    assert mask.shape == (env.action_space.n,) and mask.any()
    obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(mask)[0]))
    assert env.observation_space.contains(obs) and np.isfinite(reward) and info["dt"] >= 0
    env.close()


@pytest.mark.parametrize("kwargs", [{}, {"mode": "preemptive", "scenario": "finite-skip-fig6"}])
def test_checkers_pass(kwargs):
    """Gymnasium's and Stable-Baselines3's environment checkers, on the registered id made with no arguments."""
    from gymnasium.utils.env_checker import check_env
    env = gym.make(ENV_ID, **kwargs)
    check_env(env.unwrapped)
    sb3 = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3.check_env(gym.make(ENV_ID, **kwargs).unwrapped)


def _episode(env, seed, steps=300):
    obs, _ = env.reset(seed=seed)
    out = [obs]
    rng = np.random.default_rng(0)
    for _ in range(steps):
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        obs, reward, terminated, truncated, info = env.step(action)
        out.append(np.concatenate([obs, [reward, info["dt"]]]))
        if truncated:
            break
    return np.concatenate(out)


def test_reset_with_a_seed_gives_identical_episodes():
    env = MSJEnv("one-and-n")
    assert np.array_equal(_episode(env, 5), _episode(env, 5))
    assert not np.array_equal(_episode(env, 5), _episode(env, 6))


def test_the_first_step_documents_the_initial_state_then_masks_bind():
    env = MSJEnv("one-and-n", invalid_action="raise")
    obs, info = env.reset(seed=1)
    assert env.action_masks().all() and info["time"] == 0.0 and obs[0] == 1.0  # empty system, all allowed
    env.step(3)  # any action starts the clock
    mask = env.action_masks()
    assert not mask.all()
    bad = int(np.flatnonzero(~mask)[0])
    with pytest.raises(ValueError, match=rf"step 1: action {bad} is not allowed now"):
        env.step(bad)


def test_reward_is_minus_the_integral_of_the_number_in_system():
    """Over an episode, −Σ rewards / T equals the time-average number in system (by construction)."""
    env = MSJEnv("one-and-n", horizon_jobs=None, jobs=5_000, warmup=0, batches=1)
    env.reset(seed=2)
    total = 0.0
    wait = env.action_space.n - 1
    truncated = False
    while not truncated:
        mask = env.action_masks()
        _, reward, _, truncated, info = env.step(0 if mask[0] else wait)
        total += reward
    assert total < 0 and info["time"] > 0
    assert -total / info["time"] == pytest.approx(env.episode_result().replications[0]["number_in_system"], rel=0.02)


def test_episodes_truncate_at_the_job_horizon():
    env = MSJEnv("one-and-n", horizon_jobs=50)
    env.reset(seed=0)
    wait = env.action_space.n - 1
    steps, truncated = 0, False
    while not truncated:
        _, _, terminated, truncated, _ = env.step(wait if not env.action_masks().all() else 0)
        assert not terminated
        steps += 1
    assert 50 <= steps < 10_000


def test_native_vector_env_matches_single_envs_and_autoresets():
    """Copy i of the vector env behaves as a single env seeded with SeedSequence(s).spawn(n)[i]; after an episode
    ends, the next step resets it (NEXT_STEP) with reward 0."""
    venv = gym.make_vec(ENV_ID, num_envs=3, vectorization_mode="vector_entry_point", horizon_jobs=20)
    assert venv.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    obs, _ = venv.reset(seed=7)
    wait = venv.single_action_space.n - 1
    ended_once, rewards_after_end = False, []
    pending = np.zeros(3, dtype=bool)
    for _ in range(400):
        masks = venv.action_masks()
        actions = np.where(masks.all(axis=1), 0, wait)
        obs, rewards, terminated, truncated, _ = venv.step(actions)
        rewards_after_end += list(rewards[pending])
        pending = truncated.copy()
        ended_once |= truncated.any()
    assert ended_once and rewards_after_end and all(r == 0.0 for r in rewards_after_end)
    single = MSJEnv("one-and-n", horizon_jobs=500)
    venv2 = gym.make_vec(ENV_ID, num_envs=3, vectorization_mode="vector_entry_point", horizon_jobs=500,
                         invalid_action="raise")
    v_obs, _ = venv2.reset(seed=7)
    trajectories = [[v_obs]]
    for _ in range(30):  # no copy reaches its horizon in 30 steps
        masks = venv2.action_masks()
        v_obs, *_ = venv2.step(np.where(masks[:, 0], 0, wait))
        trajectories.append([v_obs])
    for i in range(3):
        single._seed_stream(np.random.SeedSequence(7).spawn(3)[i])
        s_obs, _ = single.reset()
        rows = [s_obs]
        for _ in range(30):
            s_obs, *_ = single.step(0 if single.action_masks()[0] else wait)
            rows.append(s_obs)
        assert np.array_equal(np.array(rows), np.array([t[0][i] for t in trajectories]))
    masks = venv2.action_masks()
    bad = int(np.flatnonzero(~masks[0])[0])
    with pytest.raises(ValueError, match=rf"env 0, step \d+: action {bad} is not allowed"):
        venv2.step(np.where(np.arange(3) == 0, bad, wait))


def test_render_mode_none_only_and_sb3_make_vec_env_works():
    """Environments take Gymnasium's ``render_mode`` keyword: None is accepted, anything else is a TypeError naming
    it (so SB3's ``make_vec_env``, which first asks for "rgb_array", retries without it instead of failing)."""
    assert gym.make("msjgym/MSJ-v0", render_mode=None).unwrapped.render_mode is None
    with pytest.raises(TypeError, match="render_mode='rgb_array'.*valid: None, 'ansi'"):
        gym.make("msjgym/Dispatch-v0", render_mode="rgb_array")
    sb3_env_util = pytest.importorskip("stable_baselines3.common.env_util", reason="needs the rl extra")
    venv = sb3_env_util.make_vec_env("msjgym/MSJ-v0", n_envs=2)
    assert venv.reset().shape[0] == 2
