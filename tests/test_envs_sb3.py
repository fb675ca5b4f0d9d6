"""The Stable-Baselines3 adapter ``to_sb3``, the greedy numpy actor behind ``--policy sb3:``, and the
continuous-discount wrapper."""
from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

from msjgym.envs import ContinuousDiscount, MSJEnv, MSJVectorEnv, to_sb3  # noqa: E402
from msjgym.envs.wrappers import discounted_step_reward  # noqa: E402


def _first_allowed(masks: np.ndarray) -> np.ndarray:
    return masks.argmax(axis=1)


def test_sb3_adapter_is_the_native_env_with_same_step_autoreset():
    """Per copy, the adapter's (observation, reward, dt) sequence is the native env's minus its reset steps; at an
    episode's end ``terminal_observation`` is the native env's last observation, TimeLimit.truncated is set, and
    the returned observation is the new episode's first (empty system, every action allowed)."""
    n = 3
    native = MSJVectorEnv(n, horizon_jobs=15)
    adapter = to_sb3(MSJVectorEnv(n, horizon_jobs=15))
    obs, _ = native.reset(seed=4)
    adapter.seed(4)
    sb3_obs = adapter.reset()
    assert np.array_equal(obs, sb3_obs)
    native_rows: list[list[tuple]] = [[] for _ in range(n)]
    sb3_rows: list[list[tuple]] = [[] for _ in range(n)]
    resetting = np.zeros(n, dtype=bool)
    for _ in range(600):  # native steps, including one reset step per episode end
        obs, rewards, _, truncated, info = native.step(_first_allowed(native.action_masks()))
        for i in np.flatnonzero(~resetting):
            native_rows[i].append((obs[i].tobytes(), float(rewards[i]), float(info["dt"][i]), bool(truncated[i])))
        resetting = truncated
    steps = min(len(rows) for rows in native_rows)
    ends = 0
    for _ in range(steps):
        adapter.step_async(_first_allowed(adapter.action_masks()))
        obs, rewards, dones, infos = adapter.step_wait()
        assert rewards.dtype == np.float32
        for i in range(n):
            if dones[i]:
                ends += 1
                seen = infos[i]["terminal_observation"]
                assert infos[i]["TimeLimit.truncated"] is True
                assert obs[i][0] == 1.0 and adapter.action_masks()[i].all()  # the new episode's first state
            else:
                seen = obs[i]
                assert "terminal_observation" not in infos[i]
            sb3_rows[i].append((seen.tobytes(), float(np.float32(rewards[i])), infos[i]["dt"], bool(dones[i])))
    assert ends >= n  # every copy ended at least one episode
    for i in range(n):
        expected = [(o, float(np.float32(r)), dt, d) for o, r, dt, d in native_rows[i][:steps]]
        assert sb3_rows[i] == expected


def test_sb3_adapter_masks_and_attributes():
    from sb3_contrib.common.maskable.utils import get_action_masks
    adapter = to_sb3(MSJVectorEnv(2, horizon_jobs=50))
    adapter.seed(0)
    adapter.reset()
    adapter.step(np.zeros(2, dtype=np.int64))
    assert np.array_equal(get_action_masks(adapter), adapter.action_masks())
    assert adapter.get_attr("num_envs") == [2, 2]
    with pytest.raises(AttributeError, match="only 'action_masks'"):
        adapter.env_method("render")
    with pytest.raises(TypeError, match="expected a native vector environment"):
        to_sb3(MSJEnv())


def _visited_states(count: int) -> tuple[np.ndarray, np.ndarray]:
    """States (and masks) visited under uniformly random allowed actions."""
    env = MSJEnv("one-and-n", window=2, horizon_jobs=None, jobs=count, warmup=0, batches=1)
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(3)
    states, masks = [], []
    for _ in range(count):
        mask = env.action_masks()
        states.append(obs)
        masks.append(mask)
        obs, *_ = env.step(int(rng.choice(np.flatnonzero(mask))))
    return np.array(states), np.array(masks)


@pytest.mark.parametrize("log1p,activation", [(True, "tanh"), (False, "relu")])
def test_greedy_actor_equals_model_predict(log1p, activation):
    """The numpy actor behind ``--policy sb3:`` picks the same action as ``model.predict(deterministic=True)``,
    with MaskablePPO's masks, on visited states (random weights of order 1, so that the chosen action varies)."""
    import torch
    from sb3_contrib import MaskablePPO

    from msjgym.envs.sb3 import Log1pExtractor, greedy_actor
    kwargs = {"net_arch": [16, 16], "activation_fn": torch.nn.Tanh if activation == "tanh" else torch.nn.ReLU}
    if log1p:
        kwargs["features_extractor_class"] = Log1pExtractor
    model = MaskablePPO("MlpPolicy", to_sb3(MSJVectorEnv(2, window=2)), policy_kwargs=kwargs, seed=1, device="cpu")
    with torch.no_grad():
        for weights in model.policy.parameters():
            weights.normal_(0.0, 1.0)
    decide = greedy_actor(model)
    states, masks = _visited_states(500)
    theirs = [int(model.predict(o, action_masks=m, deterministic=True)[0]) for o, m in zip(states, masks)]
    assert [decide(o, m) for o, m in zip(states, masks)] == theirs
    assert len(set(theirs)) > 1  # not a constant policy: the comparison could fail


def test_maskable_ppo_learns_a_few_steps_and_loads_through_the_cli(tmp_path):
    """The documented path end to end: MaskablePPO on ``to_sb3``, saved, evaluated with ``--policy sb3:``; a
    model evaluated with another window gets one clear error."""
    from sb3_contrib import MaskablePPO

    from msjgym.cli import main
    model = MaskablePPO("MlpPolicy", to_sb3(MSJVectorEnv(4, window=2, horizon_jobs=100)), n_steps=32,
                        batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(256)
    path = tmp_path / "model.zip"
    model.save(path)
    assert main(["evaluate", "one-and-n", "--policy", f"sb3:{path}", "--window", "2", "--reps", "2",
                 "--jobs", "2000", "--seed", "1"]) == 0
    assert main(["evaluate", "one-and-n", "--policy", f"sb3:{path}", "--reps", "2", "--jobs", "2000"]) == 2


# ------------------------------------------------------------------------------------------- continuous discount
def test_discounted_step_reward_is_the_integral_for_a_constant_number_in_system():
    beta, dt, n = 0.3, 2.5, 4.0
    exact = -n * (1 - math.exp(-beta * dt)) / beta  # −∫_0^dt e^{−βs} N ds
    assert discounted_step_reward(-n * dt, dt, beta) == pytest.approx(exact, rel=1e-14)
    assert discounted_step_reward(0.0, 0.0, beta) == 0.0


def _number_in_system(obs: np.ndarray, classes: int) -> float:
    """Jobs waiting + in service, from a ``start``-mode observation (after the free-server entry, per class:
    waiting, in service, oldest age)."""
    per_class = obs[1:1 + 3 * classes].reshape(classes, 3)
    return float(per_class[:, 0].sum() + per_class[:, 1].sum())


def test_continuous_discount_is_exact_on_steps_with_a_constant_number_in_system():
    """Where the wrapper flags a step exact, its reward is −N·(1 − e^{−β·dt})/β with N the number in system at the
    step's start (read from the observation); ``discount`` is e^{−β·dt}; the undiscounted reward is kept."""
    beta = 0.5
    env = ContinuousDiscount(MSJEnv("one-and-n", horizon_jobs=400), beta=beta)
    classes = len(env.unwrapped.spec_.scenario.model.classes)
    obs, _ = env.reset(seed=9)
    wait = env.action_space.n - 1
    exact_steps = 0
    truncated = False
    while not truncated:
        masks = env.unwrapped.action_masks()
        before = _number_in_system(obs, classes)
        obs, reward, _, truncated, info = env.step(0 if masks[0] else wait)
        assert info["discount"] == pytest.approx(math.exp(-beta * info["dt"]), rel=1e-15)
        if info["discount_exact"] and info["dt"] > 0:
            exact_steps += 1
            assert info["undiscounted_reward"] == pytest.approx(-before * info["dt"], rel=1e-9)
            assert reward == pytest.approx(-before * -math.expm1(-beta * info["dt"]) / beta, rel=1e-9)
    assert exact_steps > 100


def test_continuous_discount_rejects_a_bad_rate():
    for beta in (0, -1.0, math.inf, "fast"):
        with pytest.raises(ValueError, match="beta"):
            ContinuousDiscount(MSJEnv(), beta=beta)
