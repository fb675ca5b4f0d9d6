"""Compiled policies of the user's against the built-ins they restate: events per second, and the same events.

One row per family (a user's compiled policy, declared in one file with its own parameters, at
>= 0.9x a built-in's events/s), each pair on one model and seed, alternated, the fastest of ``--repeat`` runs
(compilation excluded by an untimed first run; timed: the compiled loop only):

* dispatch: ``examples/compiled_dispatcher.py:my_jsq_d(sample=2)`` against ``jsq-d`` (d = 2); N = ``--servers``
  unit-rate servers, λ = 0.9, Exp(1) sizes, ``--arrivals`` arrivals (10 % warm-up); one replication of
  ``DispatchReplications`` (its own ``seconds``).
* loss: ``examples/compiled_width_rule.py:at_least(least=1)`` against ``greedy``, and ``random_width`` against
  ``random-width``; ``bench_loss.py``'s model: n = 10⁴ servers, d = 2, λ = 1 − n^(−1/2), k = ⌈√n ln n⌉ = 922
  sampled, Exp(1) sizes (the count chain),
  ``--arrivals`` arrivals (10 % warm-up); one replication of ``LossSimulation`` (timed around ``advance``).
* finite-skip: ``examples/compiled_finite_skip.py:capped_fcfs(cap=0)`` against ``tp-fcfs`` on
  ``finite-skip-fig4a`` (threshold parallelism, k = 8, its default load), ``--arrivals`` / 4 measured jobs (20 %
  warm-up); one ``replication`` (timed around it).

The runs of a pair must have the same events and the same key metric (bit for bit).

    python benchmarks/bench_user_compiled.py [--family all|dispatch|loss|finite-skip] [--servers 10000]
        [--arrivals 2000000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
Row = tuple[float, int, float]  # (events per second, events, key metric)


def _dispatch_rows(args: argparse.Namespace) -> list[tuple[str, str, str, Callable[[bool, bool], Row]]]:
    from msjgym.core.distributions import Exponential
    from msjgym.systems.dispatch.compiled import resolve
    from msjgym.systems.dispatch.model import DispatchModel
    from msjgym.systems.dispatch.simulation import DispatchReplications

    def one(user: bool, warm: bool) -> Row:
        servers, arrivals = (100, 10_000) if warm else (args.servers, args.arrivals)
        model = DispatchModel("jsq-d" if not user else "random", servers, 0.9, Exponential(rate=1.0),
                              **({} if user else {"d": 2}))
        policy = resolve(f"{EXAMPLES / 'compiled_dispatcher.py'}:my_jsq_d").bind(sample=2) if user else None
        runs = DispatchReplications(model, arrivals, int(round(0.1 * arrivals)), 1, args.seed, policy=policy)
        rep = runs.run(0)
        return rep.events / rep.seconds, rep.events, rep.response_time

    title = f"dispatch: JSQ(2), N = {args.servers:,}, {args.arrivals:,} arrivals"
    return [(title, "jsq-d (built-in, d = 2)", "compiled_dispatcher.py:my_jsq_d(sample=2)", one)]


def _loss_rows(args: argparse.Namespace) -> list[tuple[str, str, str, Callable[[bool, bool], Row]]]:
    from msjgym.core.rng import spawn_states
    from msjgym.policies.loss import POLICIES
    from msjgym.systems.loss.compiled import resolve
    from msjgym.systems.loss.simulation import LossSimulation
    from msjgym.systems.loss.state import S_BLOCK
    from msjgym.systems.loss.model import make_loss_model

    model = make_loss_model(10_000, 2, 922, alpha=0.5, beta=1.0)  # bench_loss.py's model
    example = EXAMPLES / "compiled_width_rule.py"

    def pair(builtin: str, user: str, bind: dict) -> Callable[[bool, bool], Row]:
        def one(mine: bool, warm: bool) -> Row:
            arrivals = 10_000 if warm else args.arrivals
            policy = resolve(f"{example}:{user}").bind(**bind) if mine else POLICIES[builtin]
            warmup = int(round(0.1 * arrivals))
            sim = LossSimulation(model, policy, warmup, arrivals - warmup, 1, spawn_states(args.seed, 1)[0])
            sim.prepare()
            start = time.perf_counter()
            sim.advance(0, arrivals + 1)
            seconds = time.perf_counter() - start
            return sim.events(0) / seconds, sim.events(0), float(sim.state.stats[0, :, S_BLOCK].sum())
        return one

    title = f"loss: n = 10,000, d = 2, λ = 1 − n^-1/2, k = 922, {args.arrivals:,} arrivals"
    return [(title, "greedy (built-in)", "compiled_width_rule.py:at_least(least=1)", pair("greedy", "at_least",
                                                                                          {"least": 1})),
            (title, "random-width (built-in)", "compiled_width_rule.py:random_width",
             pair("random-width", "random_width", {}))]


def _finite_skip_rows(args: argparse.Namespace) -> list[tuple[str, str, str, Callable[[bool, bool], Row]]]:
    import numpy as np

    from msjgym.api import family
    from msjgym.policies.finite_skip import POLICIES
    from msjgym.systems.finite_skip import simulation as fs
    from msjgym.systems.finite_skip.compiled import resolve

    scenario = family("finite-skip").load("finite-skip-fig4a", {})
    jobs = args.arrivals // 4

    def one(mine: bool, warm: bool) -> Row:
        policy = (resolve(f"{EXAMPLES / 'compiled_finite_skip.py'}:capped_fcfs").bind(cap=0) if mine else
                  POLICIES["tp-fcfs"])
        fs.prepare(policy)
        start = time.perf_counter()
        r = fs.replication(scenario.model, policy, jobs=1000 if warm else jobs,
                           stream=np.random.SeedSequence(args.seed))
        seconds = time.perf_counter() - start
        events = int(r.acc[fs.A_EVENTS])
        return events / seconds, events, float(np.mean(r.rec[:, fs.R_DONE] - r.rec[:, fs.R_ARR]))

    title = f"finite-skip: finite-skip-fig4a (threshold parallelism, k = 8), {jobs:,} measured jobs"
    return [(title, "tp-fcfs (built-in)", "compiled_finite_skip.py:capped_fcfs(cap=0)", one)]


FAMILIES = {"dispatch": _dispatch_rows, "loss": _loss_rows, "finite-skip": _finite_skip_rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", choices=("all", *FAMILIES), default="all")
    parser.add_argument("--servers", type=int, default=10_000, help="dispatch: servers N")
    parser.add_argument("--arrivals", type=int, default=2_000_000, help="arrivals per run (10 %% warm-up)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rows = [row for name, make in FAMILIES.items() if args.family in ("all", name) for row in make(args)]
    print(f"seed {args.seed}; fastest of {args.repeat}, alternated; load average {os.getloadavg()[0]:.1f} at start")
    for title, builtin, user, one in rows:
        one(False, True)  # compile (or load) both
        one(True, True)
        best: dict[bool, Row | None] = {True: None, False: None}
        for _ in range(args.repeat):
            for mine in (False, True):
                row = one(mine, False)
                if best[mine] is None or row[0] > best[mine][0]:
                    best[mine] = row
        print(title)
        for mine, label in ((False, builtin), (True, user)):
            rate, events, metric = best[mine]
            print(f"  {label:45s} {rate / 1e6:8.2f} M events/s  {events:>12,} events  key metric {metric!r}")
        ratio = best[True][0] / best[False][0]
        same = best[True][1:] == best[False][1:]
        print(f"  user / built-in: {ratio:.2f}x the events/s (target >= 0.9: {'met' if ratio >= 0.9 else 'not met'}); "
              f"same events and key metric: {same}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
