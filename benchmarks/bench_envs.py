"""Steps per second of msjgym/MSJ-v0, measured in one run.

* a single environment through ``gymnasium.make`` (with Gymnasium's checker wrappers), driven by a trivial policy
  ("start the oldest waiting job if it fits, else wait"): target >= 50,000 steps/s (the de-facto RL load-balancing
  environment in Python manages 4,000–16,000, a quoted figure, not measured here);
* the native vector environment with B = 1024 copies, one compiled call per step: target >= 1,000,000 aggregate
  steps/s on one core.

    python benchmarks/bench_envs.py [--steps 100000] [--num-envs 1024]
"""
from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import msjgym  # noqa: F401  registers msjgym/MSJ-v0


def single(steps: int) -> float:
    env = gym.make("msjgym/MSJ-v0", horizon_jobs=10_000)
    env.reset(seed=0)
    wait = env.action_space.n - 1
    action = 0
    for _ in range(1000):  # warm-up: compiled kernels loaded
        env.step(action)
        action = 0 if env.unwrapped.action_masks()[0] else wait
    start = time.perf_counter()
    for _ in range(steps):
        _, _, _, truncated, _ = env.step(action)
        if truncated:
            env.reset()
        action = 0 if env.unwrapped.action_masks()[0] else wait
    return steps / (time.perf_counter() - start)


def vector(steps: int, num_envs: int) -> float:
    venv = gym.make_vec("msjgym/MSJ-v0", num_envs=num_envs, vectorization_mode="vector_entry_point",
                        horizon_jobs=10_000)
    venv.reset(seed=0)
    wait = venv.single_action_space.n - 1
    actions = np.zeros(num_envs, dtype=np.int64)
    for _ in range(20):
        venv.step(actions)
        actions = np.where(venv.action_masks()[:, 0], 0, wait)
    start = time.perf_counter()
    for _ in range(steps):
        venv.step(actions)
        actions = np.where(venv.action_masks()[:, 0], 0, wait)
    return steps * num_envs / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000, help="single-environment steps")
    parser.add_argument("--num-envs", type=int, default=1024)
    args = parser.parse_args()
    s = single(args.steps)
    v = vector(max(1, args.steps // 50), args.num_envs)
    print(f"single env.step via gymnasium.make: {s:12,.0f} steps/s   target >= 50,000: "
          f"{'met' if s >= 50_000 else 'NOT met'}")
    print(f"native VectorEnv, B = {args.num_envs}:   {v:12,.0f} steps/s   target >= 1,000,000: "
          f"{'met' if v >= 1_000_000 else 'NOT met'}   ({v / s:.0f}x the single environment)")


if __name__ == "__main__":
    main()
