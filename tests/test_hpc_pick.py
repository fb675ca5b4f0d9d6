"""The job-scoring policy on ``msjgym/JobScheduling-v0``: MaskablePPO trains on the native vector environment, the
saved model (with its environment's settings) evaluates in a fresh process through ``--policy sb3:MODEL.zip``
without custom objects, on a trace of another machine size; the recipe's warm start imitates the base order."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")
import gymnasium  # noqa: E402

import msjgym  # noqa: E402,F401  (registers the environments)

if "msjgym/JobScheduling-v0" not in gymnasium.registry:  # the environment lands from its own branch
    pytest.skip("msjgym/JobScheduling-v0 is not registered in this checkout", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"scenario": "lublin-feitelson", "jobs": 3000, "processors": 64, "seed": 3, "window": 16,
         "backfill": "easy", "base_order": "f1", "trace_windows": True, "horizon_jobs": 64}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    from msjgym.envs import to_sb3
    from msjgym.envs.sb3 import record_env
    from msjgym.envs.scoring import JobScoringPolicy

    venv = gym.make_vec("msjgym/JobScheduling-v0", 4, vectorization_mode="vector_entry_point", **SMALL)
    model = MaskablePPO(JobScoringPolicy, to_sb3(venv), n_steps=64, batch_size=128, n_epochs=1, seed=0, device="cpu")
    model.learn(256)
    record_env(model, venv)
    path = tmp_path_factory.mktemp("hpc") / "m.zip"
    model.save(path, exclude=["_last_obs", "_last_original_obs"])
    return path, model


def test_a_saved_model_evaluates_in_a_fresh_process_on_another_machine_size(saved):
    path, _ = saved
    assert path.stat().st_size < 1_000_000
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-m", "msjgym", "evaluate", "lublin-feitelson", "--param", "jobs=3000",
                          "--param", "processors=128", "--param", "seed=9", "--policy", f"sb3:{path}", "--windows",
                          "2", "--window-jobs", "100", "--seed", "4", "--no-progress"],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "bounded_slowdown" in out.stdout and "2 windows" in out.stdout


def test_the_numpy_actor_picks_as_model_predict(saved):
    """The evaluation path's greedy numpy copy of the scoring network and ``model.predict`` agree on visited
    states of the environment."""
    import gymnasium as gym

    from msjgym.core.user_policy import load_user_policy

    path, model = saved
    env = gym.make("msjgym/JobScheduling-v0", **SMALL).unwrapped
    _, decide = load_user_policy(f"sb3:{path}", env.spec_)
    obs, _ = env.reset(seed=1)
    several = 0
    for _ in range(300):
        mask = env.action_masks()
        action = decide(obs, mask)
        assert action == int(model.predict(obs, action_masks=mask, deterministic=True)[0])
        several += mask.sum() >= 2
        obs, _, _, truncated, _ = env.step(action)
        if truncated:
            obs, _ = env.reset()
    assert several > 10  # states where the choice is not forced


def test_the_warm_start_imitates_the_base_order(train):
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    from msjgym.envs import to_sb3
    from msjgym.envs.scoring import JobScoringPolicy

    venv = to_sb3(gym.make_vec("msjgym/JobScheduling-v0", 4, vectorization_mode="vector_entry_point", **SMALL))
    model = MaskablePPO(JobScoringPolicy, venv, n_steps=64, batch_size=128, seed=0, device="cpu")
    done = train.imitate_base_order(model, venv, decisions=4000, epochs=10, batch=128, learning_rate=3e-3, seed=0)
    assert done["decisions"] > 100
    assert done["agreement"] > 0.95  # the greedy choice is row 0 (the base order's pick) almost always


def test_the_inspect_action_trains_and_decides_through_the_pooled_head(tmp_path):
    """``action="inspect"`` (Discrete(2)): the scoring policy's actor pools the rows; its numpy copy decides as
    ``model.predict``."""
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    from msjgym.core.user_policy import load_user_policy
    from msjgym.envs import to_sb3
    from msjgym.envs.sb3 import record_env
    from msjgym.envs.scoring import JobScoringPolicy

    args = dict(SMALL, action="inspect")
    venv = gym.make_vec("msjgym/JobScheduling-v0", 2, vectorization_mode="vector_entry_point", **args)
    model = MaskablePPO(JobScoringPolicy, to_sb3(venv), n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(64)
    assert model.policy.action_net.out_features == 2
    record_env(model, venv)
    model.save(tmp_path / "inspect.zip")
    env = gym.make("msjgym/JobScheduling-v0", **args).unwrapped
    _, decide = load_user_policy(f"sb3:{tmp_path / 'inspect.zip'}", env.spec_)
    obs, _ = env.reset(seed=2)
    for _ in range(100):
        mask = env.action_masks()
        action = decide(obs, mask)
        assert action == int(model.predict(obs, action_masks=mask, deterministic=True)[0])
        obs, _, _, truncated, _ = env.step(action)
        if truncated:
            obs, _ = env.reset()
