"""A compiled dispatcher of the user's against the built-in it restates: events per second, and the same events.

``examples/compiled_dispatcher.py:my_jsq_d`` (JSQ(d) written against ``msjgym.systems.dispatch.compiled``, its own
parameter ``sample``) and the built-in ``jsq-d`` (``d`` from the scenario) on one model: N = ``--servers`` unit-rate
servers, λ = 0.9, Exp(1) sizes, d = 2, ``--arrivals`` arrivals (10 % warm-up), the same seed. Timed: one replication
of ``DispatchReplications`` (the compiled loop only, its own ``seconds``; compilation excluded by an untimed first
run); the fastest of ``--repeat`` runs, alternating the two. Target (the practitioner's-workflow issue, compiled
user policies): the user's at >= 0.9x the built-in's events/s; the runs must have the same events and response
time.

    python benchmarks/bench_user_dispatcher.py [--servers 10000] [--arrivals 2000000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from msjgym.core.distributions import Exponential
from msjgym.systems.dispatch.compiled import resolve
from msjgym.systems.dispatch.model import DispatchModel
from msjgym.systems.dispatch.replications import DispatchReplications

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "compiled_dispatcher.py"


def one(servers: int, arrivals: int, seed: int, user: bool):
    """(events per second, events, E[R]) of one replication of the user's dispatcher or the built-in."""
    model = DispatchModel("jsq-d" if not user else "random", servers, 0.9, Exponential(rate=1.0),
                          **({} if user else {"d": 2}))
    policy = resolve(f"{EXAMPLE}:my_jsq_d").bind(sample=2) if user else None
    runs = DispatchReplications(model, arrivals, int(round(0.1 * arrivals)), 1, seed, policy=policy)
    rep = runs.run(0)
    return rep.events / rep.seconds, rep.events, rep.response_time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", type=int, default=10_000)
    parser.add_argument("--arrivals", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    one(100, 10_000, args.seed, True)  # compile (or load) both
    one(100, 10_000, args.seed, False)
    best = {True: None, False: None}
    for _ in range(args.repeat):
        for user in (False, True):
            row = one(args.servers, args.arrivals, args.seed, user)
            if best[user] is None or row[0] > best[user][0]:
                best[user] = row
    print(f"JSQ(2), N = {args.servers:,}, {args.arrivals:,} arrivals, seed {args.seed}; fastest of {args.repeat}; "
          f"load average {os.getloadavg()[0]:.1f}")
    for user, label in ((False, "jsq-d (built-in, d = 2)"), (True, "compiled_dispatcher.py:my_jsq_d(sample=2)")):
        rate, events, response = best[user]
        print(f"{label:45s} {rate / 1e6:8.2f} M events/s  {events:>12,} events  E[R] = {response!r}")
    ratio = best[True][0] / best[False][0]
    same = best[True][1:] == best[False][1:]
    print(f"user / built-in: {ratio:.2f}x the events/s (target >= 0.9: {'met' if ratio >= 0.9 else 'not met'}); "
          f"same events and E[R]: {same}")


if __name__ == "__main__":
    main()
