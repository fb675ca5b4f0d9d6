"""Check Cor. 3.8 of the finite-skip paper on every WCFS policy of its figures, over a grid of loads.

    python examples/finite_skip_bounds.py [--loads 0.3,0.5,0.7,0.9,0.95] [--reps 4] [--jobs 100000]

Prints, per figure, policy and load: the simulated E[T] with its 95 % CI, the bounds with the paper's generic
constants and with the exact constants, and whether the estimate lies inside both.
"""
from __future__ import annotations

import argparse

import msjgym
from msjgym.policies.finite_skip import POLICIES
from msjgym.systems.finite_skip import scenarios as F
from msjgym.theory import finite_skip as theory


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", default="0.3,0.5,0.7,0.9,0.95")
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    loads = [float(x) for x in args.loads.split(",")]
    print(f"{'figure':<18} {'policy':<25} {'ρ':>5} {'E[T] ± CI':>18} {'generic band':>18} {'exact band':>18}  inside")
    failures = 0
    for name, fig in F.FIGURES.items():
        for policy in fig.policies:
            pol = POLICIES[policy]
            if not pol.wcfs:
                continue
            for i, load in enumerate(loads):
                model = F.load_finite_skip(name, {"load": load})
                jobs = args.jobs * (4 if load >= 0.9 else 1)
                result = msjgym.evaluate(model, policy, jobs=jobs, reps=args.reps, seed=args.seed + i,
                                         references=False)
                t = result.metrics["response_time"]
                bands = [theory.wcfs_band(model, theory.wcfs_constants(model, pol, exact)) for exact in (False, True)]
                inside = all(b.response_lower <= t.mean <= b.response_upper for b in bands)
                failures += not inside
                g, e = bands
                print(f"{name:<18} {policy:<25} {load:>5.2f} {t.mean:>9.4g} ± {t.ci95:<6.2g} "
                      f"[{g.response_lower:>6.3g}, {g.response_upper:<6.3g}]  [{e.response_lower:>6.3g}, "
                      f"{e.response_upper:<6.3g}]  {'yes' if inside else 'NO'}")
    print(f"\n{failures} point(s) outside a band")


if __name__ == "__main__":
    main()
