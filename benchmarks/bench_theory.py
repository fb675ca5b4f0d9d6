"""Wall time of msjgym's saturated-system theory: the "1 and n" closed forms at n = 10⁸ and the generic solver.

- Closed forms (Grosof & Ayhan, Lemmas 5.3 and 5.5; ``msjgym.theory.saturated``): ``one_and_n_throughput`` (μ) and
  ``one_and_n_mean_relative_completions`` (E[Δ(Y_d)]) at n = 10⁸, μ₁ = μ_n = 1, p_n = n^−α for α = 0.5 (series
  truncated where p₁ⁱ underflows, ~7.5·10⁶ terms), α = 1 and α = 2 (all 10⁸ terms). Both are O(n) time and O(1)
  memory in n (vectorised blocks of 2¹⁵ terms); E[Δ(Y_d)] includes its own evaluation of μ.
- Generic solver (``saturated_fcfs``: build the saturated chain, sparse solves for π and the Poisson equation;
  ``fcfs_stability_threshold``: π only) on three-class systems with n = 64.

Each case runs ``--repeat`` times (default 3) after one untimed warm-up call; the fastest run is reported. Prints
only; it asserts nothing.

    python benchmarks/bench_theory.py [--servers 100000000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from msjgym.theory.saturated import (
    fcfs_stability_threshold,
    one_and_n_mean_relative_completions,
    one_and_n_throughput,
    saturated_fcfs,
)

ALPHAS = (0.5, 1.0, 2.0)
GENERIC = [  # (needs, probabilities, rates), n = 64
    ((1, 8, 64), (0.6, 0.3, 0.1), (1.0, 0.5, 2.0)),
    ((1, 32, 64), (0.9, 0.05, 0.05), (1.0, 1.0, 1.0)),
    ((3, 6, 8), (0.5, 0.3, 0.2), (1.0, 2.0, 0.5)),
]
GENERIC_SERVERS = 64


def fastest(call: Callable[[], object], repeat: int) -> tuple[object, float]:
    """(result, fastest wall seconds) over ``repeat`` timed calls, after one untimed warm-up call."""
    call()
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - start)
    return result, best


def bench_closed_forms(n: int, repeat: int) -> None:
    print(f'"1 and n" closed forms at n = {n:,}, μ₁ = μ_n = 1, p_n = n^-α (fastest of {repeat}; warm-up excluded)\n')
    print(f"{'α':>5}{'p_n':>11}{'μ':>17}{'μ s':>8}{'E[Δ(Y_d)]':>17}{'E[Δ] s':>9}")
    for alpha in ALPHAS:
        p_n = float(n) ** -alpha
        mu, mu_s = fastest(lambda: one_and_n_throughput(n, p_n, 1.0, 1.0), repeat)
        delta, delta_s = fastest(lambda: one_and_n_mean_relative_completions(n, p_n, 1.0, 1.0), repeat)
        print(f"{alpha:>5g}{p_n:>11.1e}{mu:>17.6f}{mu_s:>8.3f}{delta:>17.6f}{delta_s:>9.3f}")


def bench_generic(repeat: int) -> None:
    n = GENERIC_SERVERS
    print(f"\ngeneric saturated solver, n = {n}, three classes (fastest of {repeat}; warm-up excluded)\n")
    print(f"{'needs':<13}{'probabilities':<18}{'rates':<16}{'states':>7}{'μ':>10}{'E[Δ(Y_d)]':>11}"
          f"{'full s':>9}{'μ-only s':>10}")
    for needs, probabilities, rates in GENERIC:
        system, full_s = fastest(lambda: saturated_fcfs(n, needs, probabilities, rates), repeat)
        _, mu_s = fastest(lambda: fcfs_stability_threshold(n, needs, probabilities, rates), repeat)
        print(f"{str(needs):<13}{str(probabilities):<18}{str(rates):<16}{len(system.states):>7}"
              f"{system.throughput:>10.4f}{system.mean_relative_completions:>11.4f}{full_s:>9.4f}{mu_s:>10.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=10**8, help="n for the closed forms")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per case; the fastest is reported")
    args = parser.parse_args()
    bench_closed_forms(args.servers, args.repeat)
    bench_generic(args.repeat)


if __name__ == "__main__":
    main()
