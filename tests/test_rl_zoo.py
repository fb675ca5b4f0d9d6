"""RL Zoo (rl_zoo3) trains on msjgym's environments with our hyperparameter file (baselines/rl_zoo/ppo.yml), and
``msjgym evaluate --policy sb3:`` evaluates the model it saves as trained: the ``MaskFallback`` rule of its run and
VecNormalize's observation statistics applied, anything else that would change the policy refused."""
from __future__ import annotations

import json
import sys
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rl_zoo3", reason="RL Zoo is in the rl extra: pip install \"msjgym[rl]\"")

import gymnasium as gym  # noqa: E402

import msjgym.envs  # noqa: E402,F401  registers the environments
from msjgym.cli import main  # noqa: E402
from msjgym.core.actions import fallback_action  # noqa: E402
from msjgym.core.rl_zoo import read_run  # noqa: E402
from msjgym.core.user_policy import load_user_policy  # noqa: E402
from msjgym.errors import PolicyError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "baselines" / "rl_zoo" / "ppo.yml"


def _zoo_train(folder: Path, env_id: str, steps: int, *extra: str) -> Path:
    """RL Zoo's ``python -m rl_zoo3.train`` (its ``train()``, in this process) with our hyperparameter file into
    ``folder``; the saved model's path."""
    import torch
    from rl_zoo3.train import train

    argv = ["rl_zoo3.train", "--algo", "ppo", "--env", env_id, "--gym-packages", "msjgym", "--conf-file", str(CONF),
            "-n", str(steps), "--seed", "1", "--num-threads", "1", "--log-folder", str(folder), "--verbose", "0",
            *extra]
    saved, threads = sys.argv, torch.get_num_threads()
    sys.argv = argv
    try:
        train()
    finally:
        sys.argv = saved
        torch.set_num_threads(threads)
    name = env_id.replace("/", "-")
    return folder / "ppo" / f"{name}_1" / f"{name}.zip"


@pytest.fixture(scope="module")
def msj_model(tmp_path_factory) -> Path:
    """One short RL Zoo run on msjgym/MSJ-v0 (2048 steps: 8 environments x 256 steps, one PPO update)."""
    return _zoo_train(tmp_path_factory.mktemp("zoo"), "msjgym/MSJ-v0", 2048, "--eval-freq", "-1")


def test_rl_zoo_trains_and_msjgym_evaluates_the_saved_model(msj_model, capsys):
    run = msj_model.with_suffix("")
    assert msj_model.is_file() and (run / "config.yml").is_file() and (run / "vecnormalize.pkl").is_file()
    assert main(["evaluate", "one-and-n", "--policy", f"sb3:{msj_model}", "--reps", "2", "--jobs", "2000",
                 "--seed", "1", "--json", "--no-progress"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["policy"] == f"sb3:{msj_model}" and result["scenario"] == "one-and-n"
    assert result["reps"] == 2 and result["jobs"] == 2000 and result["events"] > 0
    if result["stable"]:
        assert result["metrics"]["response_time"]["mean"] > 0
    else:  # one PPO update: the model may well not keep up at λ = 0.8 × FCFS's threshold; that is a result too
        assert result["growth_rate"]["mean"] > 0 and result["unstable_replications"]


def test_the_saved_model_acts_as_trained_through_mask_fallback(msj_model):
    """The loader's decision = SB3's deterministic action, replaced by the fallback rule if forbidden (what the
    environment did in training: ``invalid_action="fallback"``, its default; the shipped file names no wrapper)."""
    from stable_baselines3 import PPO

    env = gym.make("msjgym/MSJ-v0").unwrapped
    _, decide = load_user_policy(f"sb3:{msj_model}", env.spec_)
    model = PPO.load(str(msj_model), device="cpu")
    obs, _ = env.reset(seed=5)
    forbidden = 0
    for _ in range(300):
        mask = env.action_masks()
        predicted = int(model.predict(obs, deterministic=True)[0])
        forbidden += not mask[predicted]
        action = decide(obs, mask)
        assert action == fallback_action(predicted, mask)
        obs, _, _, truncated, _ = env.step(action)
        if truncated:
            obs, _ = env.reset()
    assert forbidden > 0, "the rule never acted: the test would not tell it from the masked argmax"


def test_shape_mismatch_is_refused(msj_model):
    env = gym.make("msjgym/MSJ-v0", window=3).unwrapped
    with pytest.raises(PolicyError, match=r"trained on observations of shape \(47,\)"):
        load_user_policy(f"sb3:{msj_model}", env.spec_)


# ------------------------------------------------------------------ an RL Zoo run's files, written by hand
def _run_folder(tmp_path: Path, config: dict | None, obs_stats: tuple[np.ndarray, np.ndarray] | None) -> Path:
    """RL Zoo's layout for a PPO model on msjgym/Dispatch-v0 (histogram: some actions masked): ENV.zip, and in ENV/
    the config.yml (yaml.dump of an OrderedDict, as RL Zoo writes it) and a vecnormalize.pkl."""
    import yaml
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    zip_path = tmp_path / "ppo" / "msjgym-Dispatch-v0_1" / "msjgym-Dispatch-v0.zip"
    run = zip_path.with_suffix("")
    run.mkdir(parents=True)
    venv = DummyVecEnv([lambda: gym.make("msjgym/Dispatch-v0")])
    PPO("MlpPolicy", venv, n_steps=64, batch_size=64, seed=3, device="cpu").save(str(zip_path))
    if config is not None:
        (run / "config.yml").write_text(yaml.dump(OrderedDict(sorted(config.items()))))
    if obs_stats is not None:
        norm = VecNormalize(venv, norm_obs=True, norm_reward=True, clip_obs=2.0)
        norm.obs_rms.mean, norm.obs_rms.var = obs_stats
        norm.save(str(run / "vecnormalize.pkl"))
    return zip_path


def test_observation_normalization_is_applied_exactly_as_vecnormalize(tmp_path):
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecNormalize

    rng = np.random.default_rng(0)
    mean, var = rng.uniform(0.0, 0.3, 8), rng.uniform(0.001, 0.05, 8)
    zip_path = _run_folder(tmp_path, {"normalize": True, "policy": "MlpPolicy"}, (mean, var))
    env = gym.make("msjgym/Dispatch-v0").unwrapped
    _, decide = load_user_policy(f"sb3:{zip_path}", env.spec_)
    model = PPO.load(str(zip_path), device="cpu")
    stats = VecNormalize.load(str(zip_path.with_suffix("") / "vecnormalize.pkl"), _dummy())
    obs, _ = env.reset(seed=2)
    differs = 0
    for _ in range(300):
        mask = env.action_masks()
        seen = stats.normalize_obs(obs[None])[0]
        logits = model.policy.get_distribution(model.policy.obs_to_tensor(seen)[0]).distribution.logits
        # a PPO model acts with the environments' fallback rule (it trained through invalid_action="fallback")
        expected = fallback_action(int(np.argmax(logits.detach().numpy()[0])), mask)
        raw = model.policy.get_distribution(model.policy.obs_to_tensor(obs)[0]).distribution.logits
        differs += int(np.argmax(logits.detach().numpy()[0])) != int(np.argmax(raw.detach().numpy()[0]))
        action = decide(obs, mask)
        assert action == expected
        obs, _, _, truncated, _ = env.step(action)
        if truncated:
            obs, _ = env.reset()
    assert differs > 0, "the statistics never changed a decision: the test would not see them ignored"


def _dummy():
    from stable_baselines3.common.vec_env import DummyVecEnv
    return DummyVecEnv([lambda: gym.make("msjgym/Dispatch-v0")])


@pytest.mark.parametrize("config, message", [
    ({"normalize": True}, r"trained on normalized observations .* no vecnormalize\.pkl"),
    ({"normalize": "dict(norm_obs=True, norm_reward=False)"}, r"no vecnormalize\.pkl"),
    ({"normalize": {"norm_reward": True}}, r"no vecnormalize\.pkl"),
    ({"env_wrapper": "gymnasium.wrappers.FlattenObservation"}, r"env_wrapper 'gymnasium\.wrappers\."),
    ({"env_wrapper": ["msjgym.envs.wrappers.MaskFallback", {"my.Wrapper": {"k": 1}}]}, r"'my\.Wrapper'"),
    ({"vec_env_wrapper": "stable_baselines3.common.vec_env.VecFrameStack"}, r"vec_env_wrapper"),
    ({"frame_stack": 4}, r"stacked frames"),
])
def test_what_cannot_be_reproduced_is_refused(tmp_path, config, message):
    """RL Zoo's config.yml beside a model (read_run, which the sb3: loader calls after loading the model)."""
    import yaml

    zip_path = tmp_path / "ENV.zip"
    zip_path.write_bytes(b"")
    zip_path.with_suffix("").mkdir()
    (zip_path.with_suffix("") / "config.yml").write_text(yaml.dump(OrderedDict(sorted(config.items()))))
    with pytest.raises(PolicyError, match=message):
        read_run(zip_path, 8)
    for accepted in ({"normalize": "dict(norm_obs=False, norm_reward=True)"}, {"normalize": False}, {},
                     {"env_wrapper": "msjgym.envs.wrappers.MaskFallback"}):
        (zip_path.with_suffix("") / "config.yml").write_text(yaml.dump(OrderedDict(accepted)))
        run = read_run(zip_path, 8)
        assert run.transform is None and run.fallback == ("env_wrapper" in accepted)


def test_statistics_of_another_shape_are_refused(tmp_path):
    zip_path = _run_folder(tmp_path, None, (np.zeros(5), np.ones(5)))
    with pytest.raises(PolicyError, match=r"normalizes observations of shape \(5,\); this environment's have"):
        load_user_policy(f"sb3:{zip_path}", gym.make("msjgym/Dispatch-v0").unwrapped.spec_)


def test_reward_only_normalization_and_wrappers_are_accepted(tmp_path):
    """norm_obs=False (what ppo.yml uses) and the average-cost reward wrapper do not change how the model acts."""
    zip_path = _run_folder(tmp_path, {"normalize": "dict(norm_obs=False, norm_reward=True)",
                                      "vec_env_wrapper": [{"msjgym.envs.sb3.AverageCostReward": {"rate": 0.001}}]},
                           None)
    env = gym.make("msjgym/Dispatch-v0").unwrapped
    _, decide = load_user_policy(f"sb3:{zip_path}", env.spec_)
    obs, _ = env.reset(seed=1)
    assert env.action_masks()[decide(obs, env.action_masks())]
