"""Training throughput of a learned-scheduler recipe: environment decisions per second while MaskablePPO trains
(rollouts and gradient epochs together), beside the environment alone at the same number of copies, one torch
thread.

The recipe (default ``baselines/hpc_pick_easy_v1.toml``: ``msjgym/JobScheduling-v0`` with K = 128 shown jobs, the
job-scoring policy of :mod:`msjgym.envs.scoring`) is built exactly as ``baselines/train.py`` builds it (its
environment, copies, policy and PPO settings); the environment-only rate steps the same vector environment with
uniformly random allowed actions. Each rate is given per wall-clock second and per CPU second of the process (what
one dedicated core would give), with their ratio; the machine's 1-minute load average is printed beside: on a shared
machine the wall rates scale with the share of a core the run gets. Target (training): >= 5,000 decisions/s.
``--stock`` also measures, in the same run, the path before msjgym's lean one (sb3-contrib's masked distribution
and rollout buffer, the rollouts' forward passes in torch).

    OMP_NUM_THREADS=1 python benchmarks/bench_train.py [RECIPE.toml] [--decisions 60000] [--seconds 10] [--stock]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _train_module():
    spec = importlib.util.spec_from_file_location("_train_baselines", ROOT / "baselines" / "train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def env_rate(train, config: dict, seconds: float) -> float:
    """Decisions per second of the recipe's vector environment alone (random allowed actions)."""
    venv = train.job_vector_env(config)
    venv.reset(seed=0)
    rng = np.random.default_rng(0)
    n = venv.num_envs

    def actions() -> np.ndarray:
        masks = np.asarray(venv.action_masks())
        scores = np.where(masks, rng.random(masks.shape), -1.0)
        return scores.argmax(axis=1)

    for _ in range(50):  # warm-up: compiled code loaded
        venv.step(actions())
        venv.reset_ended() if hasattr(venv, "reset_ended") else None
    steps, start, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        _, _, term, trunc, _ = venv.step(actions())
        if (term | trunc).any() and hasattr(venv, "reset_ended"):
            venv.reset_ended()
        steps += 1
    return steps * n / (time.perf_counter() - start), steps * n / (time.process_time() - cpu)


def build_model(train, config: dict, stock: bool = False):
    """MaskablePPO as ``baselines/train.py`` builds it for the recipe (its environment, copies, policy, PPO settings
    and rollout buffer). ``stock``: the path before msjgym's lean one, for comparison in the same run: sb3-contrib's
    ``MaskableCategoricalDistribution`` and ``MaskableRolloutBuffer``, the rollouts' forward passes in torch, the
    actor and the critic selecting the present rows each on its own."""
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
    from stable_baselines3.common.vec_env import VecMonitor

    from msjgym.envs import to_sb3
    from msjgym.envs.rollout_buffer import LeanMaskableRolloutBuffer

    torch.set_num_threads(1)
    ppo = dict(config["ppo"])
    venv = train.job_vector_env(config)
    policy, kwargs = train.policy_of(ppo, venv)
    if policy != "MlpPolicy" and not stock:
        ppo["rollout_buffer_class"] = LeanMaskableRolloutBuffer
    model = MaskablePPO(policy, VecMonitor(to_sb3(venv)), seed=0, device="cpu", policy_kwargs=kwargs, **ppo)
    if stock and policy != "MlpPolicy":
        net = model.policy.mlp_extractor
        model.policy.action_dist = MaskableCategoricalDistribution(int(model.action_space.n))
        net.forward = lambda x: (net.forward_actor(x), net.forward_critic(x))
        model.policy._numpy_layers = None
    return model


def train_rate(train, config: dict, decisions: int, stock: bool = False) -> tuple[float, float, int, float]:
    """(decisions per wall second, per CPU second of this process, decisions, CPU seconds) of MaskablePPO learning
    ``decisions`` steps with the recipe's settings, after one warm-up rollout and its epochs."""
    model = build_model(train, config, stock)
    model.learn(model.n_envs * model.n_steps)  # warm-up: one rollout and its epochs
    start, cpu = time.perf_counter(), time.process_time()
    before = model.num_timesteps
    model.learn(decisions, reset_num_timesteps=False)
    done = model.num_timesteps - before
    wall, used = time.perf_counter() - start, time.process_time() - cpu
    return done / wall, done / used, done, used


TARGET = 5_000


def main() -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipe", nargs="?", type=Path, default=ROOT / "baselines" / "hpc_pick_easy_v1.toml")
    parser.add_argument("--decisions", type=int, default=60_000, help="training decisions measured")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of the environment-only run")
    parser.add_argument("--stock", action="store_true",
                        help="also measure sb3-contrib's stock distribution and rollout buffer (the path before)")
    args = parser.parse_args()
    train = _train_module()
    config = train.load_config(args.recipe)
    env = config["env"]
    load = os.getloadavg()[0]
    alone, alone_cpu = env_rate(train, config, args.seconds)
    ppo = config["ppo"]
    print(f"{args.recipe.name}: {env.get('id')} window={env.get('window')} backfill={env.get('backfill')} "
          f"num_envs={env.get('num_envs', 64)}, policy {ppo.get('policy', 'mlp')} n_steps={ppo.get('n_steps')} "
          f"batch_size={ppo.get('batch_size')} n_epochs={ppo.get('n_epochs')}, 1 torch thread, {os.cpu_count()} cores")
    print(f"  environment alone:      {alone:>9,.0f} decisions/s wall, {alone_cpu:>9,.0f} per CPU second", flush=True)
    for stock in ((True, False) if args.stock else (False,)):
        rate, rate_cpu, measured, used = train_rate(train, config, args.decisions, stock)
        label = "training, stock sb3-contrib" if stock else "training (MaskablePPO)"
        verdict = "" if stock else (f"; target {TARGET:,}: {'met' if rate_cpu >= TARGET else 'NOT met'} per CPU "
                                    f"second, {'met' if rate >= TARGET else 'NOT met'} wall")
        print(f"  {label + ':':<28}{rate:>9,.0f} decisions/s wall, {rate_cpu:>9,.0f} per CPU second "
              f"({measured:,} decisions, {used:.1f} CPU s; env alone / training per CPU second "
              f"{alone_cpu / rate_cpu:.1f}){verdict}", flush=True)
    print(f"  1-minute load average {load:.2f} before, {os.getloadavg()[0]:.2f} after (wall rates scale with the "
          "share of a core the run gets; the per-CPU-second rates are what one dedicated core would give)")


if __name__ == "__main__":
    main()
