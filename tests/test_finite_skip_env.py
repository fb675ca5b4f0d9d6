"""msjgym/FiniteSkip-v0: Gymnasium's and SB3's checkers pass, the named view names the observation, and the twin test:
an agent that allocates as a built-in policy does (its plain-Python agent form, translated into choices) gives the
compiled simulator's trajectory exactly: the same ∫N dt up to the same arrival, for the same seed."""
from __future__ import annotations

import numpy as np
import pytest

import gymnasium as gym

import msjgym  # noqa: F401  registers the environments
from msjgym.systems.finite_skip.env import FINITE_SKIP_ENV_ID, FiniteSkipEnv
from msjgym.policies.finite_skip import POLICIES, FiniteSkipAgent
from msjgym.systems.finite_skip import simulation as fs

TWINS = [("finite-skip-fig2", "fsf"), ("finite-skip-fig3", "lps"), ("finite-skip-fig4a", "tp-fcfs"),
         ("finite-skip-fig4a", "inelastic-first"), ("finite-skip-fig4b", "elastic-first"),
         ("finite-skip-fig6", "server-filling"), ("finite-skip-fig6", "server-filling-divisible"),
         ("finite-skip-fig6", "fcfs"), ("finite-skip-fig6", "preemptive-first-fit"), ("finite-skip-fig6", "msf"),
         ("finite-skip-fig6", "lsf")]


class ChoosingAgent:
    """A built-in policy's agent form (rates for the jobs present) as choices in the environment: the jobs it serves,
    heterogeneous servers by the server it gives them (fastest first), else jobs at their full share before a
    partial one; then commit. Built with the environment's spec, ``act(observation, action_mask)``: a policy of the
    user's too (``msjgym.evaluate(..., mode="choose")``)."""

    policy = "lps"

    def __init__(self, spec, policy: str | None = None) -> None:
        model = spec.model
        self.spec, self.k, self.system = spec, model.servers, model.system
        self.agent = FiniteSkipAgent(policy or self.policy, model.servers, model.speeds)

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        view = self.spec.view(obs)
        n = view.jobs
        assert n <= view.layout.window, "the twin needs a window over every job present"
        params = view.window_params[:n]
        rates = self.agent.act({"params": params, "servers": np.full(n, -1)})
        served = [j for j in range(n) if rates[j] > 0]
        if self.system == fs.HET:
            order = sorted(served, key=lambda j: self.agent.last_servers[j])
        elif self.system == fs.LPS:
            order = served
        else:  # full shares first: a partial share is what is left
            order = sorted(served, key=lambda j: (round(rates[j] * self.k) < params[j], j))
        chosen = view.window_chosen
        for j in order:
            if not chosen[j]:
                return j
        return view.commit


@pytest.mark.parametrize("scenario,policy", TWINS)
def test_twin_env_agent_reproduces_the_compiled_policy(scenario, policy):
    horizon, seed = 400, 11
    env = FiniteSkipEnv(scenario, window=64, horizon_jobs=horizon, load=0.7)
    agent = ChoosingAgent(env.spec_, policy)
    obs, info = env.reset(seed=seed)
    area, truncated, steps = 0.0, False, 0
    while not truncated:
        obs, reward, _, truncated, info = env.step(agent.act(obs, env.unwrapped.action_masks()))
        assert not info["fallback"]
        area -= reward
        steps += 1
    assert info["arrivals"] == horizon and not info["overflow"]
    rep = fs.replication(env.spec_.model, POLICIES[policy], jobs=horizon - 1, warmup=0,
                         stream=np.random.SeedSequence(seed).spawn(1)[0])
    assert rep.stable
    assert area == pytest.approx(rep.acc[fs.A_N], rel=1e-9)
    assert steps > horizon  # choices and commits: more than one decision per arrival


def test_checkers_pass():
    from gymnasium.utils.env_checker import check_env

    for scenario in ("finite-skip-fig2", "finite-skip-fig3", "finite-skip-fig4a", "finite-skip-fig6"):
        check_env(gym.make(FINITE_SKIP_ENV_ID, scenario=scenario).unwrapped, skip_render_check=False)
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker", reason="needs the rl extra")
    sb3_checker.check_env(gym.make(FINITE_SKIP_ENV_ID))


def test_view_masks_and_commit():
    env = FiniteSkipEnv("finite-skip-fig6", window=4)
    obs, info = env.reset(seed=3)
    view = env.unwrapped.view(obs)
    assert view.jobs == 1 and view.window_present.tolist() == [True, False, False, False]
    assert env.action_masks().tolist() == [True, False, False, False, True] and view.commit == 4
    assert view.window_params[0] in (1, 2, 4) and view.free_capacity == 1.0
    obs, reward, _, _, info = env.step(0)  # the only job chosen: nothing else can be: commit is automatic
    assert info["dt"] > 0 and reward < 0
    with pytest.raises(ValueError, match="window slot 9"):
        view.choose(9)
    for bad, message in (({"window": 0}, "window = 0"), ({"scenario": "fig2"}, "scenario = 'fig2'"),
                         ({"horizon_jobs": 1.5}, "horizon_jobs = 1.5")):
        with pytest.raises(msjgym.errors.MsjgymError, match=message):
            FiniteSkipEnv(**bad)


def test_a_plain_ppo_model_loads_as_an_sb3_policy_with_the_fallback_rule(tmp_path):
    """A PPO model trained on FiniteSkip-v0 (no masks) loads through ``sb3:`` with the environment's spec and acts
    as trained: its most likely action, replaced by the mask's default (commit) when that action is masked."""
    pytest.importorskip("stable_baselines3", reason="needs the rl extra")
    import torch
    from stable_baselines3 import PPO

    from msjgym.core.actions import fallback_action
    from msjgym.core.user_policy import load_user_policy

    torch.set_num_threads(1)
    env = gym.make(FINITE_SKIP_ENV_ID, scenario="finite-skip-fig6", window=4)
    model = PPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0, device="cpu").learn(128)
    model.save(tmp_path / "fs.zip")
    name, decide = load_user_policy(f"sb3:{tmp_path / 'fs.zip'}", env.unwrapped.spec_)
    obs, _ = env.reset(seed=5)
    for _ in range(200):
        mask = env.unwrapped.action_masks()
        predicted = int(model.predict(obs, deterministic=True)[0])
        action = decide(obs, mask)
        assert action == fallback_action(predicted, mask)
        obs, _, _, truncated, _ = env.step(action)
        if truncated:
            obs, _ = env.reset()


# ------------------------------------------------------------------ a policy of the environment, through msjgym.evaluate
@pytest.mark.parametrize("scenario,policy", [("finite-skip-fig2", "fsf"), ("finite-skip-fig3", "lps"),
                                             ("finite-skip-fig4a", "inelastic-first")])
def test_a_policy_of_the_environment_evaluates_as_the_builtin_it_copies(scenario, policy):
    """``msjgym.evaluate(scenario, P, mode="choose")``: a policy deciding through msjgym/FiniteSkip-v0's observation
    (its window over every job present) that allocates as a built-in gives the built-in's replications exactly."""
    import msjgym

    own = type("Mine", (ChoosingAgent,), {"policy": policy})
    a = msjgym.evaluate(scenario, own, mode="choose", window=200, reps=2, jobs=1500, seed=4, references=False)
    b = msjgym.evaluate(scenario, policy, reps=2, jobs=1500, seed=4, references=False)
    assert a.policy == "Mine" and a.replications == b.replications and a.diagnostics == b.diagnostics


def test_the_modes_and_their_errors():
    import msjgym
    from msjgym.errors import MsjgymError

    with pytest.raises(MsjgymError, match="mode = 'start': must be one of rates, choose"):
        msjgym.evaluate("finite-skip-fig3", ChoosingAgent, mode="start", jobs=100, reps=1)
    with pytest.raises(MsjgymError, match="window: only with mode choose"):
        msjgym.evaluate("finite-skip-fig3", ChoosingAgent, mode="rates", window=4, jobs=100, reps=1)
    with pytest.raises(MsjgymError, match="window = 0: "):
        msjgym.evaluate("finite-skip-fig3", ChoosingAgent, window=0, jobs=100, reps=1)
    with pytest.raises(MsjgymError, match="--window: only for a policy of your own"):
        msjgym.evaluate("finite-skip-fig3", "lps", window=4, jobs=100, reps=1)
    with pytest.raises(MsjgymError, match="mode = 'rates': sb3: models decide"):
        msjgym.evaluate("finite-skip-fig3", "sb3:model.zip", mode="rates", jobs=100, reps=1)
    # window 1 (mode choose implied): only the oldest job can be chosen; it gets the whole capacity (LPS: FCFS)
    def oldest(observation, mask):
        return 0 if mask[0] else len(mask) - 1

    r = msjgym.evaluate("finite-skip-fig3", oldest, window=1, jobs=500, reps=1, seed=2, references=False)
    assert r.stable and r.diagnostics["served_outside_front"] == 0 and r.diagnostics["max_rate_gap"] == 0


def test_a_masked_choice_is_one_line_naming_the_replication_and_step():
    import msjgym
    from msjgym.errors import PolicyError

    with pytest.raises(PolicyError, match=r"policy <lambda>: replication 0, step 0: action 3 is not allowed now"):
        msjgym.evaluate("finite-skip-fig3", lambda observation, mask: 3, mode="choose", jobs=100, reps=1, seed=1)


def test_an_sb3_model_trained_on_the_environment_evaluates_on_the_command_line(tmp_path):
    """``msjgym evaluate finite-skip-fig3 --policy sb3:MODEL.zip``: a model trained (a few steps) on
    msjgym/FiniteSkip-v0 decides the evaluation's replications (mode "choose", the environment's window)."""
    import json
    import subprocess
    import sys

    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO

    from msjgym.envs import to_sb3
    from msjgym.systems.finite_skip.env import FiniteSkipVectorEnv

    torch.set_num_threads(1)
    env = to_sb3(FiniteSkipVectorEnv(2, scenario="finite-skip-fig3", horizon_jobs=64))
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(64)
    path = tmp_path / "fs.zip"
    model.save(path)
    out = subprocess.run([sys.executable, "-m", "msjgym", "evaluate", "finite-skip-fig3", "--policy", f"sb3:{path}",
                          "--reps", "2", "--jobs", "300", "--seed", "3", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["policy"] == f"sb3:{path}" and data["reps"] == 2
    assert data["metrics"]["response_time"]["mean"] > 0


def test_every_path_runs_the_one_compiled_loop(tmp_path):
    """On a fresh cache, the environment's decision path (``loop.run`` in modes RESET, ADVANCE, EPOCH, called from
    ``control.step_batch``), the agent path (START, STEP) and ``evaluate`` (RUN) all run the loop's one compiled
    signature: a compiled caller passing its mode as a constant must not compile the whole loop again per mode (numba
    types a constant argument as a literal). A fresh process, since a cached caller is never typed again."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = ("import json, numpy as np, gymnasium as gym, msjgym\n"
              "from msjgym.policies.finite_skip import FiniteSkipAgent\n"
              "from msjgym.systems.finite_skip import loop\n"
              "from msjgym.systems.finite_skip.agent import RateDecider, agent_replication\n"
              "env = gym.make('msjgym/FiniteSkip-v0', scenario='finite-skip-fig4a')\n"
              "env.reset(seed=3)\n"
              "for _ in range(30):\n"
              "    env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))\n"
              "model = msjgym.api.load_scenario('finite-skip-fig4a').model\n"
              "agent = FiniteSkipAgent('tp-fcfs', model.servers, model.speeds)\n"
              "agent_replication(model, RateDecider(model, agent), jobs=50, stream=np.random.SeedSequence(3))\n"
              "msjgym.evaluate('finite-skip-fig3', 'lps', reps=1, jobs=50, seed=3)\n"
              "print(json.dumps([[str(a) for a in sig] for sig in loop.run.overloads]))\n")
    root = Path(msjgym.__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), MSJGYM_CACHE_DIR=str(tmp_path / "msjgym"),
               PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    overloads = json.loads(done.stdout.strip().splitlines()[-1])
    assert overloads == [[str(a) for a in fs.signatures()["run"].args]]
