"""msjgym/AdaptiveLoss-v0: checkers, masks, reward, seeds, the twin test (env = compiled fast path), vector env, SB3."""
from __future__ import annotations

import numpy as np
import pytest

import gymnasium as gym

import msjgym  # noqa: E402,F401  registers the environments
from msjgym.envs import to_sb3  # noqa: E402
from msjgym.systems.loss.env import LOSS_ENV_ID, AdaptiveLossEnv, AdaptiveLossVectorEnv  # noqa: E402
from msjgym.core import rng  # noqa: E402
from msjgym.systems.loss.metrics import loss_metrics  # noqa: E402
from msjgym.policies.loss import POLICIES  # noqa: E402
from msjgym.systems.loss import state as ls  # noqa: E402
from msjgym.systems.loss.simulation import LossSimulation  # noqa: E402


def test_checkers_pass_with_no_arguments():
    from gymnasium.utils.env_checker import check_env
    check_env(gym.make(LOSS_ENV_ID).unwrapped)
    sb3 = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3.check_env(gym.make(LOSS_ENV_ID).unwrapped)
    sb3.check_env(gym.make(LOSS_ENV_ID, scenario="loss-sampled", servers=200, k=3, beta=1.0).unwrapped)


@pytest.mark.parametrize("policy", ["greedy", "fixed-width"])
@pytest.mark.parametrize("k", [4, "n"])
def test_twin_env_equals_compiled_fast_path(policy, k):
    """The same deterministic policy, scenario and seed: identical trajectory through env.step and the kernel."""
    params = {"servers": 30, "d": 3, "lam": 0.9, "k": k}
    jobs = 3000
    env = AdaptiveLossEnv("loss-sampled", horizon_jobs=jobs, **params)
    agent = POLICIES[policy].agent(3)
    obs, _ = env.reset(seed=42)
    truncated, steps = False, 0
    while not truncated:
        obs, _, _, truncated, _ = env.step(agent.act(obs))
        steps += 1
    assert steps == jobs
    sim = LossSimulation(env.model, POLICIES[policy], 0, jobs, 1, rng.spawn_states(42, 1)[0])
    while not sim.advance(0, 1 << 20):
        pass
    st = env._venv._batch.state
    assert np.array_equal(st.x, sim.state.x)
    assert np.array_equal(st.ints[:, :ls.I_TRACE], sim.state.ints[:, :ls.I_TRACE])
    assert st.flts[0, ls.F_TIME] == sim.state.flts[0, ls.F_TIME]
    if policy == "greedy":  # same statistics too (the env measures with greedy's P(block | x))
        assert np.array_equal(st.stats, sim.state.stats)
    else:
        assert np.array_equal(st.stats[..., ls.S_WIDTH:ls.S_WIDTH + 4], sim.state.stats[..., ls.S_WIDTH:ls.S_WIDTH + 4])


def test_masks_and_invalid_action_error():
    env = AdaptiveLossEnv(servers=10, d=3, lam=0.95, horizon_jobs=None, invalid_action="raise")
    obs, _ = env.reset(seed=0)
    seen_partial = False
    for _ in range(2000):
        m = int(obs[0])
        mask = env.action_masks()
        assert mask.tolist() == [a <= m for a in range(4)]
        if m < 3:
            seen_partial = True
            with pytest.raises(ValueError, match=rf"action {m + 1} is not allowed now"):
                env.step(m + 1)
        obs, *_ = env.step(env.action_space.sample())
    assert seen_partial


def test_reward_is_minus_integral_of_jobs_minus_penalty():
    env = AdaptiveLossEnv(servers=20, d=2, lam=0.9, horizon_jobs=5000, blocking_penalty=2.5)
    obs, _ = env.reset(seed=3)
    total, blocked, time_sum, truncated = 0.0, 0, 0.0, False
    while not truncated:
        a = int(obs[0])
        blocked += a == 0
        obs, r, _, truncated, info = env.step(a)
        total += r
        time_sum += info["dt"]
    stats = env._venv._batch.state.stats[0].sum(axis=0)
    m = loss_metrics(stats, env.model)
    assert blocked > 50 and blocked == stats[ls.S_BLOCK]
    # −Σ r = ∫N dt over [first arrival, last arrival] + penalty·blocked; the kernel's ∫N dt starts at t = 0 (empty)
    assert -total == pytest.approx(stats[ls.S_JOBS] + 2.5 * blocked, rel=1e-9)
    assert m["number_in_system"] > 0


def test_seeds_and_vector_env_equal_single_envs():
    venv = AdaptiveLossVectorEnv(3, scenario="loss-sampled", servers=50, d=2, lam=0.9, k=5, horizon_jobs=200)
    obs, _ = venv.reset(seed=7)
    singles = [AdaptiveLossEnv("loss-sampled", servers=50, d=2, lam=0.9, k=5, horizon_jobs=200) for _ in range(3)]
    seeds = np.random.SeedSequence(7).spawn(3)
    for e, ss in zip(singles, seeds):  # copy i of the vector env uses SeedSequence(7).spawn(3)[i]
        e._seed_stream(ss)
    sobs = [e.reset()[0] for e in singles]
    assert np.array_equal(obs, np.stack(sobs))
    for step in range(450):  # crosses the autoreset at 200 and 400
        acts = obs[:, 0].astype(np.int64)
        obs, rew, term, trunc, _ = venv.step(acts)
        for i, e in enumerate(singles):
            if e._ended:
                o, _ = e.reset()
                r = 0.0
            else:
                o, r, _, _, _ = e.step(int(acts[i]))
            assert np.array_equal(o, obs[i]) and r == rew[i], (step, i)


def test_same_seed_same_episode_different_seed_different():
    def run(seed):
        env = AdaptiveLossEnv(servers=20, d=2, lam=0.9, horizon_jobs=300)
        obs, _ = env.reset(seed=seed)
        out = []
        for _ in range(300):
            obs, r, *_ = env.step(int(obs[0]))
            out.append(r)
        return np.array(out)
    assert np.array_equal(run(1), run(1)) and not np.array_equal(run(1), run(2))


def test_sb3_adapter_autoreset_and_masks():
    pytest.importorskip("stable_baselines3")
    venv = to_sb3(AdaptiveLossVectorEnv(2, horizon_jobs=5, servers=10, d=2, lam=0.9))
    venv.seed(1)
    obs = venv.reset()
    assert obs.shape == (2, 3)
    for t in range(5):
        venv.step_async(np.zeros(2, np.int64))
        obs, rewards, dones, infos = venv.step_wait()
    assert dones.all() and all("terminal_observation" in i and i["TimeLimit.truncated"] for i in infos)
    assert venv.env_method("action_masks")[0].all()  # new episode: the sample of an empty system shows d idle
    from sb3_contrib.common.maskable.utils import get_action_masks
    assert get_action_masks(venv).shape == (2, 3)


def test_a_builtins_agent_evaluated_as_a_users_policy_reproduces_the_fast_path():
    """A built-in policy's agent, evaluated like a user's policy, gives exactly the compiled path's numbers."""
    from msjgym.api import load_scenario
    from msjgym.evaluate import evaluate
    sc = load_scenario("loss-sampled", {"servers": 40, "d": 3, "lam": 0.9, "k": 6})
    agent = POLICIES["greedy"].agent(3)
    a = evaluate(sc, lambda obs, mask: agent.act(obs), reps=3, jobs=3000, warmup=500, seed=9, batches=5)
    b = evaluate(sc, "greedy", reps=3, jobs=3000, warmup=500, seed=9, batches=5)
    for name, est in a.metrics.items():
        assert est.mean == b.metrics[name].mean, name
    assert "residual_pasta" not in a.metrics and a.events == b.events


def test_an_agent_evaluated_with_a_masked_width_is_refused():
    from msjgym.api import load_scenario
    from msjgym.errors import PolicyError
    from msjgym.evaluate import evaluate
    sc = load_scenario("loss-sampled", {"servers": 10, "d": 3, "lam": 0.95, "k": 3})
    with pytest.raises(PolicyError, match=r"replication \d, step \d+: action 3 is not allowed now"):
        evaluate(sc, lambda obs, mask: 3, reps=2, jobs=2000, seed=1)


def test_maskable_ppo_trains_a_few_steps():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    env = to_sb3(AdaptiveLossVectorEnv(4, horizon_jobs=64, servers=20, d=2, lam=0.9, k=4, scenario="loss-sampled"))
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(256)
    obs = env.reset()
    actions, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert all(env.action_masks()[i, a] for i, a in enumerate(actions))
