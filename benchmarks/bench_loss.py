"""Events per second of the loss-system simulator (``msjgym.systems.loss.loop``) at n = 10⁴ with k = ⌈√n ln n⌉.

Model: n = 10⁴ servers, d = 2, λ = 1 − n^(−1/2) (α = ½, β = 1), greedy, each arrival samples k = ⌈√n ln n⌉ = 922
servers without replacement. The sample's idle count is drawn as a censored hypergeometric from a per-state cached
pmf (O(d) per state change, no O(n) or O(k) work per arrival). One replication from empty, statistics included;
numba's one-time compilation is excluded (a short call runs first). Events = arrivals + departures. msjgym's target
for the loss system is >= 2 million events per second. Prints only; it asserts nothing. The fastest of ``--repeat`` runs is
reported, with the full-access (k = n) speed for comparison.

``--against PATH`` compares with another checkout of msjgym (e.g. the main branch's, before a refactor) on a shared
machine: ``--rounds`` subprocesses of each, alternating (this checkout, then PATH, then PATH, then this, ...), each
the fastest of ``--repeat`` runs; it prints both maxima and their ratio. The replication is driven through the family
protocol (``msjgym.api.family("loss").simulation``), so the same code measures either checkout.

    python benchmarks/bench_loss.py [--servers 10000] [--arrivals 5000000] [--repeat 3] [--seed 1]
    python benchmarks/bench_loss.py --against /path/to/other/checkout [--arrivals 300000] [--rounds 6]
"""
from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from pathlib import Path

from msjgym import api

TARGET = 2e6
HERE = Path(__file__).resolve().parents[1]


def speed(servers: int, k: int, arrivals: int, seed: int) -> tuple[float, int, float]:
    """(events per second, events, blocking probability) of one replication."""
    loss = api.family("loss")
    scenario = loss.load("loss-sampled", {"servers": servers, "d": 2, "k": k, "alpha": 0.5, "beta": 1.0})
    sim = loss.simulation(scenario, "greedy", api.RunSettings(reps=1, jobs=arrivals, warmup=0, batches=1), seed)
    sim.prepare()  # compile / load the kernels
    sim.advance(0, 1)
    start = time.perf_counter()
    while sim.advance(0, 1 << 20) != api.DONE:
        pass
    wall = time.perf_counter() - start
    events = sim.events(0)
    return events / wall, events, sim.metrics(0)["blocking_probability"]


def _cases(n: int) -> list[tuple[str, int]]:
    k = math.ceil(math.sqrt(n) * math.log(n))
    return [(f"k = ⌈√n ln n⌉ = {k}", k), (f"k = n = {n} (full access)", n)]


def _child(root: Path, args: argparse.Namespace, k: int) -> float:
    """The fastest of ``args.repeat`` runs, measured by this file under the checkout ``root``."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--servers", str(args.servers), "--arrivals",
           str(args.arrivals), "--repeat", str(args.repeat), "--seed", str(args.seed), "--one", str(k)]
    out = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(root)})
    return float(out.stdout.split()[-1])


def compare(args: argparse.Namespace) -> None:
    other = Path(args.against).resolve()
    for label, k in _cases(args.servers):
        rates: dict[Path, list[float]] = {HERE: [], other: []}
        for r in range(args.rounds):
            for root in ((HERE, other) if r % 2 == 0 else (other, HERE)):
                rates[root].append(_child(root, args, k))
        mine, theirs = max(rates[HERE]), max(rates[other])
        print(f"n = {args.servers}, {label}, {args.arrivals:,} arrivals, best of {args.rounds} × {args.repeat}: "
              f"this checkout {mine / 1e6:.2f}, {other} {theirs / 1e6:.2f} million events/s "
              f"(ratio {mine / theirs:.3f}; every round: {' '.join(f'{x / 1e6:.2f}' for x in rates[HERE])} | "
              f"{' '.join(f'{x / 1e6:.2f}' for x in rates[other])})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=10_000)
    parser.add_argument("--arrivals", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--against", help="another msjgym checkout to compare with, measured alternately")
    parser.add_argument("--rounds", type=int, default=6, help="subprocesses of each checkout (with --against)")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child of --against: print one best rate
    args = parser.parse_args()
    if args.one is not None:
        print(max(speed(args.servers, args.one, args.arrivals, args.seed)[0] for _ in range(args.repeat)))
        return
    if args.against:
        compare(args)
        return
    n = args.servers
    for label, kk in _cases(n):
        best = max(speed(n, kk, args.arrivals, args.seed) for _ in range(args.repeat))
        rate, events, pb = best
        verdict = "meets" if rate >= TARGET else "BELOW"
        print(f"n = {n}, d = 2, λ = 1 − n^-1/2, greedy, {label}: {rate / 1e6:.2f} million events/s "
              f"({events:,} events; P_b = {pb:.4g}); target 2 million/s: {verdict}")


if __name__ == "__main__":
    main()
