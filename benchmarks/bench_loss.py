"""Events per second of the loss-system simulator (``msjgym.systems.loss.loop``) at n = 10⁴ with k = ⌈√n ln n⌉.

Model: n = 10⁴ servers, d = 2, λ = 1 − n^(−1/2) (α = ½, β = 1), greedy, each arrival samples k = ⌈√n ln n⌉ = 922
servers without replacement. The sample's idle count is drawn as a censored hypergeometric from a per-state cached
pmf (O(d) per state change, no O(n) or O(k) work per arrival). One replication from empty, statistics included;
numba's one-time compilation is excluded (a short call runs first). Events = arrivals + departures. msjgym's target
for the loss system is >= 2 million events per second. Prints only; it asserts nothing. The fastest of ``--repeat`` runs is
reported, with the full-access (k = n) speed for comparison.

    python benchmarks/bench_loss.py [--servers 10000] [--arrivals 5000000] [--repeat 3] [--seed 1]
"""
from __future__ import annotations

import argparse
import math
import time

from msjgym.api import family, policy_spec
from msjgym.core import rng
from msjgym.systems.loss.simulation import LossSimulation
from msjgym.systems.loss.model import make_loss_model

TARGET = 2e6


def speed(servers: int, k: int | str, arrivals: int, seed: int) -> tuple[float, int, float]:
    """(events per second, events, blocking probability) of one replication."""
    model = make_loss_model(servers, 2, k, alpha=0.5, beta=1.0)
    streams, _ = rng.spawn_states(seed, 1)
    sim = LossSimulation(model, policy_spec(family("loss"), "greedy"), 0, arrivals, 1, streams)
    sim.advance(0, 1)  # compile / load the kernels
    start = time.perf_counter()
    while not sim.advance(0, 1 << 20):
        pass
    wall = time.perf_counter() - start
    events = sim.events(0)
    st = sim.state.stats[0, 0]
    return events / wall, events, st[2] / st[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=10_000)
    parser.add_argument("--arrivals", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    n = args.servers
    k = math.ceil(math.sqrt(n) * math.log(n))
    for label, kk in ((f"k = ⌈√n ln n⌉ = {k}", k), (f"k = n = {n} (full access)", n)):
        best = max(speed(n, kk, args.arrivals, args.seed) for _ in range(args.repeat))
        rate, events, pb = best
        verdict = "meets" if rate >= TARGET else "BELOW"
        print(f"n = {n}, d = 2, λ = 1 − n^-1/2, greedy, {label}: {rate / 1e6:.2f} million events/s "
              f"({events:,} events; P_b = {pb:.4g}); target 2 million/s: {verdict}")


if __name__ == "__main__":
    main()
