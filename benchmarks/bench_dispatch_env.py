"""Steps per second of msjgym/Dispatch-v0: a single environment through ``gymnasium.make`` and the native
vector environment at B = 256 and 1024, printed as ratios against the single environment measured in the same run.

A step is one dispatch decision (plus the completions, probes and updates up to the next arrival). Policies: JSQ(2)
on the "sampled" observation (argmin of the sample), the lowest non-empty level on "histogram" and "estimates"
(JSQ, push). Model: Exp(1) sizes, λ = 0.9, push δ = 0.3; N = 100 and 10,000.

    python benchmarks/bench_dispatch_env.py [--seconds 3]
"""
from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import msjgym  # noqa: F401  registers msjgym/Dispatch-v0

ENV_ID = "msjgym/Dispatch-v0"


def _action(observation: str, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """JSQ(2) on a sample; otherwise the lowest level with a server (the first allowed action)."""
    return obs.argmin(axis=-1) if observation == "sampled" else masks.argmax(axis=-1)


def single(observation: str, servers: int, seconds: float) -> float:
    env = gym.make(ENV_ID, observation=observation, servers=servers, horizon=10_000)
    obs, _ = env.reset(seed=0)
    unwrapped = env.unwrapped
    for _ in range(2000):  # warm-up: compiled code loaded
        obs, _, _, truncated, _ = env.step(int(_action(observation, obs, unwrapped.action_masks())))
        if truncated:
            obs, _ = env.reset()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(1000):
            obs, _, _, truncated, _ = env.step(int(_action(observation, obs, unwrapped.action_masks())))
            if truncated:
                obs, _ = env.reset()
        steps += 1000
    return steps / (time.perf_counter() - start)


def vector(observation: str, servers: int, num_envs: int, seconds: float) -> float:
    venv = gym.make_vec(ENV_ID, num_envs=num_envs, vectorization_mode="vector_entry_point",
                        observation=observation, servers=servers, horizon=10_000)
    obs, _ = venv.reset(seed=0)
    for _ in range(20):
        obs, *_ = venv.step(_action(observation, obs, venv.action_masks()))
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        obs, *_ = venv.step(_action(observation, obs, venv.action_masks()))
        steps += 1
    return steps * num_envs / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds per measurement")
    args = parser.parse_args()
    print(f"{'observation':12s} {'N':>6s} {'single/s':>10s} {'B=256/s':>11s} {'ratio':>6s} {'B=1024/s':>11s} "
          f"{'ratio':>6s}")
    for servers in (100, 10_000):
        for observation in ("sampled", "histogram", "estimates"):
            s = single(observation, servers, args.seconds)
            v256 = vector(observation, servers, 256, args.seconds)
            v1024 = vector(observation, servers, 1024, args.seconds)
            print(f"{observation:12s} {servers:6d} {s:10,.0f} {v256:11,.0f} {v256 / s:6.1f} {v1024:11,.0f} "
                  f"{v1024 / s:6.1f}", flush=True)


if __name__ == "__main__":
    main()
