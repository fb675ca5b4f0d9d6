"""Microseconds per ``env.step`` of every msjgym environment (one copy, through ``gymnasium.make``), and of the
finite-skip agent path (a policy of the user's deciding every epoch in Python).

What a Python agent pays per decision besides its own work: the Gymnasium wrappers, the environment's checks and the
one call into the compiled control step. Each environment takes its defaults; the policy is the first allowed action
(``action_masks()``), the same in every run. The finite-skip row runs ``agent_replication`` on ``finite-skip-fig4a``
with a decider that gives the oldest job the most it can use (a rate of 1 capped at the job's limit).
Each row is the fastest of ``--repeat`` timed runs of ``--steps`` steps (a warm-up loads the compiled code first).

``--against PATH`` compares with another checkout of msjgym (e.g. before a change) on a shared machine: ``--rounds``
subprocesses, alternating (this checkout, PATH, PATH, this, ...), each printing its rows; the best of each row per
checkout and their ratio are printed.

    python benchmarks/bench_env_step.py [--steps 20000] [--repeat 3]
    python benchmarks/bench_env_step.py --against /path/to/other/checkout [--rounds 4]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def _env_rows(steps: int, repeat: int) -> dict[str, float]:
    import gymnasium as gym
    import numpy as np

    import msjgym.envs as envs

    out = {}
    for reg in envs.registrations():
        env = gym.make(reg.id)
        env.reset(seed=0)
        inner = env.unwrapped

        def run(n: int) -> None:
            for _ in range(n):
                _, _, terminated, truncated, _ = env.step(int(np.argmax(inner.action_masks())))
                if terminated or truncated:
                    env.reset()

        run(min(steps, 2000))
        best = min(_timed(run, steps) for _ in range(repeat))
        out[f"{reg.id} env.step"] = best / steps * 1e6
        env.close()
    return out


def _timed(run, n: int) -> float:
    start = time.perf_counter()
    run(n)
    return time.perf_counter() - start


def _agent_row(steps: int, repeat: int) -> dict[str, float]:
    import numpy as np

    from msjgym import api
    from msjgym.systems.finite_skip.agent import agent_replication, rate_caps

    model = api.load_scenario("finite-skip-fig4a").model
    caps = rate_caps(model)
    calls = [0]

    def decide(epoch, rep, step):
        calls[0] += 1
        rates = np.zeros(len(epoch.params))
        if rates.size:
            rates[0] = min(1.0, caps(epoch.params[:1])[0])
        return rates, None

    decide.name = "oldest"

    def run(jobs: int) -> int:
        calls[0] = 0
        agent_replication(model, decide, jobs=jobs, warmup=0, stream=np.random.SeedSequence(1))
        return calls[0]

    run(100)
    jobs = max(1, steps // 2)  # about 2 epochs per job
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        n = run(jobs)
        best = min(best, (time.perf_counter() - start) / n)
    return {"finite-skip agent epoch (decider included)": best * 1e6}


def rows(steps: int, repeat: int) -> dict[str, float]:
    """Microseconds per step, by row name."""
    return {**_env_rows(steps, repeat), **_agent_row(steps, repeat)}


def _against(args: argparse.Namespace) -> None:
    here = str(Path(__file__).resolve().parents[1])
    other = str(Path(args.against).resolve())
    order = [here, other, other, here] * ((args.rounds + 3) // 4)
    best: dict[str, dict[str, float]] = {here: {}, other: {}}
    for root in order[: 2 * args.rounds]:
        env = dict(os.environ, PYTHONPATH=root)
        out = subprocess.run([sys.executable, __file__, "--json", "--steps", str(args.steps), "--repeat",
                              str(args.repeat)], env=env, capture_output=True, text=True, check=True, cwd=root)
        for name, us in json.loads(out.stdout.strip().splitlines()[-1]).items():
            best[root][name] = min(us, best[root].get(name, float("inf")))
    print(f"us per step, best of {args.rounds} alternating runs each; this checkout: {here}; other: {other}")
    for name in best[here]:
        mine, theirs = best[here][name], best[other].get(name, float("nan"))
        print(f"  {name:55s} this {mine:8.2f}   other {theirs:8.2f}   this/other {mine / theirs:5.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000, help="steps per timed run")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per row (the fastest is reported)")
    parser.add_argument("--against", help="another checkout of msjgym to compare with, alternating")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each checkout with --against")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.against:
        _against(args)
        return
    result = rows(args.steps, args.repeat)
    if args.json:
        print(json.dumps(result))
        return
    for name, us in result.items():
        print(f"{name:55s} {us:8.2f} us per step")


if __name__ == "__main__":
    main()
