"""Compare every built-in policy on a scenario: mean response time with 95 % CIs, and stability.

    python examples/compare_policies.py finite-skip-fig6 --param load=0.8
"""
from __future__ import annotations

import argparse

import msjgym
from msjgym.errors import PolicyError
from msjgym.core.overrides import parse_override
from msjgym.policies.msj import POLICIES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", default="finite-skip-fig6")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=100_000)
    args = parser.parse_args()
    scenario = msjgym.load_scenario(args.scenario, dict(parse_override(p) for p in args.param))
    print(f"{scenario.name}: load {scenario.model.load:.3f}")
    for name, policy in POLICIES.items():
        try:
            result = msjgym.evaluate(scenario, policy, reps=args.reps, jobs=args.jobs, seed=1, references=False)
        except PolicyError as exc:
            print(f"  {name:26s} not applicable: {exc}")
            continue
        if result.stable:
            t = result.metrics["response_time"]
            print(f"  {name:26s} E[T] = {t.mean:8.4f} ± {t.ci95:.4f}")
        else:
            print(f"  {name:26s} UNSTABLE (grows at {result.growth_rate.mean:.3g} jobs per unit time)")


if __name__ == "__main__":
    main()
