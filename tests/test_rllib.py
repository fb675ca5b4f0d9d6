"""RLlib (marker ``ray``; skipped when Ray RLlib or torch is missing): the ``rllib:`` loader on RLModules saved
without training (a few seconds, in the default run), and the smoke test of ``examples/train_rllib.py`` (also marked
``slow``, so out of the default run; ``python -m pytest -m ray`` runs it): PPO on msjgym/Dispatch-v0 and
msjgym/MSJ-v0 with 2 env runners for one small iteration each, checkpointed and evaluated beside the built-ins
(about 1-2 min on 2 cores: starting Ray and the env runners dominates)."""
from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.ray
pytest.importorskip("torch", reason="the rllib: loader and examples/train_rllib.py need torch (the rllib extra)")
pytest.importorskip("ray.rllib", reason="needs Ray RLlib: pip install torch==2.13.0 then pip install "
                                        "\"msjgym[rllib]\"")

import gymnasium as gym  # noqa: E402
import torch  # noqa: E402
from ray.rllib.algorithms.ppo.ppo_catalog import PPOCatalog  # noqa: E402
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule  # noqa: E402
from ray.rllib.core.rl_module.rl_module import RLModuleSpec  # noqa: E402
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule  # noqa: E402

from msjgym.cli import main  # noqa: E402
from msjgym.core import rllib_policy  # noqa: E402
from msjgym.core.user_policy import load_user_policy  # noqa: E402
from msjgym.envs import MSJEnv  # noqa: E402
from msjgym.envs.rllib import MASK_KEY, OBS_KEY, make_env  # noqa: E402
from msjgym.errors import PolicyError  # noqa: E402
from msjgym.core.rllib_module import Log1pActionMaskingTorchRLModule  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def saved_module(path: Path, env: gym.Env, masked: bool | str) -> Path:
    """An untrained PPO RLModule for ``env``'s spaces (masked: the Dict observation of MaskInObservation; "log1p":
    msjgym's masked module on log(1 + x) features), saved."""
    torch.manual_seed(0)
    box, actions = env.observation_space, gym.spaces.Discrete(int(env.action_space.n))
    if masked:
        space = gym.spaces.Dict({OBS_KEY: box, MASK_KEY: gym.spaces.Box(0.0, 1.0, (actions.n,), np.float32)})
        cls = Log1pActionMaskingTorchRLModule if masked == "log1p" else ActionMaskingTorchRLModule
        spec = RLModuleSpec(module_class=cls, observation_space=space, action_space=actions,
                            model_config={"fcnet_hiddens": [16, 16]})
    else:
        spec = RLModuleSpec(module_class=DefaultPPOTorchRLModule, catalog_class=PPOCatalog, observation_space=box,
                            action_space=actions, model_config={"fcnet_hiddens": [16, 16]})
    spec.build().save_to_path(str(path))
    return path


@pytest.mark.parametrize("masked", [True, False, "log1p"])
def test_a_saved_module_acts_greedily_on_the_allowed_actions(tmp_path, masked):
    """On states an MSJ-v0 episode visits (where some actions are masked), the loaded policy returns the argmax of
    the module's own logits over the allowed actions, and the numpy copy gives the module's logits."""
    env = MSJEnv(window=2, horizon_jobs=200)
    path = saved_module(tmp_path / "module", env, masked)
    name, decide = load_user_policy(f"rllib:{path}", env.spec_)
    module = rllib_policy.load_module(path, "t")
    reference = rllib_policy._torch_logits(module, bool(masked))
    fast = rllib_policy.numpy_actor(module)
    assert fast is not None and name == f"rllib:{path}"
    obs, _ = env.reset(seed=3)
    masked_states = 0
    for _ in range(300):
        mask = env.action_masks()
        masked_states += not mask.all()
        logits = reference(obs, mask)
        np.testing.assert_allclose(fast(obs, mask)[mask], logits[mask], rtol=1e-5, atol=1e-5)
        action = decide(obs, mask)
        assert mask[action] and action == int(np.argmax(np.where(mask, logits, -np.inf)))
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            obs, _ = env.reset()
    assert masked_states > 0  # the mask mattered on some of these states: the check above could fail


def test_a_module_for_other_spaces_is_refused(tmp_path):
    small, large = MSJEnv(window=2).spec_, MSJEnv(window=8).spec_
    path = saved_module(tmp_path / "module", MSJEnv(window=2), masked=True)
    with pytest.raises(PolicyError, match=rf"trained on observations of shape \({small.observation_size},\) and "
                                          rf"{small.action_count} actions; this environment \(.*window=8.*\) has "
                                          rf"\({large.observation_size},\) and {large.action_count}"):
        load_user_policy(f"rllib:{path}", large)
    assert main(["evaluate", "one-and-n", "--policy", f"rllib:{path}", "--window", "2", "--reps", "2",
                 "--jobs", "2000", "--seed", "1", "--no-progress"]) == 0
    assert main(["evaluate", "one-and-n", "--policy", f"rllib:{path}", "--reps", "2", "--jobs", "2000"]) == 2


def test_a_damaged_checkpoint_is_one_clear_error(tmp_path):
    path = saved_module(tmp_path / "module", MSJEnv(window=2), masked=True)
    (path / "module_state.pkl").write_bytes(b"not a pickle")
    with pytest.raises(PolicyError, match="loading the RLModule in .* failed"):
        load_user_policy(f"rllib:{path}", MSJEnv(window=2).spec_)


def test_the_env_creator_puts_the_mask_in_the_observation():
    env = make_env({"env_id": "msjgym/MSJ-v0", "window": 2, "horizon_jobs": 100, "reward_scale": 0.5})
    obs, _ = env.reset(seed=1)
    assert set(obs) == {OBS_KEY, MASK_KEY} and env.observation_space.contains(obs)
    np.testing.assert_array_equal(obs[MASK_KEY] > 0, env.unwrapped.action_masks())
    refused = np.flatnonzero(obs[MASK_KEY] == 0)
    if refused.size:
        with pytest.raises(ValueError):
            env.step(int(refused[0]))  # not remapped
    with pytest.raises(ValueError, match="env_config\\['env_id'\\]"):
        make_env({"window": 2})


def test_the_average_cost_reward_is_the_raw_reward_plus_rho_dt():
    """AverageCost: reward −∫ N dt + ρ·dt with ρ the running Σ cost / Σ dt of the raw steps (no forgetting at
    rate 1e-12 over these few steps), so it is recomputed here from the raw environment on the same seed."""
    raw = make_env({"env_id": "msjgym/MSJ-v0", "window": 2, "horizon_jobs": 1000})
    centred = make_env({"env_id": "msjgym/MSJ-v0", "window": 2, "horizon_jobs": 1000, "average_cost": True,
                        "average_cost_rate": 1e-12})
    obs, _ = raw.reset(seed=5)
    centred.reset(seed=5)
    cost = time_ = 0.0
    for _ in range(200):
        action = int(np.flatnonzero(obs[MASK_KEY])[-1])  # "wait" when nothing else: time passes
        obs, r_raw, _, truncated, info = raw.step(action)
        _, r_centred, *_ = centred.step(action)
        if truncated:
            break
        cost, time_ = cost - r_raw, time_ + info["dt"]
        rho = cost / time_ if time_ > 0 else 0.0
        assert r_centred == pytest.approx(r_raw + rho * info["dt"], rel=1e-9, abs=1e-12)
    assert time_ > 0 and cost > 0


def _example(monkeypatch):
    spec = importlib.util.spec_from_file_location("train_rllib", ROOT / "examples" / "train_rllib.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "train_rllib", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # 1-2 min: out of the default run; python -m pytest -m ray (or -m slow) runs it
def test_train_rllib_smoke(tmp_path, monkeypatch):
    """examples/train_rllib.py at the smallest size: one PPO iteration per environment on 2 env runners, the
    Algorithm checkpoint evaluated through msjgym.evaluate('rllib:...') beside the built-ins."""
    ex = _example(monkeypatch)
    budget = ex.Budget(iterations=1, batch=400, minibatch=100, epochs=1, reps=2, jobs=2000, arrivals=20_000)
    lines: list[str] = []
    tables = ex.run(["dispatch", "msj"], budget, tmp_path, env_runners=2, log=lines.append)
    text = "\n".join(lines)
    for name, setup in ex.SETUPS.items():
        rows = tables[name]
        assert [r.policy for r in rows] == ["ppo (rllib, learned)", *setup.builtins]
        assert (tmp_path / name / "learner_group" / "learner" / "rl_module" / "default_policy").is_dir()
        assert f"[{name}] iteration   1/1" in text and f"--policy rllib:{tmp_path / name}" in text
        for row in rows:  # finite numbers, or (the learned MSJ scheduler after one iteration) flagged unstable
            assert (row.mean is not None and math.isfinite(row.mean) and math.isfinite(row.ci95)) or (
                row.policy.startswith("ppo") and name == "msj" and row.note.startswith("unstable")), row
    learned, *_ = tables["dispatch"]
    assert learned.mean is not None and 0 < learned.mean < 100 and learned.messages == pytest.approx(1.8, rel=0.05)


def test_a_checkpoint_naming_the_modules_earlier_path_loads(tmp_path, monkeypatch):
    """A checkpoint written when the RLModule lived at ``msjgym.rllib_module`` (its class is pickled by that path)
    loads through the loader's mapping (:data:`msjgym.core.rllib_policy.MOVED`): no module is left at the old path,
    so a plain unpickler fails on the same file (the control)."""
    import pickle
    import types

    env = MSJEnv(window=2, horizon_jobs=200)
    path = saved_module(tmp_path / "module", env, "log1p")
    ctor_file = path / "class_and_ctor_args.pkl"
    with open(ctor_file, "rb") as f:
        ctor_info = pickle.load(f)
    old = types.ModuleType("msjgym.rllib_module")  # write the file as the earlier version did
    old.Log1pActionMaskingTorchRLModule = Log1pActionMaskingTorchRLModule
    monkeypatch.setitem(sys.modules, "msjgym.rllib_module", old)
    monkeypatch.setattr(Log1pActionMaskingTorchRLModule, "__module__", "msjgym.rllib_module")
    ctor_file.write_bytes(pickle.dumps(ctor_info))
    monkeypatch.undo()
    assert b"msjgym.rllib_module" in ctor_file.read_bytes() and "msjgym.rllib_module" not in sys.modules
    with pytest.raises(ModuleNotFoundError), open(ctor_file, "rb") as f:
        pickle.load(f)
    module = rllib_policy.load_module(path, "t")
    assert type(module) is Log1pActionMaskingTorchRLModule
    reference = rllib_policy.load_module(saved_module(tmp_path / "again", env, "log1p"), "t")
    for a, b in zip(module.state_dict().values(), reference.state_dict().values()):
        torch.testing.assert_close(a, b)  # the same seed: the same weights, restored from the moved checkpoint
