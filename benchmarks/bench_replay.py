"""Replay speed of the HPC schedulers: jobs per second on a 10,000-job trace of a 256-processor machine.

The trace is drawn here, deterministically (``--seed``), and written as an SWF file in a temporary folder: Poisson
submissions at an offered load of ``--load``; processors 1 with probability 0.25, else 2^u with u uniform on [0, 8],
rounded to a power of two with probability 0.75 (else up); run times lognormal (median 600 s, σ = 1.6, at least
1 s). Two versions of the same jobs differ only in their requested times (SWF field 9): ``exact`` (requested = run
time: what a workload model without requested times, e.g. Lublin & Feitelson's, gives) and ``over`` (requested =
⌈run time × f⌉, f uniform on [1, 5]: Mu'alem & Feitelson's over-estimation model, so jobs end early and backfilling
schedules change after most completions).

Timed: the replay itself, ``MSJSimulation.advance`` until the trace is done (the compiled event loop and the
policy's kernels); not the compilation (an untimed run first), the trace's reading, nor the result's summary.
Fastest of ``--repeat`` runs, in wall time and in CPU time of the process (``time.process_time``: on a machine
shared with other jobs, wall time counts the time the process waited for a core; jobs/s are from CPU time).
The last lines give the speed targets of the practitioner's-workflow issue: ``priority`` with ``easy-narrow``
(RLScheduler's rule) in a static order (fcfs, sjf, f1) against ``easy-backfilling``, and ``priority`` with
``conservative`` in a static order (fcfs, sjf) against ``conservative-backfilling`` (all of them the waiting list or
profile kept by ``msjgym/systems/msj/backfilling.py``), each >= 0.8x the jobs/s of the built-in.

    python benchmarks/bench_replay.py               # both traces, every policy below
    python benchmarks/bench_replay.py --jobs 20000 --load 0.9
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from msjgym.api import load_scenario
from msjgym.core import rng
from msjgym.policies.msj import POLICIES as BUILTIN
from msjgym.systems.msj.simulation import MSJSimulation, RunConfig
from msjgym.systems.msj.state import DONE

MACHINE = 256
POLICIES = (
    ("fcfs", {}),
    ("easy-backfilling", {}),
    ("conservative-backfilling", {}),
    ("priority", {"order": "fcfs", "backfill": "conservative"}),
    ("priority", {"order": "sjf", "backfill": "none"}),
    ("priority", {"order": "sjf", "backfill": "easy"}),
    ("priority", {"order": "f1", "backfill": "easy"}),
    ("priority", {"order": "wfp3", "backfill": "easy"}),
    ("priority", {"order": "unicep", "backfill": "easy"}),
    ("priority", {"order": "sjf", "backfill": "conservative"}),
    ("priority", {"order": "fcfs", "backfill": "easy-narrow"}),
    ("priority", {"order": "sjf", "backfill": "easy-narrow"}),
    ("priority", {"order": "f1", "backfill": "easy-narrow"}),
    ("priority", {"order": "wfp3", "backfill": "easy-narrow"}),
)
TARGETS = (("priority(order=fcfs, backfill=easy-narrow)", "easy-backfilling"),
           ("priority(order=sjf, backfill=easy-narrow)", "easy-backfilling"),
           ("priority(order=f1, backfill=easy-narrow)", "easy-backfilling"),
           ("priority(order=fcfs, backfill=conservative)", "conservative-backfilling"),
           ("priority(order=sjf, backfill=conservative)", "conservative-backfilling"))
"""(policy, built-in): the policy's jobs/s should be at least 0.8x the built-in's on the same trace."""


def write_traces(folder: Path, jobs: int, load: float, seed: int) -> dict[str, Path]:
    """The two scenarios (module docstring), as TOML files replaying SWF files in ``folder``."""
    gen = np.random.default_rng(seed)
    u = gen.uniform(0.0, 8.0, jobs)
    procs = np.where(gen.random(jobs) < 0.75, 2.0 ** np.round(u), np.ceil(2.0 ** u))
    procs = np.where(gen.random(jobs) < 0.25, 1, procs).astype(int).clip(1, MACHINE)
    run = np.ceil(np.exp(gen.normal(np.log(600.0), 1.6, jobs))).clip(1, 200_000)
    factor = gen.uniform(1.0, 5.0, jobs)
    rate = load * MACHINE / float(np.mean(procs * run))
    submit = np.floor(np.cumsum(gen.exponential(1 / rate, jobs)))
    out = {}
    for name, requested in (("exact", run), ("over", np.ceil(run * factor))):
        lines = [f"; MaxProcs: {MACHINE}", f"; Note: bench_replay.py --jobs {jobs} --load {load} --seed {seed}"]
        lines += [f"{i + 1} {int(submit[i])} -1 {int(run[i])} {procs[i]} -1 -1 {procs[i]} {int(requested[i])} "
                  "-1 1 1 1 1 1 1 -1 -1" for i in range(jobs)]
        (folder / f"{name}.swf").write_text("\n".join(lines) + "\n")
        toml = folder / f"{name}.toml"
        toml.write_text(f'servers = {MACHINE}\narrivals = {{ trace = "{name}.swf", scale_servers = {MACHINE} }}\n')
        out[name] = toml
    return out


def replay_seconds(model, policy, repeat: int) -> tuple[float, float, float]:
    """(fastest wall time of the replay, fastest CPU time, mean waiting time) over ``repeat`` timed runs after an
    untimed one."""
    best, best_cpu, wait = float("inf"), float("inf"), 0.0
    for i in range(repeat + 1):
        sim = MSJSimulation(model, policy, RunConfig(jobs=len(model.trace), warmup=0, batches=1),
                            rng.spawn_states(1, 1)[0])
        sim.prepare()
        start, start_cpu = time.perf_counter(), time.process_time()
        while sim.advance(0, 10**9) != DONE:
            pass
        elapsed, elapsed_cpu = time.perf_counter() - start, time.process_time() - start_cpu
        if i:
            best, best_cpu = min(best, elapsed), min(best_cpu, elapsed_cpu)
        wait = float(np.mean(sim.completion_times() - model.trace.arrival - model.trace.duration))
    return best, best_cpu, wait


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000, help="jobs in the trace (default 10,000)")
    parser.add_argument("--load", type=float, default=0.85, help="offered load of the trace (default 0.85)")
    parser.add_argument("--seed", type=int, default=2026, help="seed of the trace (default 2026)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per policy; the fastest is shown")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scenarios = write_traces(Path(tmp), args.jobs, args.load, args.seed)
        print(f"{args.jobs:,}-job traces, {MACHINE} processors, load {args.load}, seed {args.seed}; replay only "
              f"(compilation excluded), fastest of {args.repeat}; load average {os.getloadavg()[0]:.1f}")
        for name, path in scenarios.items():
            model = load_scenario(str(path)).model
            print(f"\nrequested times: {name}")
            print(f"{'policy':52s} {'wall s':>8s} {'CPU s':>8s} {'jobs/s':>12s} {'mean wait s':>12s}")
            results = {}
            for policy_name, params in POLICIES:
                policy = BUILTIN[policy_name].bind(**params) if params else BUILTIN[policy_name]
                wall, seconds, wait = replay_seconds(model, policy, args.repeat)
                results[policy.label] = seconds
                print(f"{policy.label:52s} {wall:8.3f} {seconds:8.3f} {args.jobs / seconds:12,.0f} {wait:12,.1f}")
            for label, builtin in TARGETS:
                ratio = results[builtin] / results[label]
                print(f"{label} vs {builtin}: {ratio:.2f}x the jobs/s (target >= 0.8: "
                      f"{'met' if ratio >= 0.8 else 'not met'})")

if __name__ == "__main__":
    main()
