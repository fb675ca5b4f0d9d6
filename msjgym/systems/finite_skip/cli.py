"""``msjgym finite-skip NAME --policy P [--param load=ρ]``: simulate a finite-skip system and print its scorecard.

The finite-skip systems (heterogeneous M/G/k, LPS, threshold parallelism, MSJ as a rate model) are not
multiserver-job scenarios, so they have their own command; ``msjgym finite-skip --list`` shows the scenarios and the
policies of each.
"""
from __future__ import annotations

import argparse
import json

from msjgym.errors import MsjgymError
from msjgym.systems.finite_skip import scenarios as F
from msjgym.policies.finite_skip import FINITE_SKIP_POLICIES, SYSTEM_NAMES, FiniteSkipPolicy
from msjgym.systems.finite_skip.agent import simulate_agent

METRICS = ("response_time", "queueing_time", "front_time", "number_in_system", "number_in_front", "work",
           "work_nonbusy", "utilization", "work_identity_residual")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenario", nargs="?", help="a finite-skip scenario (finite-skip-fig2, -fig3, -fig4a, -fig4b, "
                                               "-fig6, -fig7)")
    p.add_argument("--policy", help="a policy of the scenario's system (see --list), or FILE.py:NAME (an object, "
                                    "class or function with act(observation) -> rates; runs on the Python agent path)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="load=ρ (default 0.6); fig2: speeds=[...]; fig3: servers=k; fig4a/b: servers=k, threshold=P")
    p.add_argument("--reps", type=int, default=10, help="independent replications (default 10)")
    p.add_argument("--jobs", type=int, default=100_000, help="measured jobs per replication (default 100000)")
    p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p.add_argument("--list", action="store_true", help="list the scenarios and policies")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def command(args: argparse.Namespace) -> int:
    from msjgym.cli import format_references
    from msjgym.systems.msj.scenarios import parse_override

    if args.list or not args.scenario:
        for name, fig in F.FIGURES.items():
            print(f"{name}\n  {fig.description}\n  policies: {', '.join(fig.policies)}"
                  + (f" (+ on `msjgym evaluate`: {', '.join(fig.msj_policies)})" if fig.msj_policies else ""))
        return 0
    if args.reps < 1 or args.jobs < 1 or args.seed < 0:
        raise MsjgymError("--reps and --jobs must be >= 1 and --seed >= 0")
    model = F.load_finite_skip(args.scenario, dict(parse_override(t) for t in args.param))
    policy = args.policy or F.FIGURES[args.scenario].policies[0]
    if ".py:" in policy:  # a policy of one's own, on the agent path
        agent = _load_agent(policy, model)
        summary = F.summarize(model, simulate_agent(model, agent, jobs=args.jobs, reps=args.reps, seed=args.seed))
        own = FiniteSkipPolicy(policy, model.system, -1, True, False, "user policy", "user file")
        refs = F.judge(F.references(model, own), summary)
    elif policy not in FINITE_SKIP_POLICIES:
        raise MsjgymError(f"--policy {policy!r}: unknown; valid for {args.scenario}: "
                          f"{', '.join(F.FIGURES[args.scenario].policies)}, or FILE.py:NAME")
    else:
        summary = F.run(model, policy, jobs=args.jobs, reps=args.reps, seed=args.seed)
        refs = F.judge(F.references(model, policy), summary)
    if args.json:
        print(json.dumps({"scenario": args.scenario, "policy": policy, "load": model.load, "stable": summary.stable,
                          "metrics": {k: v.to_dict() for k, v in summary.metrics.items()},
                          "invariants": summary.invariants, "references": [r.to_dict() for r in refs]}))
        return 0
    print(f"scenario  {args.scenario}  ({SYSTEM_NAMES[model.system]}, k={model.servers}, load {model.load:.4g}, "
          f"λ={model.arrival_rate:.4g})\npolicy    {policy}\n"
          f"reps      {args.reps} × {args.jobs} jobs, seed {args.seed}")
    if not summary.stable:
        print(f"\nUNSTABLE: the number in system reached the simulator's capacity (growth rate "
              f"{summary.invariants['growth_rate']:.4g} jobs per unit time)")
    for name in METRICS:
        if name in summary.metrics:
            e = summary.metrics[name]
            print(f"  {name:<24} {e.mean:12.6g} ± {e.ci95:.3g}")
    print("pathwise: max |T_Q − (W^A − W_F^F)| = {identity_error:.3g}, max front size = {max_front:g}, "
          "max (1 − B) with jobs queued = {max_rate_gap:.3g}, events serving a job outside the front = "
          "{served_outside_front:g}".format(**summary.invariants))
    print(format_references(refs))
    return 0


def _load_agent(text: str, model):
    """``FILE.py:NAME``: a class (constructed with the :class:`FiniteSkipSpec` if it takes an argument), an object or
    a function, loaded as every family's policies are (:func:`msjgym.core.user_policy.load_user_policy`)."""
    from msjgym.core.user_policy import load_user_policy
    from msjgym.systems.finite_skip.agent import FiniteSkipSpec

    return load_user_policy(text, FiniteSkipSpec(model))[1]
