"""Wall time of a 20-task ``msjgym sweep`` with one worker and with several, and the speed-up.

Sweep: scenario ``one-and-n`` (10 servers; needs 1 or 10), ``--grid arrival_rate=1.0,1.5,2.0,2.2,2.3`` ×
``--policy fcfs,server-filling`` × ``--reps 2`` = 20 independent tasks of ``--jobs`` measured jobs (default
10,000,000 plus 10 % warm-up: about 1–1.5 s each on this machine). Each run is the sweep command in a fresh process
(``python -m msjgym.evaluate.sweep``) writing into a fresh output folder, timed with ``time.perf_counter`` from start
to exit, so it includes what a user waits for: interpreter start, the workers' start and their loading of the
compiled kernels, and the results file. numba's one-time compilation is excluded by an untimed tiny sweep first.

``--workers 1`` runs the tasks in the main process; ``--workers N`` (default 2, this machine's cores) in a pool of
N spawned processes. msjgym's target is a speed-up of at least 1.8× with 2 workers on 2 cores. The script also
checks that both runs stored identical numbers. Prints only; it asserts nothing.

    python benchmarks/bench_sweep.py [--jobs 10000000] [--workers 2] [--seed 1] [--repeat 1]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from msjgym.evaluate.store import ResultStore

GRID = "arrival_rate=1.0,1.5,2.0,2.2,2.3"
POLICIES = "fcfs,server-filling"
REPS = 2
TARGET = 1.8  # speed-up with 2 workers on 2 cores (msjgym's target)


def sweep_args(jobs: int, seed: int, out: Path, workers: int) -> list[str]:
    return [sys.executable, "-m", "msjgym", "sweep", "one-and-n", "--grid", GRID, "--policy", POLICIES,
            "--reps", str(REPS), "--jobs", str(jobs), "--seed", str(seed), "--out", str(out),
            "--workers", str(workers), "--no-progress"]


def timed_sweep(jobs: int, seed: int, out: Path, workers: int) -> tuple[float, float]:
    """Seconds from start to exit of one sweep command into the fresh folder ``out``, and the seconds the command
    itself reports for running the tasks (its ``ran ... in X s`` line: from the first submission to the last row)."""
    start = time.perf_counter()
    run = subprocess.run(sweep_args(jobs, seed, out, workers), check=True, stdout=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    ran = next(line for line in run.stdout.splitlines() if line.startswith("ran "))
    return wall, float(ran.split(" in ")[1].split()[0])


def stored(out: Path) -> tuple[dict, float]:
    """The stored numbers by task key, and the tasks' summed simulation seconds."""
    with ResultStore(out / "results.sqlite") as store:
        rows = list(store.rows())
    return {r.key(): (r.task_seed, r.metrics, r.events) for r in rows}, sum(r.wall_seconds for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000_000, help="measured jobs per task (default 10000000)")
    parser.add_argument("--workers", type=int, default=2, help="workers of the parallel run (default 2)")
    parser.add_argument("--seed", type=int, default=1, help="root seed of the sweep (default 1)")
    parser.add_argument("--repeat", type=int, default=1, help="timed runs per setting; the fastest is reported")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subprocess.run(sweep_args(1000, 0, root / "warm-up", 1), check=True, stdout=subprocess.DEVNULL)
        times: dict[int, tuple[float, float]] = {}
        for workers in (1, args.workers):
            runs = [timed_sweep(args.jobs, args.seed, root / f"w{workers}-{i}", workers) for i in range(args.repeat)]
            times[workers] = min(runs)
        serial, serial_sim = stored(root / "w1-0")
        parallel, parallel_sim = stored(root / f"w{args.workers}-0")

    tasks = len(serial)
    print(f"sweep: one-and-n, --grid {GRID}, --policy {POLICIES}, --reps {REPS} = {tasks} tasks of "
          f"{args.jobs:,} jobs (+10 % warm-up); seed {args.seed}; fastest of {args.repeat} run(s) each")
    print(f"simulation seconds per task: {serial_sim / tasks:.2f} with 1 worker, {parallel_sim / tasks:.2f} with "
          f"{args.workers} (summed: {serial_sim:.1f} and {parallel_sim:.1f})\n")
    print(f"{'workers':>8}  {'wall s':>7}  {'tasks/s':>7}  {'running the tasks s':>19}")
    for workers, (wall, ran) in times.items():
        print(f"{workers:>8}  {wall:7.2f}  {tasks / wall:7.2f}  {ran:19.1f}")
    speedup = times[1][0] / times[args.workers][0]
    inner = times[1][1] / times[args.workers][1]
    print(f"\nspeed-up with {args.workers} workers: {speedup:.2f}x end to end ({inner:.2f}x running the tasks)")
    print(f"identical numbers stored by both runs: {'yes' if serial == parallel else 'NO'}")
    if args.workers == 2:
        print(f"target >= {TARGET}x with 2 workers: {'met' if speedup >= TARGET else 'not met'} ({speedup:.2f}x)")


if __name__ == "__main__":
    main()
