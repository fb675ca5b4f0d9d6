"""``msjgym reproduce lb-tables``: Tables 1–4 of the bounded-queue load-balancer paper, simulated and solved again.

For each of the 16 settings (push, water filling, pull, resource pooling × 4 job-size laws) and each N of
``--servers`` (default 100 and 1,000): the paper's protocol — ``reps`` (20) replications from an empty system
of N·10⁴ arrivals (``--arrivals`` overrides), the first 10 % warm-up — and the cavity value "∞"
(:func:`msjgym.systems.dispatch.paper_tables.cavity_column`). Water filling uses M = C·log₁₀ N (so N must be a power of 10 for the
table's C) and K = (δ/λ)M; pull uses δ₁ = 0, δ₀ = δ/(1 − λ) (docs/modelling-choices.md#lb-table-3-pull-rates).

Each (setting, N, replication) is one task of the sweep runner (:func:`msjgym.evaluate.sweep.run_task`: one
``msjgym.evaluate`` of the table's scenario with one replication; :func:`msjgym.evaluate.sweep.make_backend`: a local
process pool on every core by default, or Ray), seeded by :func:`msjgym.evaluate.sweep.task_seed` from the root seed
and the task alone, so results do not depend on the backend or on which other rows run; the replications of a row
are summarized by :func:`msjgym.evaluate.store.summarize` (Student-t 95 % CIs). Verdict per row: ours within the
combined 95 % CIs of the paper's printed value (water filling: within 2 %, docs/modelling-choices.md#lb-water-filling);
"protocol differs" when reps or arrivals are not the paper's.

Writes ``lb-tables.csv`` (every number) and ``lb-tables.md`` (paper's sim ± CI, ours ± CI, cavity ours vs paper,
rel. errors, verdict).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

from tqdm import tqdm

from msjgym.api import Option, load_scenario
from msjgym.core import limits
from msjgym.core.estimates import Estimate
from msjgym.errors import MsjgymError
from msjgym.evaluate import sweep
from msjgym.evaluate.evaluator import evaluate
from msjgym.evaluate.store import TaskRow, summarize
from msjgym.reproduce.common import CsvTable, Settings
from msjgym.systems.dispatch.paper_tables import TableRow, cavity_column, rows_for, settings as table_settings
from msjgym.systems.dispatch.scenarios import TABLE_SCENARIOS
from msjgym.systems.dispatch.scorecard import paper_agreement

PAPER_SERVERS = (100, 1000)
PAPER_REPS = 20
CALIBRATION_ARRIVALS = 100_000
WARMUP_FRACTION = 0.1
"""The paper's protocol: the first 10 % of a replication's arrivals are not measured."""
SCENARIOS = {table: name for name, table in TABLE_SCENARIOS.items()}
"""Table number -> its built-in scenario."""


def scenario_params(row: TableRow) -> dict:
    """The overrides of the row's table scenario that make it the row's setting (at ``row.servers``): N, the law, λ,
    δ or p; water filling's C (M = C·log₁₀ N); pull with δ₁ = 0."""
    out: dict = {"servers": row.servers, "dist": row.dist, "lam": row.lam}
    out["p" if row.policy == "resource-pooling" else "delta"] = row.param
    if row.policy == "pull":
        out["delta1"] = 0.0
    if row.policy == "water-filling":
        out["C"] = row.batch_scale
    return out


def point(row: TableRow, arrivals: int) -> dict:
    """A task's point: what identifies the row and its run length (the task seed's key)."""
    return {"table": row.table, "dist": row.dist, "servers": row.servers, "arrivals": arrivals}


class _Collector:
    """Gathers the finished tasks' rows (the ``store`` of :func:`sweep.run_tasks`)."""

    def __init__(self) -> None:
        self.rows: list[TaskRow] = []

    def add(self, row: TaskRow) -> None:
        self.rows.append(row)


def plan(settings: Settings) -> list[sweep.Task]:
    """Every (setting, N, replication) task, replication-major (a run stopped early covers every row)."""
    servers = settings.option(OPTIONS, "servers") or PAPER_SERVERS
    rows = []
    for n in servers:
        for row in table_settings():
            at_n = replace(row, servers=n)
            try:
                scenario = load_scenario(SCENARIOS[row.table], scenario_params(at_n))
            except MsjgymError as exc:
                raise MsjgymError(f"--servers {n}: Table {row.table} {row.label}: {exc}") from None
            rows.append((at_n, scenario))
    runs = []
    for row, scenario in rows:
        arrivals = settings.option(OPTIONS, "arrivals") or row.servers * 10_000
        warmup = int(round(WARMUP_FRACTION * arrivals))  # --jobs counts measured arrivals, the warm-up on top
        runs.append(sweep.Task(scenario=scenario, point=point(row, arrivals), policy=row.policy, rep=0,
                               jobs=arrivals - warmup, warmup=warmup, warmup_option=warmup, batches=20,
                               seed=settings.seed,
                               task_seed=0))
    return sweep.replicate(runs, settings.reps)


def estimate_seconds(tasks: list[sweep.Task], workers: int) -> float:
    """Compiled-loop time of ``tasks`` on ``workers`` cores, from one short run per setting (rough: the cost per
    arrival grows slowly with N)."""
    per_arrival: dict[tuple, float] = {}
    for task in tasks:
        key = (task.point["table"], task.point["dist"], task.point["servers"])
        if key not in per_arrival:
            n = min(task.jobs, CALIBRATION_ARRIVALS)
            res = evaluate(task.scenario, task.policy, reps=1, jobs=n, warmup=0, seed=0, references=False)
            per_arrival[key] = res.wall_seconds / n
    return sum(per_arrival[(t.point["table"], t.point["dist"], t.point["servers"])] * (t.jobs + t.warmup)
               for t in tasks) / max(workers, 1)


def _verdict(ours: Estimate, paper: TableRow | None, protocol: bool) -> str:
    if paper is None:
        return "no printed row at this N"
    agrees, how = paper_agreement(ours, paper)
    tolerance = "2 %" if paper.policy == "water-filling" else "combined CI"
    text = how if agrees is None else f"{'within' if agrees else 'NOT within'} {tolerance}"
    return text + ("" if protocol else " (protocol differs: fewer reps or arrivals)")


def tabulate(tasks: list[sweep.Task], collected: _Collector, settings: Settings) -> CsvTable:
    """One CSV row per (setting, N) with every replication finished."""
    cavity = {row.setting: value for row, value in cavity_column(table_settings())}
    rows = {(r.table, r.dist): r for r in table_settings()}
    summaries = {(s.point["table"], s.point["dist"], s.point["servers"]): s for s in summarize(collected.rows)}
    table = CsvTable(settings.out / "lb-tables.csv")
    seen: set[tuple] = set()
    for task in tasks:
        key = (task.point["table"], task.point["dist"], task.point["servers"])
        if key in seen:
            continue
        seen.add(key)
        row = replace(rows[key[:2]], servers=task.point["servers"])
        summary = summaries.get(key)
        if summary is None or summary.reps < settings.reps:
            continue
        model = task.scenario.model.model(row.policy)
        ours = summary.metrics["response_time"]
        printed = rows_for(row.table, row.dist, row.servers)
        paper = printed[0] if printed else None
        protocol = settings.reps == PAPER_REPS and task.point["arrivals"] == row.servers * 10_000
        inf = cavity[row.setting]
        table.add(table=row.table, policy=row.policy, distribution=row.label, lam=row.lam,
                  param_name="p" if row.policy == "resource-pooling" else "delta", param=row.param,
                  servers=row.servers, batch_size=model.batch_size or "", sample_size=model.sample_size or "",
                  reps=summary.reps, arrivals=task.point["arrivals"],
                  paper_sim=paper.sim if paper else "", paper_ci95=paper.ci if paper else "",
                  sim=ours.mean, ci95=ours.ci95, cavity=inf, paper_cavity=row.cavity,
                  rel_err_pct=100 * abs(ours.mean - inf) / inf, paper_rel_err_pct=paper.rel_err if paper else "",
                  utilization=summary.metrics["utilization"].mean, message_rate=summary.metrics["message_rate"].mean,
                  verdict=_verdict(ours, paper, protocol))
    return table


def markdown(table: CsvTable, path: Path) -> Path:
    """The CSV rows as a markdown table."""
    def num(x: object, fmt: str) -> str:
        return "" if x == "" else format(x, fmt)

    lines = ["| table | distribution | λ | δ or p | N | paper sim ± CI | ours ± CI | ∞ ours | ∞ paper | rel. err. % "
             "ours | rel. err. % paper | verdict |", "|" + "---|" * 12]
    for r in table.rows:
        paper = "" if r["paper_sim"] == "" else f"{r['paper_sim']:.4f} ± {r['paper_ci95']:.2e}"
        lines.append(f"| {r['table']} ({r['policy']}) | {r['distribution']} | {r['lam']:g} | {r['param']:g} | "
                     f"{r['servers']} | {paper} | {r['sim']:.4f} ± {r['ci95']:.2e} | {r['cavity']:.4f} | "
                     f"{r['paper_cavity']:.4f} | {r['rel_err_pct']:.4f} | {num(r['paper_rel_err_pct'], '.4f')} | "
                     f"{r['verdict']} |")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min" if seconds < 7200 else \
        f"{seconds / 3600:.1f} h"


def reproduce(settings: Settings) -> list[Path]:
    backend, workers = settings.option(OPTIONS, "backend"), settings.option(OPTIONS, "workers")
    if backend == "ray":
        sweep.import_ray()     # a one-line error now if Ray is missing, not after the calibration
    tasks = plan(settings)
    args = argparse.Namespace(backend=backend, workers=workers, address=None)
    workers = workers or os.cpu_count() or 1
    seconds = estimate_seconds(tasks, workers)
    servers = sorted({t.point["servers"] for t in tasks})
    print(f"lb-tables: 16 settings x N in {servers} x {settings.reps} replications = {len(tasks)} tasks "
          f"({backend}, {workers} workers); estimated compiled-loop time {_duration(seconds)}",
          file=sys.stderr, flush=True)
    collected = _Collector()
    start = time.perf_counter()
    with tqdm(total=len(tasks), unit="task", file=sys.stderr, disable=not settings.progress, desc="lb-tables",
              dynamic_ncols=True) as bar:
        sweep.run_tasks(tasks, sweep.make_backend(args, sweep.run_task), collected, bar)
    print(f"lb-tables: ran {len(tasks)} tasks in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    table = tabulate(tasks, collected, settings)
    return [table.write(), markdown(table, settings.out / "lb-tables.md")]


OPTIONS = (
    Option("servers", "the N to simulate, in servers (default 100,1000; the paper also has 10000,100000)", int,
           low=2, high=limits.MAX_SERVERS, many=True, metavar="N[,N...]"),
    Option("arrivals", "arrivals per replication (default N·10^4, the paper's; less for a quick check)", int, low=1,
           high=limits.MAX_JOBS),
    Option("backend", "where the tasks run: a local process pool or Ray (pip install \"msjgym[ray]\")", str,
           default="local", choices=("local", "ray")),
    Option("workers", "worker processes (default: every core; 1 runs in this process)", int, low=1,
           high=limits.MAX_REPS),
)
"""``msjgym reproduce lb-tables``'s own options (:class:`~msjgym.reproduce.common.Settings`.options)."""
