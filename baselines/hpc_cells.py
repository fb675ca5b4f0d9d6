"""The cell table of the learned HPC schedulers (``baselines/README.md``): every recorded ``hpc_pick*`` model on every
held-out cell, exact requested times and users' estimates, paired with the best heuristic of the cell.

    python baselines/hpc_cells.py [--windows 100] [--first 30] [--models NAME ...] [--estimates exact tsafrir]
                                  [--cooldown C] [--out baselines/results/hpc_cells.json] [--redo]

For each model (``baselines/results/NAME.zip``, its recipe ``baselines/NAME.toml`` giving the baselines: the six
priority orders under the model's backfilling rule) and each of the eight held-out traces (cells i-iv, with exact
requested times and with Tsafrir estimates), the learned policy and the six heuristics run on the same ``windows``
windows of 1,024 jobs (``msjgym evaluate --windows N --window-jobs 1024 --seed 2027``: window w from
``SeedSequence(2027).spawn(N)[w]``, so the first 30 of 100 windows are the 30 of ``--windows 30``). The best
heuristic of a cell is the one with the lowest mean over the windows used; the paired difference learned − best is
given with its 95 % Student-t CI, for the first ``first`` windows and for all of them. Window starts are drawn
independently and uniformly over the trace's 20,000 jobs, so windows overlap (100 windows of 1,024 jobs cover each
job about 5 times): the windows are i.i.d. draws of "a random 1,024-job window of this trace", and the CI is about
that trace's windows, not about other draws of the generator. Writes every window's value to ``--out`` (JSON) after
every cell; a second run evaluates only the cells not there yet (``--redo``: those of ``--models`` again).

``--cooldown C``: each window is 1,024 measured jobs followed by C more that arrive and run but are not measured
(windows of 1,024 + C jobs, placed as above; the value of a window is the mean bounded slowdown of its first 1,024
jobs). Without it, the last arrival of a window ends the workload: a job deferred past it waits only for the jobs
already there, while in a running system later jobs keep arriving. A policy that defers wide or long jobs to the
window's drain gains there what it would not gain in a running system (the end effect of a finite workload; cf.
Frachtenberg & Feitelson, "Pitfalls in parallel job scheduling evaluation", JSSPP 2005). The measured jobs are the
same kind of window, so the two tables are comparable; their difference is what the drain gives each policy. Default
out: ``results/hpc_cells_cooldown.json``.

The second verdict, ``makespan``: the paired mean of learned / best − 1 of the windows' makespans (the best heuristic
of the bounded slowdown, all windows; 95 % CI, in percent), so that a bounded-slowdown win bought by deferring work to
the window's drain cannot be read as a plain win. Cells recorded before it was added show "-" (``--redo`` with
``--models`` evaluates those models' cells again; the heuristics' makespans are computed once per trace).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CELLS = {
    "i": "lublin_256_heldout", "ii": "lublin_256_seed7", "iii": "lublin_256_high_load", "iv": "lublin_1024",
}
MEASURED = 1024
"""Measured jobs per window."""

MODELS = ("hpc_pick", "hpc_pick_easy", "hpc_pick_gated", "hpc_pick_v1", "hpc_pick_est", "hpc_pick_est_acc",
          "hpc_pick_easy_v1", "hpc_pick_easy_est", "hpc_pick_easy_est_acc", "hpc_pick_easy_est_sizes",
          "hpc_pick_easy_est_mean", "hpc_pick_easy_est_saf", "hpc_pick_easy_est_saf_mlp", "hpc_pick_easy_mixed",
          "hpc_pick_long", "hpc_pick_easy_long", "hpc_pick_easy_gated", "hpc_pick_long_makespan",
          "hpc_pick_easy_makespan", "hpc_pick_easy_gated_makespan")
"""The recorded models, the two of ``hpc_select.py``'s choice first (``hpc_pick``, ``hpc_pick_easy``)."""


def paired(learned: np.ndarray, best: np.ndarray) -> tuple[float, float, int]:
    """(mean, 95 % CI half-width) of learned − best, and the windows where learned is lower."""
    from msjgym.evaluate.intervals import t_interval

    d = t_interval(learned - best)
    return d.mean, d.ci95, int((learned < best).sum())


def makespan_text(mean: float, ci95: float) -> str:
    """The makespan column: the paired relative difference in percent and whether it is longer, shorter or a tie."""
    verdict = "longer" if mean - ci95 > 0 else "shorter" if mean + ci95 < 0 else "tie"
    return f"{100 * mean:+.1f} ± {100 * ci95:.1f} % ({verdict})"


def main(argv: list[str] | None = None) -> int:
    import train  # baselines/train.py: the recipes' baselines

    import msjgym
    from msjgym.evaluate.intervals import t_interval

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=100)
    parser.add_argument("--first", type=int, default=30)
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--redo", action="store_true", help="evaluate the cells of --models already in --out again")
    parser.add_argument("--estimates", nargs="+", default=["exact", "tsafrir"], choices=["exact", "tsafrir"])
    parser.add_argument("--cooldown", type=int, default=0, help="unmeasured jobs after each window's 1,024 (0..20,000)")
    parser.add_argument("--out", type=Path, default=None,
                        help="default results/hpc_cells.json (results/hpc_cells_cooldown.json with --cooldown)")
    args = parser.parse_args(argv)
    if not 2 <= args.first <= args.windows:
        raise SystemExit(f"--first {args.first}: must be in [2, --windows = {args.windows}]")
    if not 0 <= args.cooldown <= 20_000:
        raise SystemExit(f"--cooldown {args.cooldown}: must be in [0, 20000] (jobs)")
    if args.out is None:
        args.out = HERE / "results" / ("hpc_cells_cooldown.json" if args.cooldown else "hpc_cells.json")
    run = {"seed": 2027, "windows": args.windows, "window_jobs": MEASURED + args.cooldown, "bsld_threshold": 10.0,
           "references": False}

    def values(policy: object, scenario: object, **extra: object) -> tuple[np.ndarray, np.ndarray]:
        """float64[windows] twice: each window's mean bounded slowdown of its first MEASURED jobs, and its makespan
        (seconds from the window's first arrival to its last completion, unmeasured jobs included)."""
        result = msjgym.evaluate(scenario, policy, **run, **extra)
        makespan = np.asarray([r["makespan"] for r in result.replications])
        if not args.cooldown:
            return np.asarray([r["bounded_slowdown"] for r in result.replications]), makespan
        jobs = result.per_job
        out = []
        for w in range(args.windows):
            mine = jobs["window"] == w
            first = np.argsort(jobs["job"][mine], kind="stable")[:MEASURED]
            out.append(float(jobs["bounded_slowdown"][mine][first].mean()))
        return np.asarray(out), makespan

    record: dict = {"windows": args.windows, "first": args.first, "window_jobs": MEASURED, "cooldown": args.cooldown,
                    "seed": 2027, "cells": {}, "heuristics": {}, "heuristic_makespans": {}}
    if args.out.is_file():  # the cells done (unless --redo: those of --models) and the heuristics' windows are kept
        old = json.loads(args.out.read_text())
        if (old["windows"], old["first"], old.get("cooldown", 0)) == (args.windows, args.first, args.cooldown):
            record["cells"] = {k: v for k, v in old["cells"].items()
                               if not (args.redo and k.split("/")[0] in args.models)}
            record["heuristics"] = old.get("heuristics", {})
            record["heuristic_makespans"] = old.get("heuristic_makespans", {})
    heuristics_done = {k: {p: np.asarray(v) for p, v in h.items()} for k, h in record["heuristics"].items()}
    makespans_done = {k: {p: np.asarray(v) for p, v in h.items()} for k, h in record["heuristic_makespans"].items()}
    lines = ["| model | estimates | cell | learned | best heuristic | paired, first {0} | paired, all {1} | makespan |"
             .format(args.first, args.windows), "|---|---|---|---|---|---|---|---|"]
    for name in args.models:
        model = HERE / "results" / f"{name}.zip"
        if not model.is_file():
            print(f"{model}: missing, skipped", flush=True)
            continue
        config = train.load_config(HERE / f"{name}.toml")
        backfill = config["env"]["backfill"]
        for estimates in args.estimates:
            for cell, stem in CELLS.items():
                if f"{name}/{estimates}/{cell}" in record["cells"]:
                    continue
                trace = HERE / "scenarios" / (stem + ("_tsafrir" if estimates == "tsafrir" else "") + ".toml")
                scenario = msjgym.load_scenario(str(trace), {})
                key = f"{backfill} {trace.name}"
                if key not in makespans_done:  # the windows' bounded slowdowns and makespans of the six heuristics
                    both = {b.label: values(b, scenario) for b in train.baseline_policies(config["evaluate"])}
                    for label, (bsld, _) in both.items():  # recorded before the makespans: must be the same runs
                        if key in heuristics_done and not np.allclose(heuristics_done[key][label], bsld, rtol=1e-9):
                            raise SystemExit(f"{key} {label}: the recorded windows differ from this run's")
                    heuristics_done[key] = {k: v[0] for k, v in both.items()}
                    makespans_done[key] = {k: v[1] for k, v in both.items()}
                    for field, done in (("heuristics", heuristics_done), ("heuristic_makespans", makespans_done)):
                        record[field][key] = {k: v.tolist() for k, v in done[key].items()}
                heuristics = heuristics_done[key]
                learned, learned_makespan = values(f"sb3:{model}", scenario, progress=False)
                row = {"learned": learned.tolist(), "learned_makespan": learned_makespan.tolist(), "heuristics": key}
                parts = []
                for n in (args.first, args.windows):
                    best = min(heuristics, key=lambda k: heuristics[k][:n].mean())
                    mean, ci, lower = paired(learned[:n], heuristics[best][:n])
                    row[f"paired_{n}"] = {"best": best, "mean": mean, "ci95": ci, "lower_on": lower}
                    verdict = "win" if mean + ci < 0 else "loss" if mean - ci > 0 else "tie"
                    parts.append(f"{mean:+.1f} ± {ci:.1f} vs {best.split('order=')[1].split(',')[0]} ({verdict}; "
                                 f"lower on {lower}/{n})")
                best = min(heuristics, key=lambda k: heuristics[k].mean())
                ratio = t_interval(learned_makespan / makespans_done[key][best] - 1.0)
                row["makespan_vs_best"] = {"mean": ratio.mean, "ci95": ratio.ci95}
                row["line"] = (f"| {name} | {estimates} | ({cell}) | {learned.mean():.1f} | "
                               f"{best.split('order=')[1].split(',')[0]} {heuristics[best].mean():.1f} | "
                               + " | ".join(parts) + f" | {makespan_text(ratio.mean, ratio.ci95)} |")
                record["cells"][f"{name}/{estimates}/{cell}"] = row
                print(row["line"], flush=True)
                _write(args.out, record, lines)  # after every cell: a long run keeps what it has done
    _write(args.out, record, lines)
    print("\n" + record["table"] + f"\n\nwrote {args.out}")
    return 0


def _write(out: Path, record: dict, lines: list[str]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    order = {m: i for i, m in enumerate(MODELS)}
    keys = sorted(record["cells"], key=lambda k: (order.get(k.split("/")[0], 99), k.split("/")[1],
                                                  list(CELLS).index(k.split("/")[2])))
    record["table"] = "\n".join(lines + [record["cells"][k]["line"] + ("" if "learned_makespan" in record["cells"][k]
                                                                      else " - |") for k in keys])
    out.write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    sys.exit(main())
