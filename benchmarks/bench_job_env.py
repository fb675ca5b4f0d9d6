"""Decisions per second of msjgym/JobScheduling-v0, the environment alone, measured in one run.

The native vector environment (``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``) with
``--num-envs`` copies (default 16) and K = ``--window`` rows (default 128), on 256-job windows of the built-in
Lublin–Feitelson trace (256 processors, EASY backfilling, base order FCFS), driven by random masked actions drawn
in NumPy (each copy picks uniformly among its shown jobs): one compiled call per step for the batch, which runs every
copy to its next decision and writes its K × F observation. A decision is one step of one copy. Target: >= 50,000
decisions/s, so that training (a network's forward and backward pass per decision besides) can reach 5,000.

    python benchmarks/bench_job_env.py [--steps 3000] [--num-envs 16] [--window 128] [--backfill easy]
"""
from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import msjgym  # noqa: F401  registers msjgym/JobScheduling-v0


def env_only(steps: int, num_envs: int, window: int, backfill: str, repeat: int) -> tuple[float, float]:
    """(decisions per second of wall time, per second of this process's CPU time), the fastest of ``repeat`` runs
    each (on a shared machine the CPU-time rate is what the code costs; the wall-time rate, what one waited)."""
    venv = gym.make_vec("msjgym/JobScheduling-v0", num_envs=num_envs, vectorization_mode="vector_entry_point",
                        window=window, backfill=backfill)
    gen = np.random.default_rng(0)
    venv.reset(seed=0)

    def run(n: int) -> None:
        for _ in range(n):
            masks = venv.action_masks()
            # a uniform allowed action per copy: the argmax of random keys over the allowed ones
            actions = np.argmax(np.where(masks, gen.random(masks.shape), -1.0), axis=1)
            venv.step(actions)

    run(50)  # warm-up: the compiled kernels loaded
    wall = cpu = 0.0
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        run(steps)
        wall = max(wall, steps * num_envs / (time.perf_counter() - start))
        cpu = max(cpu, steps * num_envs / (time.process_time() - start_cpu))
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="vector steps per timed run")
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--window", type=int, default=128, help="K, the rows of the observation")
    parser.add_argument("--backfill", default="easy", choices=("none", "easy", "conservative", "easy-narrow"))
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (the fastest is reported)")
    args = parser.parse_args()
    wall, cpu = env_only(args.steps, args.num_envs, args.window, args.backfill, args.repeat)
    print(f"msjgym/JobScheduling-v0 env only, {args.num_envs} copies, K = {args.window}, backfill {args.backfill}: "
          f"{wall:10,.0f} decisions/s ({cpu:,.0f} per CPU second)   target >= 50,000: "
          f"{'met' if wall >= 50_000 else 'NOT met'}")


if __name__ == "__main__":
    main()
