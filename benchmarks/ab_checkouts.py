"""Compare a benchmark's rates between two checkouts of msjgym, measured alternately in the same session.

On a shared machine, two runs of identical code can differ by more than the change one wants to see; running the
checkouts one after the other, in alternating order (A B, B A, A B, ...), exposes both to the same load. Each round
runs ``python BENCHMARK ARGS`` once per checkout (``PYTHONPATH`` = that checkout, working directory = that checkout,
so each runs its own copy of the benchmark) and reads every output line matching ``--row``, a regular expression with
the named groups ``key`` (the row's name) and ``rate`` (a number; thousands separators allowed). Printed per row: the
median rate of each checkout, the ratio B/A of the medians, and the range of the per-round ratios (the noise).

Examples (A = the reference, B = the change)::

    python benchmarks/ab_checkouts.py OLD NEW --rounds 6 \\
        --row '^(?P<key>evaluate \\S+(?: \\S+)?)\\s+[\\d,]+\\s+[\\d.]+\\s+(?P<rate>[\\d,]+)' \\
        -- benchmarks/bench_events.py --jobs 2000000
    python benchmarks/ab_checkouts.py OLD NEW --rounds 3 \\
        --row '^(?P<key>(?:push|jsq-d)\\s+\\S+\\s+\\d+)\\s+\\d+\\s+[\\d.]+\\s+(?P<rate>[\\d.]+)' \\
        -- benchmarks/bench_dispatch.py --per-server 20 --min-arrivals 1000000
    python benchmarks/ab_checkouts.py OLD NEW --rounds 4 --row '^\\s+(?P<key>\\S+)\\s.*?(?P<rate>[\\d.]+) M events/s' \\
        -- benchmarks/bench_user_compiled.py --family finite-skip
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path


def rates_of(checkout: Path, command: list[str], row: re.Pattern[str]) -> dict[str, float]:
    """Every matching row's rate in one run of ``command`` under ``checkout``."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    done = subprocess.run([sys.executable, *command], cwd=checkout, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{checkout}: {' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    found = {}
    for line in done.stdout.splitlines():
        match = row.search(line)
        if match:
            found[" ".join(match.group("key").split())] = float(match.group("rate").replace(",", ""))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="checkout A (the reference)")
    parser.add_argument("b", type=Path, help="checkout B (the change)")
    parser.add_argument("--rounds", type=int, default=4, help="runs of each checkout, alternating (>= 1)")
    parser.add_argument("--row", required=True, help="regex with named groups key and rate, matched per line")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args, command = parser.parse_args(argv[:cut]), argv[cut + 1:]  # after --: BENCHMARK.py [ARGS], per checkout
    if not command:
        parser.error("command: give the benchmark after --, e.g. -- benchmarks/bench_events.py")
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: must be >= 1")
    row = re.compile(args.row)
    if {"key", "rate"} - set(row.groupindex):
        parser.error("--row: needs the named groups (?P<key>...) and (?P<rate>...)")
    a, b = args.a.resolve(), args.b.resolve()
    rates: dict[Path, dict[str, list[float]]] = {a: {}, b: {}}
    for r in range(args.rounds):
        for checkout in ((a, b) if r % 2 == 0 else (b, a)):
            for key, rate in rates_of(checkout, command, row).items():
                rates[checkout].setdefault(key, []).append(rate)
        print(f"round {r + 1}/{args.rounds} done at {time.strftime('%H:%M:%S')}, load average "
              f"{os.getloadavg()[0]:.1f}", flush=True)
    if not rates[a]:
        raise SystemExit("--row matched no line of A's output")
    print(f"\nA = {a}\nB = {b}\n{' '.join(command)}; {args.rounds} alternating rounds\n")
    print(f"{'row':52s} {'A median':>12s} {'B median':>12s}  B/A  [per-round B/A: min..max]")
    for key, xs in rates[a].items():
        ys = rates[b].get(key, [])
        if not ys:
            print(f"{key:52s} {statistics.median(xs):12.4g} {'-':>12s}  (no such row in B)")
            continue
        per_round = [y / x for x, y in zip(xs, ys)]
        print(f"{key:52s} {statistics.median(xs):12.4g} {statistics.median(ys):12.4g}  "
              f"{statistics.median(ys) / statistics.median(xs):.3f}  [{min(per_round):.3f}..{max(per_round):.3f}]")


if __name__ == "__main__":
    main()
