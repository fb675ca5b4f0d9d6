"""Throughput of msjgym against Ciw and SimPy on FCFS M/M/10 at load 0.8.

Model: Poisson arrivals at rate λ = 8, exponential services at rate μ = 1, 10 servers, one job class needing one
server, FCFS. Every tool simulates this same model from empty; each is timed with ``time.perf_counter`` and its
speed is reported as completed jobs per second of wall time:

- msjgym: ``msjgym.evaluate.evaluate`` with 1 replication (statistics included). Its jobs count is
  warm-up + measured jobs (warm-up = 10 %); every one of them completes. numba's one-time compilation is excluded:
  a short warm-up call runs first.
- Ciw: ``ciw.Simulation(...).simulate_until_max_customers(n)`` (``get_all_records`` is not timed).
- SimPy: a ``simpy.Resource(capacity=10)``, one process per customer, run until ``n`` customers have completed.

To show that all three simulate the same model, each tool's mean waiting time (first 10 % of jobs by arrival
removed as warm-up; ± 95 % CI from 20 batch means) is printed next to the exact Erlang-C value. Each tool runs
``--repeat`` times with the same seed and its fastest run is reported. Prints only; it asserts nothing.

    python benchmarks/bench_mmc.py [--msjgym-jobs 2000000] [--ciw-jobs 50000] [--simpy-jobs 200000] [--seed 1]
                                   [--repeat 3]
"""
from __future__ import annotations

import argparse
import random
import time

import ciw
import numpy as np
import simpy

from msjgym.core.distributions import from_spec
from msjgym.evaluate.evaluator import evaluate
from msjgym.core.estimates import Estimate
from msjgym.evaluate.intervals import t_interval
from msjgym.systems.msj.model import JobClass, MSJModel
from msjgym.theory.queues import mmc_mean_wait

SERVERS, LAM, MU = 10, 8.0, 1.0
WARMUP_FRACTION = 0.1
TARGET_RATIO = 100.0  # msjgym's target: >= 100x Ciw in jobs per second
BATCHES = 20


def fastest(run, repeat: int) -> tuple:
    """The result of ``run()`` with the smallest wall seconds (its second entry) over ``repeat`` calls."""
    return min((run() for _ in range(repeat)), key=lambda result: result[1])


def mean_wait(waits: list[float]) -> Estimate:
    """Mean of the waits (in arrival order) after the warm-up, with a 95 % batch-means CI."""
    kept = np.asarray(waits[int(len(waits) * WARMUP_FRACTION):])
    return t_interval(np.array([b.mean() for b in np.array_split(kept, BATCHES)]))


def mmc_model() -> MSJModel:
    return MSJModel(SERVERS, LAM, (JobClass("1", 1, 1.0, from_spec({"dist": "exp", "rate": MU})),))


def warm_up_msjgym(seed: int) -> float:
    """A short untimed call that compiles (or loads the cached) numba kernels; returns its wall seconds."""
    start = time.perf_counter()
    evaluate(mmc_model(), "fcfs", reps=1, jobs=1000, seed=seed)
    return time.perf_counter() - start


def run_msjgym(jobs: int, seed: int) -> tuple[int, float, Estimate]:
    """(jobs completed, wall seconds, mean wait) for ``jobs`` jobs in all, the first 10 % as warm-up."""
    warmup = int(jobs * WARMUP_FRACTION)
    start = time.perf_counter()
    result = evaluate(mmc_model(), "fcfs", reps=1, jobs=jobs - warmup, warmup=warmup, seed=seed)
    wall = time.perf_counter() - start
    return jobs, wall, result.metrics["waiting_time"]


def run_ciw(jobs: int, seed: int) -> tuple[int, float, Estimate]:
    network = ciw.create_network(arrival_distributions=[ciw.dists.Exponential(rate=LAM)],
                                 service_distributions=[ciw.dists.Exponential(rate=MU)],
                                 number_of_servers=[SERVERS])
    ciw.seed(seed)
    start = time.perf_counter()
    sim = ciw.Simulation(network)
    sim.simulate_until_max_customers(jobs)
    wall = time.perf_counter() - start
    records = sorted(sim.get_all_records(), key=lambda r: r.arrival_date)
    return len(records), wall, mean_wait([r.waiting_time for r in records])


def run_simpy(jobs: int, seed: int) -> tuple[int, float, Estimate]:
    rand = random.Random(seed)
    env = simpy.Environment()
    servers = simpy.Resource(env, capacity=SERVERS)
    waits: list[tuple[float, float]] = []  # (arrival time, wait) per job that started service
    completed = 0
    all_done = env.event()

    def customer(arrival: float):
        nonlocal completed
        with servers.request() as request:
            yield request
            waits.append((arrival, env.now - arrival))
            yield env.timeout(rand.expovariate(MU))
        completed += 1
        if completed == jobs:
            all_done.succeed()

    def source():
        while True:
            yield env.timeout(rand.expovariate(LAM))
            env.process(customer(env.now))

    env.process(source())
    start = time.perf_counter()
    env.run(until=all_done)
    wall = time.perf_counter() - start
    waits.sort()
    return completed, wall, mean_wait([w for _, w in waits])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--msjgym-jobs", type=int, default=2_000_000)
    parser.add_argument("--ciw-jobs", type=int, default=50_000)
    parser.add_argument("--simpy-jobs", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per tool; the fastest is reported")
    args = parser.parse_args()

    exact = mmc_mean_wait(SERVERS, LAM, MU)
    print(f"FCFS M/M/{SERVERS}: λ = {LAM:g}, μ = {MU:g}, load {LAM / (SERVERS * MU):g}; seed {args.seed}")
    compile_s = warm_up_msjgym(args.seed)
    print(f"msjgym: one-time numba compile / cache load excluded (untimed warm-up call took {compile_s:.1f} s)")
    print(f"wall time: fastest of {args.repeat} runs (same seed) per tool")
    print(f"mean wait: first {WARMUP_FRACTION:.0%} of jobs dropped, ± 95 % CI from {BATCHES} batch means; "
          f"exact Erlang-C value {exact:.4f}\n")
    rows = [("msjgym", *fastest(lambda: run_msjgym(args.msjgym_jobs, args.seed), args.repeat)),
            ("Ciw", *fastest(lambda: run_ciw(args.ciw_jobs, args.seed), args.repeat)),
            ("SimPy", *fastest(lambda: run_simpy(args.simpy_jobs, args.seed), args.repeat))]
    rate = {name: jobs / wall for name, jobs, wall, _ in rows}
    print(f"{'tool':<8}{'jobs':>11}{'wall s':>9}{'jobs/s':>13}{'msjgym/tool':>13}   {'mean wait':<16}{'Erlang C':>8}")
    for name, jobs, wall, wait in rows:
        print(f"{name:<8}{jobs:>11,}{wall:>9.3f}{rate[name]:>13,.0f}{rate['msjgym'] / rate[name]:>12.1f}x"
              f"   {wait.mean:.4f} ± {wait.ci95:.4f}{exact:>9.4f}")
    ratio = rate["msjgym"] / rate["Ciw"]
    verdict = "met" if ratio >= TARGET_RATIO else "NOT met"
    print(f"\ntarget msjgym >= {TARGET_RATIO:g}x Ciw in jobs/s: {verdict} ({ratio:.0f}x)")


if __name__ == "__main__":
    main()
