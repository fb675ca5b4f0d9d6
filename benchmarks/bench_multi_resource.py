"""Events per second of the multi-resource family's FCFS against the multiserver-job (MSJ) FCFS on the same load,
through ``msjgym.evaluate``, measured in the same run.

Load: ``benchmarks/bench_events.py``'s (32 servers; a job needs 1 server with probability 0.9 or all 32 with
probability 0.1; Exp(1) durations; load 0.35), run as

* ``msj``: the MSJ scenario;
* ``1 resource``: the multi-resource scenario ``resources = {servers = 32}``, ``demand = {servers = m}`` (the MSJ
  system: the family's twin path, the same events);
* ``3 resources``: ``resources = {cores = 32, gpus = 32, memory = 32}``, every class demanding m of each: the same
  schedule (every resource fills alike), so the same events, through the vector path (unit needs on MSJ's engine,
  the vectors counted in the record's resource area, checked on three resources at every decision);
* ``gpu-cluster``: the family's built-in GPU-cluster scenario (another load: its own row, no ratio).

Each row: 1 replication of ``--jobs`` measured jobs plus 10 % warm-up, the fastest of ``--repeat`` runs with the
same seed, after an untimed warm-up call (compilation excluded). The ratio is MSJ's events/s over the row's
(acceptance of the family: within 2×). Prints only; it asserts nothing.

    python benchmarks/bench_multi_resource.py [--jobs 1000000] [--seed 1] [--repeat 3]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from msjgym.api import load_scenario
from msjgym.evaluate.evaluator import evaluate

SERVERS, LOAD = 32, 0.35
NEEDS, PROBS = (1, 32), (0.9, 0.1)


def _file(folder: Path, name: str, head: str, demand: str) -> str:
    rows = [head, f"load = {LOAD}\n"]
    for m, p in zip(NEEDS, PROBS):
        rows.append(f'[[classes]]\nname = "n{m}"\nprobability = {p}\nservice = {{ dist = "exp", rate = 1.0 }}\n'
                    + demand.format(m=m) + "\n")
    path = folder / f"{name}.toml"
    path.write_text("".join(rows))
    return str(path)


def scenarios(folder: Path) -> dict[str, str]:
    """label -> scenario (a file, or a built-in name)."""
    return {
        "msj": _file(folder, "msj", f"servers = {SERVERS}\n", "need = {m}"),
        "1 resource": _file(folder, "one", f'system = "multi-resource"\nresources = {{ servers = {SERVERS} }}\n',
                            "demand = {{ servers = {m} }}"),
        "3 resources": _file(folder, "three", 'system = "multi-resource"\nresources = { cores = 32, gpus = 32, '
                             'memory = 32 }\n', "demand = {{ cores = {m}, gpus = {m}, memory = {m} }}"),
        "gpu-cluster": "gpu-cluster",
    }


def timed(scenario: str, jobs: int, seed: int, repeat: int) -> tuple[int, float]:
    """(events, fastest wall seconds) of ``evaluate(scenario, "fcfs")``, after an untimed warm-up call."""
    scenario = load_scenario(scenario)
    evaluate(scenario, "fcfs", reps=1, jobs=1000, seed=seed, references=False)
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = evaluate(scenario, "fcfs", reps=1, jobs=jobs, seed=seed, references=False)
        wall = time.perf_counter() - start
        best = (result.events, wall) if best is None or wall < best[1] else best
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        rows = {label: timed(s, args.jobs, args.seed, args.repeat) for label, s in scenarios(Path(folder)).items()}
    base = rows["msj"][0] / rows["msj"][1]
    print(f"FCFS, {args.jobs:,} measured jobs, 1 replication, fastest of {args.repeat}")
    print(f"{'row':<14}{'events':>12}{'seconds':>10}{'events/s':>14}{'msj / row':>11}")
    for label, (events, wall) in rows.items():
        rate = events / wall
        ratio = f"{base / rate:.2f}" if label != "gpu-cluster" else "-"
        print(f"{label:<14}{events:>12,}{wall:>10.3f}{rate:>14,.0f}{ratio:>11}")


if __name__ == "__main__":
    main()
