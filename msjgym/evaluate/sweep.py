"""``msjgym sweep``: run a policy comparison over a grid of scenario parameters, resumably, on several cores.

    msjgym sweep SCENARIO --grid load=0.5:0.95:10 --grid servers=16,32,64 --policy fcfs,server-filling \\
        --reps 20 --jobs 100000 --out results/ [--seed S] [--backend local|ray] [--workers N]

    msjgym sweep TRACE.toml --grid order=fcfs,sjf,f1 --grid backfill=none,easy,conservative --windows 30 \\
        --window-jobs 256 --baseline "order=fcfs,backfill=easy" [--metric M,...] [--csv FILE.csv] --out DIR

* **Grid**: each ``--grid NAME=...`` is one axis; the points are their Cartesian product. ``NAME=a:b:k`` is k
  evenly spaced values from a to b inclusive (``numpy.linspace``, rounded to 12 significant digits; ints when a and
  b are ints and every value is integral), ``NAME=v1,v2,...`` a list, ``NAME=v`` one value; values are parsed like
  ``--param`` values (TOML: ``16`` is an int, ``0.5`` a float, ``[0.2,0.8]`` a list). NAME is a scenario override
  key (a built-in's parameter or a dotted TOML path), a parameter of a built-in policy (``order``, ``backfill`` of
  ``priority``: the policy is bound with it at each point; without ``--policy``, the one built-in that declares the
  keys), or ``policy`` (the policies as an axis). ``--param`` fixes further keys for every point.
* **Run lengths**: the family's defaults for the scenario unless given (a trace: its jobs, one exact replay; with
  ``--windows N --window-jobs M``, N windows, each one task, window r the same jobs in every row); only the flags
  given are checked against one another.
* **Tables**: an overview, then one table per ``--metric`` with each row's mean ± 95 % CI and its paired difference
  from the ``--baseline`` row (replication r against replication r: for a trace, the same window) with the
  Student-t CI of the differences; ``--csv`` writes them all in long format.
* **Validation** happens before anything runs: every point's scenario is loaded and every policy is checked against
  every point's model; a policy that cannot run on a point is an error, or, with ``--skip-invalid``, a warning and
  that (point, policy) is left out.
* **Tasks**: each (point, policy, replication r) is one independent task. Its seed comes from
  ``SeedSequence(root_seed, spawn_key=(h(point), h(policy), r))`` with h a 32-bit SHA-256 hash of the point's
  canonical JSON and of the policy's name, so a task's numbers do not depend on the grid's order or extent, nor on
  the backend or the order tasks finish in; a replication of a task is ``evaluate(..., reps=1, seed=task_seed)``.
* **Results**: ``DIR/results.sqlite`` (:class:`~msjgym.evaluate.store.ResultStore`), one row per task, written by
  the main process as each task finishes. Rerunning the same command (or a larger grid) skips finished tasks.
* **Backends**: ``local`` (a pool of ``--workers`` processes forked from a forkserver; ``--workers 1`` runs in this process) or
  ``ray`` (one Ray task per sweep task, on a local Ray instance, or with ``--address HOST:PORT`` on a running
  cluster whose nodes have msjgym installed; a cluster with token authentication, the default of ``ray start`` in
  recent Ray, also needs ``RAY_AUTH_MODE=token`` in the environment of the sweep).
* **Ctrl-C** stops the sweep, keeps every finished task and exits with status 130.
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import logging
import math
import multiprocessing
import os
import signal
import socket
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Collection, Hashable, Iterator, Mapping, Sequence
from concurrent import futures
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from tqdm import tqdm

from msjgym import api
from msjgym.api import Scenario
from msjgym.core import limits, validation
from msjgym.core.estimates import Estimate
from msjgym.core.inputs import content_digest, nesting_depth, policy_files, recording, refuse_overwrite
from msjgym.core.limits import MAX_NESTING
from msjgym.core.overrides import parse_override
from msjgym.core.paths import check_output_dir, check_output_file, is_regular_file, path_kind, shown
from msjgym.core.validation import int_at_least, one_line, show
from msjgym.errors import MsjgymError
from msjgym.evaluate import flags
from msjgym.evaluate.evaluator import evaluate
from msjgym.evaluate.store import ANY, ONE_REPLICATION, PointSummary, ResultStore, TaskRow, canonical_point, summarize

RESULTS_FILE = "results.sqlite"
_STORE_FAILED = -1  # _run's status when the results store refused a row (exit status 1)
RAY_INSTALL = 'pip install "msjgym[ray]"'
_GRID_SYNTAX = "expected NAME=a:b:k (k values from a to b), NAME=v1,v2,... or NAME=v"


# =====================================================================================================================
# The grid


def parse_grid(text: str) -> tuple[str, list[Any]]:
    """Parse one ``--grid`` option into (key, values); raises ``MsjgymError`` naming the option."""
    name, sep, raw = text.partition("=")
    name, raw = name.strip(), raw.strip()
    if not sep or not name or not raw:
        raise MsjgymError(f"--grid {show(text)}: {_GRID_SYNTAX}")
    depth = nesting_depth(raw)
    if depth > MAX_NESTING:
        raise MsjgymError(f"--grid {show(name)}: brackets and braces nested {depth:,} levels deep; at most {MAX_NESTING}")
    parts = _split_top_level(raw, ",")
    if len(parts) == 1 and len(_split_top_level(raw, ":")) > 1:
        values = _linspace(text, _split_top_level(raw, ":"))
    else:
        values = [_value(text, part) for part in parts]
    seen: set[str] = set()
    for v in values:
        shown = canonical_point({"v": v})
        if shown in seen:
            raise MsjgymError(f"--grid {show(text)}: value {v!r} appears twice")
        seen.add(shown)
    return name, values


def _split_top_level(raw: str, sep: str) -> list[str]:
    """``raw`` split at ``sep`` outside brackets and quotes, each part stripped."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(raw):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(raw[start:i].strip())
            start = i + 1
    parts.append(raw[start:].strip())
    return parts


def _value(text: str, raw: str) -> Any:
    """One grid value, parsed like a ``--param`` value."""
    if not raw:
        raise MsjgymError(f"--grid {show(text)}: empty value; {_GRID_SYNTAX}")
    try:
        return parse_override(f"v={raw}")[1]
    except MsjgymError:
        raise MsjgymError(f"--grid {show(text)}: {show(raw)} is not a TOML value (number, \"string\", true/false, [list]) "
                          f"nor a bare word") from None


def _linspace(text: str, parts: list[str]) -> list[float | int]:
    """``a:b:k``: k values from a to b inclusive, rounded to 12 significant digits (ints for integral int ranges)."""
    if len(parts) != 3:
        raise MsjgymError(f"--grid {show(text)}: {_GRID_SYNTAX}")
    a, b, k = (_value(text, p) for p in parts)
    if not all(_is_number(x) for x in (a, b)):
        raise MsjgymError(f"--grid {show(text)}: a and b of a:b:k must be finite numbers")
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= limits.MAX_GRID_POINTS:
        raise MsjgymError(f"--grid {show(text)}: k of a:b:k must be an integer in [1, {limits.MAX_GRID_POINTS:,}] "
                          "(the grid's points are listed in memory)")
    values = [float(f"{x:.12g}") for x in np.linspace(a, b, k)]
    if isinstance(a, int) and isinstance(b, int) and all(v.is_integer() for v in values):
        return [int(v) for v in values]
    return values


def _is_number(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def grid_points(axes: Sequence[tuple[str, list[Any]]], fixed: dict[str, Any] | None = None,
                flag_keys: Collection[str] = ()) -> list[dict[str, Any]]:
    """The Cartesian product of the axes (first axis slowest), each point merged into the ``fixed`` overrides (of
    ``--param``, and of the flags that set the scenario keys ``flag_keys``). A grid key that a fixed override also
    sets (the same key, or a table holding it, either way round) is an error naming both as the user gave them."""
    fixed = dict(fixed or {})
    names = [name for name, _ in axes]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise MsjgymError(f"--grid {name}: given twice; put all its values in one --grid")
        for key in fixed:
            if key == name or key.startswith(name + ".") or name.startswith(key + "."):
                given = flags.user_key(key) if key in flag_keys else f"--param {key}"
                raise MsjgymError(f"--grid {name}: also given as {given}; give it once")
    return [fixed | dict(zip(names, combo)) for combo in itertools.product(*(values for _, values in axes))]


# =====================================================================================================================
# Tasks and their seeds


def stable_hash(text: str) -> int:
    """A 32-bit hash of ``text`` that is the same in every process and Python version (SHA-256, first 4 bytes)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")


def task_seed(root_seed: int, point: dict[str, Any], policy: str, rep: int) -> int:
    """The seed of one task: from the root seed and the task's identity only (point, policy, replication).

    ``SeedSequence(root_seed, spawn_key=(h(point), h(policy), rep))``, drawn as a 63-bit integer (64 bits would not
    fit SQLite's INTEGER; 63 make a collision between two tasks of a sweep negligible).
    """
    seq = np.random.SeedSequence(root_seed, spawn_key=(stable_hash(canonical_point(point)), stable_hash(policy), rep))
    return int(seq.generate_state(1, np.uint64)[0] >> np.uint64(1))


@dataclass(frozen=True, eq=False)
class Task:
    """One replication of one policy at one grid point (the loaded scenario travels with it to the worker)."""

    scenario: Scenario
    point: dict[str, Any]
    policy: str
    rep: int
    jobs: int
    warmup: int
    batches: int
    seed: int
    task_seed: int
    warmup_option: int | None = None  # --warmup as given (None: the family's default, ``warmup``)
    inputs: str = ""  # digest of the content of the scenario, the policy, the options and msjgym (Combo.inputs)
    options: tuple[tuple[str, Any], ...] = ()  # the family's switches (RunSettings.options), as (name, value) pairs
    policy_params: tuple[tuple[str, Any], ...] = ()  # the built-in policy's bound parameters (grid keys it declares)
    jobs_option: int | None | bool = True  # the run length evaluate gets: True: ``jobs``; None: the family's default

    def run_settings(self) -> api.RunSettings:
        """The settings :func:`run_task` evaluates this task with (one replication)."""
        return api.RunSettings(reps=1, jobs=self._jobs(), warmup=self.warmup_option, batches=self.batches,
                               options=dict(self.options))

    def _jobs(self) -> int | None:
        return self.jobs if self.jobs_option is True else self.jobs_option  # type: ignore[return-value]

    def policy_object(self) -> Any:
        """What :func:`run_task` evaluates: the policy's name, or the built-in with its bound parameters."""
        if not self.policy_params:
            return self.policy
        return api.policy_spec(self.scenario.family, self.policy).bind(**dict(self.policy_params))

    def key(self) -> tuple:
        """The results-store key (:meth:`TaskRow.key`)."""
        return (self.scenario.name, canonical_point(self.point), self.policy, self.rep, self.jobs, self.warmup,
                self.batches, str(self.seed), self.inputs)


def run_task(task: Task) -> TaskRow:
    """Simulate one task (in a worker or in-process) and return its row; the caller stores it."""
    result = evaluate(task.scenario, task.policy_object(), reps=1, jobs=task._jobs(), warmup=task.warmup_option,
                      batches=task.batches, seed=task.task_seed, references=False, **dict(task.options))
    return TaskRow(
        scenario=task.scenario.name, point=task.point, policy=task.policy, rep=task.rep, jobs=task.jobs,
        warmup=task.warmup, batches=task.batches, seed=task.seed, task_seed=task.task_seed, stable=result.stable,
        growth_rate=float(result.growth_rates[0]) if result.growth_rates else None,
        metrics={k: float(v) for k, v in result.replications[0].items()}, events=int(result.events),
        wall_seconds=float(result.wall_seconds), inputs=task.inputs)


@dataclass(frozen=True, eq=False)
class Combo:
    """One (point, policy) of a sweep: ``grid`` holds the point's grid values (for display), ``point`` every
    override (grid values and ``--param``), ``scenario`` the point's loaded scenario."""

    grid: dict[str, Any]
    point: dict[str, Any]
    policy: str
    scenario: Scenario
    inputs: str = ""
    """Digest of the content of what determines the combination's results (:func:`combo_inputs`)."""
    unread: tuple[str, ...] = ()
    """Grid keys the policy does not read (:func:`msjgym.api.keys_not_read`): it ran once, at ``point``'s values of
    them, for every value; ``grid`` shows :data:`ANY` for them."""


def unread_note(plan: Plan) -> str | None:
    """The note under a sweep's tables when some policy does not read some grid key, naming them and the values its
    one run used; None otherwise."""
    parts = [f"{c.policy} does not read {', '.join(c.unread)} (one run, at {_show_point(c.point, c.unread)}, stands "
             "for every value)" for c in plan.combos if c.unread]
    return f"{ANY}: {'; '.join(dict.fromkeys(parts))}." if parts else None


@dataclass(frozen=True)
class Plan:
    """A validated sweep: the grid's axis names, its (point, policy) combinations in grid order, and the tasks."""

    scenario: str
    axes: list[str]
    combos: list[Combo]
    reps: int
    tasks: list[Task]
    unit: str = "replication"
    """What a replication index names: "replication", "window" (of a trace: the same window in every row) or
    "trace" (drawn from the workload model: the same trace in every row)."""


def make_plan(args: argparse.Namespace) -> Plan:
    """Parse and validate the whole sweep before anything runs (``MsjgymError`` on any bad input).

    A grid key (or ``--param`` key) that the scenario does not take but a built-in policy declares (``order``,
    ``backfill`` of ``priority``) binds that policy's parameter at the point (:func:`msjgym.api.scenario_and_policy`);
    ``--grid policy=A,B`` is a policy axis (as ``--policy A,B``). Run lengths are the family's defaults for the
    scenario unless given (a trace: one exact replay of its jobs, or with ``--windows N --window-jobs M`` N windows
    of M jobs, each window one task: window r is the same for every policy and point, so rows are paired by window).

    Tasks are ordered replication-major (replication 0 of every combination first), so a sweep stopped early has
    covered the whole grid evenly.
    """
    family = api.family_of(args.scenario)
    _check_run_lengths(args)
    options, scenario_keys = flags.family_options(args, family, outputs=False)
    args.options = tuple(sorted(options.items()))
    axes = [parse_grid(text) for text in args.grid]
    axes, axis_policies = _policy_axis(axes, args)
    fixed = flags.scenario_overrides(args.param, scenario_keys)
    policies = _policy_names(args.policy or axis_policies, family, [n for n, _ in axes] + list(fixed))
    _check_size(axes, len(policies), args)
    points = grid_points(axes, fixed, scenario_keys)
    names = [name for name, _ in axes]
    varied = {name for name, values in axes if len(values) > 1}
    combos, tasks, reps_seen, unit = [], [], set(), "replication"
    ran_once: set[tuple[str, str]] = set()  # (policy, the point without the keys it does not read)
    foreign = _foreign_parameters(family, policies)
    start = time.perf_counter()
    for i, point in enumerate(points):
        if i == PLAN_PROBE and len(points) >= LARGE_GRID:  # say what checking every point will cost, measured
            seconds = (time.perf_counter() - start) / PLAN_PROBE * len(points)
            print(f"msjgym: note: checking the {len(points):,} grid points before anything runs (each is loaded and "
                  f"every policy validated on it): about {limits.duration(seconds)} (measured on the first "
                  f"{PLAN_PROBE}; Ctrl-C stops)", file=sys.stderr, flush=True)
        for policy in policies:
            with recording() as files:
                loaded = _load_point(args.scenario, policy, point, names, args.skip_invalid, scenario_keys,
                                     foreign[policy])
            if loaded is None:
                continue
            scenario, bound, dropped = loaded
            if not _applicable(bound, scenario, point, names, args.skip_invalid, args):
                continue
            # a key, or a table whose keys it does not read; or another compared policy's parameter
            not_read = api.keys_not_read(family, scenario, bound) | dropped
            unread = tuple(k for k in names if k in varied and (k in not_read or k.partition(".")[0] in not_read))
            if unread:  # the same runs at every value of these axes: run the policy once across them
                same = (policy, canonical_point({k: v for k, v in point.items() if k not in unread}))
                if same in ran_once:
                    continue
                ran_once.add(same)
            run = api.RunSettings(reps=args.reps, jobs=args.jobs, warmup=args.warmup, batches=args.batches,
                                  options=options)
            reps, jobs, warmup = family.run_length(scenario, policy, run)
            split = getattr(family, "replication_scenarios", None)
            parts = split(scenario, run, args.seed) if split is not None else None
            digest_options = options if parts is None else (
                {k: v for k, v in options.items() if k != "windows"} | {"replications": "one task each"})
            combo = Combo({k: ANY if k in unread else point[k] for k in names}, point, policy, scenario,
                          combo_inputs(args.scenario, scenario, policy, files, digest_options), unread)
            combos.append(combo)
            params = tuple(bound.values) if isinstance(bound, api.PolicySpec) else ()
            run_task_ = Task(scenario, point, policy, 0, jobs, warmup, args.batches, args.seed, 0, args.warmup,
                             combo.inputs, args.options, params, args.jobs)
            if parts is None:
                tasks += replicate([run_task_], reps)
            else:
                each = tuple(sorted(parts[1].items()))
                tasks += [replace(run_task_, scenario=part, rep=r, task_seed=seed, options=each, jobs_option=None)
                          for r, (part, seed) in enumerate(parts[0])]
                unit = "window" if options.get("windows") is not None else "trace"
            reps_seen.add(reps)
    if not combos:
        raise MsjgymError("no (point, policy) left to run: every policy was refused at every point")
    tasks.sort(key=lambda t: t.rep)  # replication-major (a stable sort keeps the grid order within a replication)
    return Plan(args.scenario, names, combos, max(reps_seen), tasks, unit)


def _policy_axis(axes: list[tuple[str, list[Any]]], args: argparse.Namespace
                 ) -> tuple[list[tuple[str, list[Any]]], list[str]]:
    """``--grid policy=A,B`` taken out of the axes as the policies to compare (not with ``--policy``)."""
    named = [values for name, values in axes if name == "policy"]
    if not named:
        return axes, []
    if args.policy:
        raise MsjgymError("--grid policy=...: also given as --policy; name the policies once")
    return [(n, v) for n, v in axes if n != "policy"], [",".join(str(v) for v in named[0])]


def replicate(runs: Sequence[Task], reps: int) -> list[Task]:
    """``reps`` replications of each of ``runs`` (tasks whose ``rep`` and ``task_seed`` are filled in here), as
    tasks ordered replication-major: replication 0 of every run first, so a sweep stopped early has covered every
    run evenly. Replication r of a run draws from :func:`task_seed` of the run's root seed, point, policy and r."""
    return [replace(run, rep=rep, task_seed=task_seed(run.seed, run.point, run.policy, rep))
            for rep in range(reps) for run in runs]


def combo_inputs(name: str, scenario: Scenario, policy: str, files: Sequence[Path],
                 options: dict[str, Any] | None = None) -> str:
    """The digest of everything that determines a (point, policy)'s results besides the run length and seed (in
    the task's key already): the scenario's content (a built-in: its name and parameters; a file: its parameters
    and the content of every file it read, a trace included, not their names), the policy (a built-in: its name; a
    file of the user's: its content and the object's name), the family's switches (``--saturated``, ...; a sweep
    without any keeps the digest of earlier versions, so its stored tasks are found) and msjgym's version."""
    builtin = not is_regular_file(name)
    user = api.is_user_policy(policy)
    return content_digest(
        {"family": scenario.family, "builtin": name if builtin else None, "params": scenario.params,
         "policy": policy.rpartition(":")[2] if user else policy} | ({"options": options} if options else {}),
        list(files) + policy_files(policy))


def _check_run_lengths(args: argparse.Namespace) -> None:
    """--reps, --jobs, --warmup, --batches, --seed within :mod:`msjgym.core.limits`, before any point is loaded."""
    for name, low, high in (("reps", 1, limits.MAX_REPS), ("jobs", 1, limits.MAX_JOBS),
                            ("warmup", 0, limits.MAX_JOBS), ("batches", 1, limits.MAX_BATCHES),
                            ("seed", 0, limits.MAX_SEED)):
        value = getattr(args, name, None)
        if value is not None:
            validation.check_int(f"--{name}", value, low, high)


def _check_size(axes: Sequence[tuple[str, list[Any]]], policies: int, args: argparse.Namespace) -> None:
    """Refuse a grid above :data:`~msjgym.core.limits.MAX_GRID_POINTS` points (or a sweep above
    :data:`~msjgym.core.limits.MAX_SWEEP_TASKS` tasks) before listing it; say the cost of a large one first."""
    points = math.prod(len(values) for _, values in axes)
    shape = " x ".join(f"{len(values):,} {name}" for name, values in axes) or "1"
    if points > limits.MAX_GRID_POINTS:
        raise MsjgymError(f"--grid: {shape} = {points:,} points; must be at most {limits.MAX_GRID_POINTS:,} (the grid "
                          "is listed and every point checked in memory before anything runs): use fewer values")
    reps = args.reps or getattr(args, "windows", None) or DEFAULT_REPS  # the family's own defaults come later
    per_rep = args.jobs or getattr(args, "window_jobs", None) or DEFAULT_JOBS
    tasks = points * policies * reps
    if tasks > limits.MAX_SWEEP_TASKS:
        raise MsjgymError(f"--grid, --policy, --reps: {points:,} points x {policies} policies x {reps:,} "
                          f"replications = {tasks:,} tasks; must be at most {limits.MAX_SWEEP_TASKS:,}")
    jobs = tasks * (per_rep + (per_rep // 10 if args.warmup is None else args.warmup))
    workers = max(1, args.workers or os.cpu_count() or 1) if args.backend == "local" else 1
    seconds = jobs / limits.JOBS_PER_SECOND_CEILING / workers
    if points >= LARGE_GRID or seconds >= LONG_SWEEP_SECONDS:
        print(f"msjgym: note: this sweep is {points:,} points x {policies} policies x {reps:,} replications = "
              f"{tasks:,} tasks, about {jobs:,.3g} jobs: simulating them takes at least {limits.duration(seconds)} "
              f"on {workers} {'worker' if workers == 1 else 'workers'} (at the ceiling of "
              f"{limits.JOBS_PER_SECOND_CEILING:.0e} jobs per second per core), after the grid is checked; Ctrl-C "
              "stops it, keeping finished tasks", file=sys.stderr, flush=True)


DEFAULT_REPS, DEFAULT_JOBS = 10, 100_000
"""Replications and run length the size check assumes when the family's defaults are not known yet (most
families' defaults)."""
PLAN_PROBE = 50
"""Grid points checked before the cost of checking them all is estimated (large grids only)."""
LARGE_GRID = 10**4
"""Grid points from which ``msjgym sweep`` says the sweep's size and cost before checking the points."""
LONG_SWEEP_SECONDS = 3600.0
"""Estimated seconds (a lower bound) from which ``msjgym sweep`` says the cost before starting."""


def _policy_names(options: Sequence[str], family: api.Family, keys: Sequence[str]) -> list[str]:
    """The policies to compare: ``--policy`` (or ``--grid policy=``); when neither is given, the one built-in policy
    of the family that declares every grid or ``--param`` key that is a policy parameter (``order``, ``backfill``:
    ``priority``)."""
    names = list(dict.fromkeys(n.strip() for text in options or () for n in text.split(",") if n.strip()))
    if not names:
        declared = {p.name for spec in family.policies().values() for p in spec.params}
        wanted = [k for k in keys if k in declared]
        owners = [name for name, spec in family.policies().items()
                  if wanted and set(wanted) <= {p.name for p in spec.params}]
        if len(owners) != 1:
            why = (f"the keys {', '.join(wanted)} are parameters of {', '.join(owners) or 'no single built-in'}"
                   if wanted else "no grid key is a policy's parameter")
            raise MsjgymError(f"--policy: give the policies to compare (--policy A,B or --grid policy=A,B); {why}")
        print(f"msjgym: note: --policy {owners[0]} (the built-in whose parameters are {', '.join(wanted)})",
              file=sys.stderr, flush=True)
        names = owners
    for name in names:
        if not api.is_user_policy(name):
            api.policy_spec(family, name)  # PolicyError for an unknown name
    return names


def _show_point(point: dict[str, Any], names: Sequence[str]) -> str:
    return ", ".join(f"{k}={point[k]}" for k in names)


def _foreign_parameters(family: api.Family, policies: Sequence[str]) -> dict[str, frozenset[str]]:
    """For each policy, the parameters of the other compared policies that it does not declare (``order`` of
    ``priority`` for ``first-fit``): where the scenario does not take such a key either, the policy does not read it
    (it runs once across its axis, :attr:`Combo.unread`), rather than the point being refused."""
    return {p: api.foreign_parameters(family, p, among=policies) for p in policies}


def _load_point(scenario: str, policy: str, point: dict[str, Any], names: Sequence[str], skip: bool = False,
                flag_keys: Mapping[str, Any] | None = None, foreign: frozenset[str] = frozenset()
                ) -> tuple[Scenario, Any, frozenset[str]] | None:
    """The point's scenario, the policy with the point's parameters of it, and the keys left out because they are
    another compared policy's parameters (``foreign``) that neither this policy nor the scenario takes; any other key
    neither takes is an error, or with ``skip`` a warning (the combination left out). A key set by a flag
    (``flag_keys``: ``--skip-bad-lines``) that the scenario has not is named by its flag."""
    try:
        try:
            return (*api.scenario_and_policy(scenario, policy, point), frozenset())
        except api.UnknownParameter as exc:
            dropped = frozenset(k for k in point if k in foreign)
            if dropped:
                try:
                    return (*api.scenario_and_policy(scenario, policy, {k: v for k, v in point.items()
                                                                        if k not in dropped}), dropped)
                except api.UnknownParameter:
                    pass  # another key: the error of the whole point below
            named = flags.flag_not_for(exc, flag_keys or {}, scenario)
            if named is not exc:
                raise named from None
            raise
    except MsjgymError as exc:
        where = f"grid point {_show_point(point, names)}: " if names else ""
        if skip and isinstance(exc, api.UnknownParameter):
            print(f"msjgym: warning: skipping {policy}{' at ' + where.rstrip(': ') if where else ''}: {exc}",
                  file=sys.stderr)
            return None
        raise MsjgymError(f"{where}{exc}") from None


def _applicable(policy: Any, scenario: Scenario, point: dict[str, Any], names: Sequence[str], skip: bool,
                args: argparse.Namespace) -> bool:
    """Whether ``policy`` can run at this point; an error unless ``skip`` (then a warning on stderr)."""
    try:
        run = api.RunSettings(reps=args.reps, jobs=args.jobs, warmup=args.warmup, batches=args.batches,
                              options=dict(args.options))
        api.family_of(scenario).validate(scenario, policy, run)
        return True
    except MsjgymError as exc:
        where = f"grid point {_show_point(point, names)}" if names else ""
        label = getattr(policy, "label", policy)
        if not skip:
            raise MsjgymError(f"{where + ': ' if where else ''}{exc} (--skip-invalid leaves such combinations out)"
                              ) from None
        print(f"msjgym: warning: skipping {label}{' at ' + where if where else ''}: {exc}", file=sys.stderr)
        return False


# =====================================================================================================================
# Backends: submit tasks, collect finished rows


class Backend(Protocol):
    capacity: int  # tasks kept in flight

    def submit(self, task: Task) -> Hashable: ...

    def wait(self, handles: list[Hashable]) -> list[tuple[Hashable, TaskRow]]: ...

    def close(self, pending: list[Hashable]) -> None: ...


class InProcess:
    """``--workers 1``: each task runs in this process when waited for (``fn``: the task's function)."""

    capacity = 1

    def __init__(self, fn: Callable[[Any], Any] | None = None) -> None:
        self._fn = fn or run_task
        self._tasks: dict[int, Task] = {}
        self._count = itertools.count()

    def submit(self, task: Task) -> Hashable:
        handle = next(self._count)
        self._tasks[handle] = task
        return handle

    def wait(self, handles: list[Hashable]) -> list[tuple[Hashable, TaskRow]]:
        return [(handles[0], self._fn(self._tasks.pop(handles[0])))]

    def close(self, pending: list[Hashable]) -> None:
        self._tasks.clear()


class LocalPool:
    """``--backend local``: a pool of worker processes forked from a *forkserver* that has imported msjgym once.

    Forking this (threaded) process would be unsafe, and spawning re-imports msjgym in every worker (about a second
    each); the forkserver is a clean single-threaded process, so its forks start at once with msjgym loaded.
    ``fn`` (default :func:`run_task`) is the module-level function each task is given to.
    """

    def __init__(self, workers: int, fn: Callable[[Any], Any] | None = None) -> None:
        self._fn = fn or run_task
        self.capacity = 2 * workers
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["msjgym.evaluate._warm_worker"])
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=context,
                                         initializer=_init_worker, initargs=(os.getpid(),))

    def submit(self, task: Task) -> Hashable:
        return self._pool.submit(self._fn, task)

    def wait(self, handles: list[Hashable]) -> list[tuple[Hashable, TaskRow]]:
        done, _ = futures.wait(handles, return_when=futures.FIRST_COMPLETED)
        first = min(done, key=lambda f: f.exception() is not None)  # store successes before raising a failure
        return [(first, first.result())]

    def close(self, pending: list[Hashable]) -> None:
        if pending:  # interrupted or failed: drop queued tasks and stop the running ones now
            for f in pending:
                f.cancel()
            _terminate_workers(self._pool)
        self._pool.shutdown(wait=True, cancel_futures=True)


def _init_worker(parent: int) -> None:
    """In each worker: leave Ctrl-C to the main process, and exit if the main process dies (e.g. SIGKILL).

    tqdm's default lock (taken by the runner's disabled progress bar) includes a multiprocessing lock, which a
    terminated worker would leak (a resource_tracker warning at exit); a thread lock is all a worker needs.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    tqdm.set_lock(threading.RLock())

    def watch() -> None:
        while _alive(parent):
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="msjgym-parent-watch").start()


def _alive(pid: int) -> bool:
    """Is process ``pid`` running? A killed process whose parent has not reaped it yet (a zombie) is not."""
    if os.path.isdir("/proc/self"):  # Linux: the state letter follows the command name in /proc/PID/stat
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rpartition(")")[2].split()[0] not in ("Z", "X")
        except FileNotFoundError:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _terminate_workers(pool: ProcessPoolExecutor) -> None:
    if hasattr(pool, "terminate_workers"):  # Python 3.14+
        pool.terminate_workers()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()


class RayBackend:
    """``--backend ray``: one Ray task per sweep task, on a local Ray instance or the cluster at ``address``."""

    def __init__(self, address: str | None, workers: int | None, fn: Callable[[Any], Any] | None = None) -> None:
        ray = import_ray()
        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            try:
                ray.init(address=address or "local", include_dashboard=False, logging_level=logging.ERROR,
                         log_to_driver=False, **({"num_cpus": workers} if address is None and workers else {}))
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise MsjgymError(f"--address {address}: cannot start or join Ray: {exc}") from None
        self._remote = ray.remote(num_cpus=1)(fn or run_task)
        self.capacity = 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))

    def submit(self, task: Task) -> Hashable:
        return self._remote.remote(task)

    def wait(self, handles: list[Hashable]) -> list[tuple[Hashable, TaskRow]]:
        done, _ = self._ray.wait(handles, num_returns=1)
        return [(ref, self._ray.get(ref)) for ref in done]

    def close(self, pending: list[Hashable]) -> None:
        for ref in pending:
            self._ray.cancel(ref, force=True)
        if self._started:
            self._ray.shutdown()


def _check_reachable(address: str) -> None:
    """Refuse a HOST:PORT (or ray://HOST:PORT) where nothing listens: Ray would wait for it forever."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto", "local": Ray itself says when there is no cluster
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise MsjgymError(f"--address {address}: nothing answers there ({exc}); start a cluster with "
                          "`ray start --head`, or leave --address out for a local Ray instance") from None


def import_ray() -> Any:
    """The ``ray`` module, or a one-line ``MsjgymError`` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise MsjgymError(f"--backend ray: Ray is not installed; install it with: {RAY_INSTALL}") from None
    return ray


def make_backend(args: argparse.Namespace, fn: Callable[[Any], Any] | None = None) -> Backend:
    """The backend of ``args.backend`` (``args.address``, ``args.workers``) running ``fn`` (default
    :func:`run_task`) on each task."""
    if args.backend == "ray":
        return RayBackend(getattr(args, "address", None), args.workers, fn)
    workers = args.workers or os.cpu_count() or 1
    return InProcess(fn) if workers == 1 else LocalPool(workers, fn)


# =====================================================================================================================
# Running


class _SigintShield:
    """SIGINT raises KeyboardInterrupt as usual, except inside :meth:`protected`, which delays it to the block's end
    (so a finished task's row is never half-written). Installed only in the main thread."""

    def __init__(self) -> None:
        self._protected = False
        self._pending = False
        self._installed = False
        self._previous: Any = None

    def __enter__(self) -> _SigintShield:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:  # None: a handler not set from Python; the default is the closest
            signal.signal(signal.SIGINT, signal.SIG_DFL if self._previous is None else self._previous)

    def _handle(self, signum: int, frame: object) -> None:
        if self._protected:
            self._pending = True
        else:
            raise KeyboardInterrupt

    @contextmanager
    def protected(self) -> Iterator[None]:
        self._protected = True
        try:
            yield
        finally:
            self._protected = False
            if self._pending:
                self._pending = False
                raise KeyboardInterrupt


def run_tasks(tasks: Sequence[Any], backend: Backend, store: Any, bar: tqdm) -> None:
    """Run ``tasks`` on ``backend``, at most ``backend.capacity`` at a time, storing each row as it arrives
    (``store.add(row)``: a :class:`ResultStore`, or any collector).

    On any exception (KeyboardInterrupt included) outstanding work is cancelled and the exception propagates; every
    row stored so far stays stored.
    """
    if not isinstance(backend, InProcess):
        compile_first(tasks)
    todo = iter(tasks)
    pending: dict[Hashable, Task] = {}
    with _SigintShield() as shield:
        try:
            while True:
                for task in itertools.islice(todo, backend.capacity - len(pending)):
                    pending[backend.submit(task)] = task
                if not pending:
                    break
                for handle, row in backend.wait(list(pending)):
                    with shield.protected():
                        store.add(row)
                        del pending[handle]
                    bar.update(1)
        finally:
            backend.close(list(pending))


def compile_first(tasks: Sequence[Any]) -> None:
    """Compile (or load from the cache) the kernels of every distinct (family, policy) of ``tasks`` in this process,
    once, before the tasks fan out: workers on this machine (a process pool, a local Ray instance) then load them
    from the on-disk cache rather than each compiling them, and no task waits for another's compile. Tasks that are
    not :class:`Task` s (another runner's) are left alone."""
    seen: set[tuple[str, str]] = set()
    for task in tasks:
        if not isinstance(task, Task) or (task.scenario.family, task.policy) in seen:
            continue
        seen.add((task.scenario.family, task.policy))
        sim = api.family(task.scenario.family).simulation(task.scenario, task.policy, task.run_settings(), 0)
        note = sim.compile_note()
        if note:
            print(note, file=sys.stderr, flush=True)
        sim.prepare()


# =====================================================================================================================
# Output


def _cell(estimate: Estimate | None) -> str:
    """``mean ± half-width``, rounded to the half-width's second significant digit."""
    if estimate is None or not math.isfinite(estimate.mean):
        return "n/a"
    mean, half = estimate.mean, estimate.ci95
    if estimate.no_ci and not math.isfinite(half):
        return f"{mean:.4g} ± n/a"
    if not math.isfinite(half) or half <= 0:
        return f"{mean:.4g}"
    decimals = max(0, 1 - math.floor(math.log10(half)))
    return f"{mean:.{decimals}f} ± {half:.{decimals}f}"


def format_summary(plan: Plan, rows: list[TaskRow], earlier: set[tuple] | frozenset = frozenset()) -> str:
    """One line per (point, policy) in grid order: the grid values, policy, reps, stability, E[T] ± 95 % CI; when
    some rows were stored by an earlier run (``earlier``: their keys), a column ``from`` says which."""
    summaries: dict[tuple[str, str], PointSummary] = {
        (canonical_point(s.point), s.policy): s for s in summarize(rows)}
    unstable: dict[tuple[str, str], int] = {}
    old: dict[tuple[str, str], int] = {}
    for r in rows:
        key = (canonical_point(r.point), r.policy)
        unstable[key] = unstable.get(key, 0) + (not r.stable)
        old[key] = old.get(key, 0) + (r.key() in earlier)
    marked = any(old.values())
    table = [plan.axes + ["policy", "reps", "stable", "response_time"] + (["from"] if marked else [])]
    for c in plan.combos:
        key = (canonical_point(c.point), c.policy)
        values = [str(c.grid[k]) for k in plan.axes] + [c.policy]
        s = summaries.get(key)
        if s is None:
            table.append(values + ["0", "", ""] + ([""] if marked else []))
            continue
        stable = "yes" if s.stable else f"no ({unstable[key]} of {s.reps})"
        value = (_cell(s.metrics.get("response_time")) if s.stable
                 else f"grows at {_cell(s.growth_rate)} jobs per unit time")
        source = ("earlier run" if old[key] == s.reps else "this run" if not old[key]
                  else f"{old[key]} of {s.reps} reps earlier")
        table.append(values + [str(s.reps), stable, value] + ([source] if marked else []))
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table]
    notes = ["", "response_time: mean ± 95% CI half-width over replications (scenario time unit)."]
    if any(s.reps < 2 for s in summaries.values()):
        notes.append(f"± n/a: {ONE_REPLICATION}.")
    if unread_note(plan):
        notes.append(unread_note(plan))
    if marked:
        notes.append("from: whether a row's replications were run now or stored by an earlier run of this sweep "
                     "(with the same inputs: scenario and policy content, settings, seed, msjgym version).")
    return "\n".join(lines + notes)


def _describe(plan: Plan, args: argparse.Namespace) -> str:
    points = len({canonical_point(c.point) for c in plan.combos})
    policies = len({c.policy for c in plan.combos})
    first = plan.tasks[0]
    what = f"{plan.unit}(s)"
    return (f"sweep    {plan.scenario}: {points} point(s) x {policies} policy(ies) x {plan.reps} {what} = "
            f"{len(plan.tasks):,} tasks; {first.jobs:,} measured jobs (arrivals) each, warm-up {first.warmup:,} on "
            f"top; seed {args.seed}")


TRACE_METRICS = ("waiting_time", "bounded_slowdown", "utilization", "makespan")
"""The paired tables a sweep of trace replays prints by default (its rows have ``bounded_slowdown``)."""
DEFAULT_METRICS = ("response_time",)
"""The paired tables of every other sweep by default."""


def parse_baseline(text: str | None) -> dict[str, Any]:
    """``--baseline "order=fcfs,backfill=easy"`` as {key: value} (values parsed like ``--grid`` values); ``policy=``
    names the policy."""
    if not text:
        return {}
    out: dict[str, Any] = {}
    for part in _split_top_level(text, ","):
        name, sep, raw = part.partition("=")
        if not sep or not name.strip() or not raw.strip():
            raise MsjgymError(f"--baseline {show(text)}: expected KEY=VALUE,KEY=VALUE,... (grid keys, policy=NAME)")
        out[name.strip()] = raw.strip() if name.strip() == "policy" else _value(f"baseline {text}", raw.strip())
    return out


def baseline_combo(plan: Plan, wanted: dict[str, Any]) -> Combo:
    """The combination ``--baseline`` names (every key matching), or the first of the grid by default; a one-line
    error when none or several match."""
    if not wanted:
        return plan.combos[0]
    known = set(plan.axes) | {"policy"} | {k for c in plan.combos for k in c.point if flags.flag_of_key(k) is None}
    for key in wanted:
        if key not in known:
            raise MsjgymError(f"--baseline: {key!r} is not a grid key; valid: {', '.join(sorted(known))}")

    def same(c: Combo, key: str, value: Any) -> bool:
        if key == "policy":
            return c.policy == value
        if key in c.unread:
            return True  # its one run stands for every value of the key
        return key in c.point and canonical_point({"v": c.point[key]}) == canonical_point({"v": value})

    found = [c for c in plan.combos if all(same(c, k, v) for k, v in wanted.items())]
    shown = ",".join(f"{k}={v}" for k, v in wanted.items())
    if len(found) != 1:
        raise MsjgymError(f"--baseline {shown}: matches {len(found)} rows of the sweep; name one row (add its other "
                          f"grid keys: {', '.join(plan.axes + ['policy'])})")
    return found[0]


def _combo_label(plan: Plan, c: Combo) -> str:
    return ", ".join([f"{k}={c.grid[k]}" for k in plan.axes] + [f"policy={c.policy}"])


def _by_rep(plan: Plan, rows: Sequence[TaskRow]) -> dict[tuple[str, str], dict[int, TaskRow]]:
    """Each (point, policy)'s rows by replication (window) index."""
    out: dict[tuple[str, str], dict[int, TaskRow]] = {}
    for r in rows:
        out.setdefault((canonical_point(r.point), r.policy), {})[r.rep] = r
    return out


@dataclass(frozen=True)
class Comparison:
    """One (point, policy) × metric of a sweep against the baseline row: the metric's mean ± 95 % CI over the
    replications (windows), and the paired difference (this row − the baseline, replication by replication:
    replication r of every row ran with the same window of a trace) with its 95 % Student-t CI over the pairs."""

    combo: Combo
    metric: str
    reps: int
    estimate: Estimate | None
    difference: Estimate | None
    pairs: int
    baseline: bool


def compare(plan: Plan, rows: Sequence[TaskRow], metrics: Sequence[str], base: Combo) -> list[Comparison]:
    """Every (combination, metric)'s :class:`Comparison` with ``base``, in grid order then metric order. Unstable
    replications leave the metric out (``estimate`` None)."""
    from msjgym.evaluate.intervals import t_interval

    by = _by_rep(plan, rows)
    ref = by.get((canonical_point(base.point), base.policy), {})
    out = []
    for c in plan.combos:
        mine = by.get((canonical_point(c.point), c.policy), {})
        for m in metrics:
            values = {rep: r.metrics.get(m, math.nan) for rep, r in mine.items() if r.stable}
            finite = np.array([v for v in values.values() if math.isfinite(v)])
            estimate = t_interval(finite) if finite.size and len(finite) == len(mine) else None
            common = sorted(rep for rep in values if rep in ref and ref[rep].stable)
            diffs = np.array([values[rep] - ref[rep].metrics.get(m, math.nan) for rep in common])
            difference = t_interval(diffs) if diffs.size and np.isfinite(diffs).all() else None
            if estimate is not None and finite.size == 1:  # one unit: "± n/a", never a bare value under "± 95% CI"
                estimate = replace(estimate, no_ci=ONE_REPLICATION)
            if difference is not None and diffs.size == 1:
                difference = replace(difference, no_ci=ONE_REPLICATION)
            out.append(Comparison(c, m, len(mine), estimate, difference, len(common), c is base))
    return out


def format_paired(plan: Plan, rows: Sequence[TaskRow], metrics: Sequence[str], base: Combo) -> str:
    """One table per metric: each row's mean ± 95 % CI and its paired difference from the baseline row."""
    comparisons = compare(plan, rows, metrics, base)
    unit = plan.unit
    blocks = []
    for m in metrics:
        table = [plan.axes + ["policy", "n", "mean ± 95% CI", "Δ vs baseline ± 95% CI"]]
        for cmp in (x for x in comparisons if x.metric == m):
            diff = "(baseline)" if cmp.baseline else _cell(cmp.difference)
            table.append([str(cmp.combo.grid[k]) for k in plan.axes] + [cmp.combo.policy, str(cmp.reps),
                         _cell(cmp.estimate), diff])
        widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
        blocks.append(f"{m}:\n" + "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
                                              for row in table))
    paired = (f"the same {unit} index is the same {_SAME[unit]} in every row" if unit in _SAME else
              "each replication has its own seed, so the pairs are independent and the CI is that of a difference "
              "of independent means")
    notes = (f"mean ± 95% CI half-width over each row's {unit}s (Student t; one exact replay: no CI); Δ = row − "
             f"baseline ({_combo_label(plan, base)}), {unit} by {unit} ({paired}), mean ± 95% CI of the "
             "differences; n/a: an unstable replication or a metric the row does not have." +
             (f" {unread_note(plan)}" if unread_note(plan) else ""))
    import textwrap

    return "\n\n".join(blocks) + "\n\n" + textwrap.fill(notes, 118)


_SAME = {"window": "window of the trace", "trace": "drawn trace"}
"""What replication r of every row shares, by the plan's unit."""


def default_metrics(plan: Plan) -> tuple[str, ...]:
    """The paired tables printed when ``--metric`` is not given: :data:`TRACE_METRICS` when the sweep replays a
    trace (every family's Poisson runs report a bounded slowdown too, so the rows do not tell), else
    :data:`DEFAULT_METRICS`."""
    replays = any(getattr(c.scenario.model, "trace", None) is not None for c in plan.combos)
    return TRACE_METRICS if replays else DEFAULT_METRICS


CSV_COLUMNS = ("metric", "n", "mean", "ci95", "baseline", "diff_mean", "diff_ci95", "pairs")
"""The columns of ``--csv`` after the grid keys and the policy (long format: one row per combination × metric)."""


def write_csv(path: Path, plan: Plan, rows: Sequence[TaskRow], base: Combo) -> None:
    """``--csv``: every (combination, metric) of the sweep in long ("tidy") format, one row each: the grid keys, the
    policy, the metric, the replications n, the mean and its 95 % CI half-width, the baseline row's label, the
    paired difference from the baseline and its 95 % CI half-width, the number of pairs (empty: not available).
    ``pandas.read_csv(path)`` loads it; ``df.pivot_table(index=[...], columns="metric", values="mean")`` widens it."""
    import csv

    metrics = list(dict.fromkeys(m for r in rows for m in r.metrics))
    label = _combo_label(plan, base)
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(plan.axes + ["policy", *CSV_COLUMNS])
        for cmp in compare(plan, rows, metrics, base):
            est, diff = cmp.estimate, cmp.difference
            out.writerow([cmp.combo.grid[k] for k in plan.axes] + [
                cmp.combo.policy, cmp.metric, cmp.reps, _num(est and est.mean), _num(est and est.ci95), label,
                _num(diff and diff.mean), _num(diff and diff.ci95), cmp.pairs])


def _num(x: float | None) -> str:
    return "" if x is None or not math.isfinite(x) else repr(float(x))


def _backend_name(args: argparse.Namespace) -> str:
    if args.backend == "ray":
        return f"ray ({args.address or 'local instance'})"
    workers = args.workers or os.cpu_count() or 1
    return "local, in-process" if workers == 1 else f"local, {workers} worker processes"


# =====================================================================================================================
# Command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``msjgym sweep``."""
    positive, nonnegative = int_at_least(1), int_at_least(0)
    parser.add_argument("scenario", help=flags.SCENARIO_HELP)
    parser.add_argument("--grid", action="append", default=[], metavar="NAME=VALUES",
                        help="a grid axis (repeatable; points are the Cartesian product): NAME=a:b:k (k evenly "
                             "spaced values from a to b), NAME=v1,v2,... or NAME=v; NAME is a scenario key; at "
                             "most 10^6 points in all (docs/limits.md)")
    parser.add_argument("--policy", action="append", default=None, metavar="NAME[,NAME...]",
                        help="policies to compare, comma-separated or repeated (see `msjgym list`); or --grid "
                             "policy=A,B; default: the one built-in whose parameters the grid names (order, "
                             "backfill: priority)")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="fix a scenario key at every point (repeatable)")
    parser.add_argument("--reps", type=positive, default=None,
                        help="replications per point and policy (default: the family's, 10 for most; a trace: one "
                             "exact replay, or --windows N)")
    parser.add_argument("--jobs", type=positive, default=None,
                        help="measured jobs (arrivals) per replication, warm-up on top (default: the family's, "
                             "100000 for most; a trace: its jobs)")
    parser.add_argument("--warmup", type=nonnegative, default=None,
                        help="jobs (arrivals) discarded at the start of each replication, on top of --jobs "
                             "(default: the family's, jobs/10 for most; a trace: 0)")
    parser.add_argument("--batches", type=positive, default=20, help="measurement batches per replication")
    parser.add_argument("--seed", type=nonnegative, default=0,
                        help="root seed (default 0; fixed so that rerunning the command resumes the sweep)")
    parser.add_argument("--out", required=True, metavar="DIR", help=f"output folder; results in DIR/{RESULTS_FILE}")
    parser.add_argument("--backend", choices=("local", "ray"), default="local",
                        help="local: a process pool on this machine (default); ray: Ray tasks "
                             f"(optional dependency: {RAY_INSTALL})")
    parser.add_argument("--workers", type=positive, default=None,
                        help="local: worker processes (default: CPU count; 1 runs in this process); "
                             "ray: CPUs of the local Ray instance (default: all)")
    parser.add_argument("--address", default=None,
                        help="ray: HOST:PORT of a running Ray cluster, or auto for the one started on this machine "
                             "(default: start a new local Ray instance)")
    parser.add_argument("--skip-invalid", action="store_true",
                        help="leave out (point, policy) combinations the policy cannot run on, with a warning, "
                             "instead of refusing the sweep")
    parser.add_argument("--metric", action="append", default=[], metavar="NAME[,NAME...]",
                        help="metrics of the paired tables (default: response_time; trace replays: "
                             f"{','.join(TRACE_METRICS)})")
    parser.add_argument("--baseline", default=None, metavar="KEY=VALUE[,...]",
                        help="the row the paired differences are taken against, by its grid values (e.g. "
                             "\"order=fcfs,backfill=easy\", policy=NAME; default: the first row)")
    parser.add_argument("--csv", default=None, metavar="FILE.csv",
                        help="also write every (grid point, policy) x metric as one CSV row (long format: mean, CI "
                             "half-width, paired difference from the baseline and its CI)")
    parser.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    flags.add_flags(parser, flags.family_flags(), outputs=False)


def command(args: argparse.Namespace) -> int:
    """Run ``msjgym sweep``; returns the exit status (0; 130 when interrupted; 1 when a worker process died).

    Bad input raises ``MsjgymError`` before anything runs or any file is created.
    """
    if args.address is not None and args.backend != "ray":
        raise MsjgymError("--address: only with --backend ray")
    if args.backend == "ray":
        import_ray()
        if args.address:
            _check_reachable(args.address)
    out = check_output_dir(args.out, "--out")  # absolute: a policy that changes folder does not move it
    path = out / RESULTS_FILE
    kind, what = path_kind(path)
    if kind in ("special", "unusable"):
        raise MsjgymError(f"--out {shown(args.out)}: {RESULTS_FILE} there is {what}; give another folder")
    csv_path = check_output_file(args.csv, "--csv") if getattr(args, "csv", None) else None
    if csv_path is not None and csv_path.suffix.lower() != ".csv":
        raise MsjgymError(f"--csv {shown(args.csv)}: give a file name ending in .csv")
    metrics = [m.strip() for text in getattr(args, "metric", []) for m in text.split(",") if m.strip()]
    with recording() as files:
        plan = make_plan(args)
    base = baseline_combo(plan, parse_baseline(getattr(args, "baseline", None)))
    inputs = files + [f for name in dict.fromkeys(c.policy for c in plan.combos) for f in policy_files(name)]
    if is_regular_file(args.scenario):
        inputs.append(Path(args.scenario).expanduser())
    refuse_overwrite({"--out": out / RESULTS_FILE} | ({"--csv": csv_path} if csv_path else {}), inputs)
    if kind != "missing":
        ResultStore(path, label="--out").close()  # refuse a foreign or damaged file before the work
    print(_describe(plan, args), flush=True)
    with ResultStore(path, label="--out") as store:
        done_keys = store.done_keys()
        todo = [t for t in plan.tasks if t.key() not in done_keys]
        earlier = {t.key() for t in plan.tasks} - {t.key() for t in todo}
        named = {k[:-1] for k in done_keys}
        changed = sum(1 for t in todo if t.key()[:-1] in named)
        why = (f" ({changed:,} stored under the same names were computed from other inputs: an edited scenario or "
               "policy file, or another msjgym version; they are recomputed)" if changed else "")
        print(f"results  {path}: {len(plan.tasks) - len(todo):,} of {len(plan.tasks):,} tasks already done; "
              f"running {len(todo):,} ({_backend_name(args)}){why}", flush=True)
        start = time.perf_counter()
        status = _run(plan, todo, args, store)
        if status:
            finished = len({t.key() for t in plan.tasks} & store.done_keys())
            what = {130: "interrupted", _STORE_FAILED: "stopped"}.get(
                status, "error: a worker process died (out of memory?)")
            status = 1 if status == _STORE_FAILED else status
            print(f"msjgym: {what}: {finished} of {len(plan.tasks)} tasks done (results in {path}); "
                  "rerun the same command to resume", file=sys.stderr)
            return status
        wanted = {t.key() for t in plan.tasks}
        rows = [r for r in store.rows(superseded=True) if r.key() in wanted]
    print(f"ran      {len(todo):,} tasks in {time.perf_counter() - start:.1f} s\n")
    print(format_summary(plan, rows, earlier))
    chosen = metrics or default_metrics(plan)
    missing = [m for m in chosen if not any(m in r.metrics for r in rows)]
    if missing and metrics:  # a default the rows do not have is left out without a word
        names = ", ".join(dict.fromkeys(m for r in rows for m in r.metrics if "[" not in m))
        print(f"msjgym: warning: --metric {', '.join(missing)}: not measured by this sweep; measured: {names}",
              file=sys.stderr)
    print("\n" + format_paired(plan, rows, [m for m in chosen if m not in missing] or DEFAULT_METRICS, base))
    print(f"\nresults  {path}")
    if csv_path is not None:
        write_csv(csv_path, plan, rows, base)
        print(f"table    {csv_path} (one row per grid point, policy and metric)")
    return 0


def _run(plan: Plan, todo: list[Task], args: argparse.Namespace, store: ResultStore) -> int:
    """Run the unfinished tasks under a progress bar; 0, or 130 on Ctrl-C, or 1 if a worker process died."""
    progress = not args.no_progress and sys.stderr.isatty()
    with tqdm(total=len(plan.tasks), initial=len(plan.tasks) - len(todo), unit="task", file=sys.stderr,
              disable=not progress, dynamic_ncols=True, smoothing=0.1) as bar:
        try:
            if todo:
                run_tasks(todo, make_backend(args), store, bar)
        except KeyboardInterrupt:
            return 130
        except BrokenProcessPool:
            return 1
        except sqlite3.Error as exc:  # the disk filled up, the file went away, ...: the stored tasks are kept
            print(f"msjgym: error: --out: a finished task could not be stored in {str(store.path)!r} ({exc})",
                  file=sys.stderr)
            return _STORE_FAILED
    return 0


def run_sweep(scenario: str, grid: Sequence[str], policies: Sequence[str], out: str | Path, *, reps: int | None = 10,
              jobs: int | None = 100_000, seed: int = 0, params: Sequence[str] = (), workers: int | None = None,
              progress: bool = False, **options: Any) -> list[TaskRow]:
    """Run a sweep from Python (what ``msjgym sweep`` does, without printing): resumable, on the local pool.

    Args:
        scenario: a built-in name or TOML path.
        grid: ``NAME=VALUES`` strings as for ``--grid``.
        policies: policy names.
        out: the results folder (``out/results.sqlite``).
        params: ``KEY=VALUE`` overrides fixed at every point.
        options: the scenario family's switches (``saturated=True``, ...), as for ``msjgym.evaluate``.
    Returns:
        the rows of every task of the sweep (finished now or before).
    Raises:
        MsjgymError: bad input; KeyboardInterrupt or BrokenProcessPool: the sweep stopped (finished rows are kept).
    """
    args = argparse.Namespace(
        scenario=scenario, grid=list(grid), policy=[",".join(policies)], param=list(params), reps=reps, jobs=jobs,
        warmup=None, batches=20, seed=seed, out=str(out), backend="local", workers=workers, address=None,
        skip_invalid=False, no_progress=not progress, metric=[], baseline=None, csv=None, **options)
    plan = make_plan(args)
    with ResultStore(check_output_dir(out, "out") / RESULTS_FILE, label="out") as store:
        done = store.done_keys()
        todo = [t for t in plan.tasks if t.key() not in done]
        with tqdm(total=len(plan.tasks), initial=len(plan.tasks) - len(todo), unit="task", file=sys.stderr,
                  disable=not progress, desc=scenario) as bar:
            if todo:
                run_tasks(todo, make_backend(args), store, bar)
        wanted = {t.key() for t in plan.tasks}
        return [r for r in store.rows(superseded=True) if r.key() in wanted]


class _Parser(argparse.ArgumentParser):
    """argparse with msjgym's one-line error format."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"msjgym: error: {one_line(message)}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m msjgym.evaluate.sweep ...``: the sweep command on its own; returns the exit status."""
    parser = _Parser(prog="msjgym sweep", description="Sweep policies over a grid of scenario parameters.")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return command(args)
    except MsjgymError as exc:
        print(f"msjgym: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before any task ran
        print("msjgym: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    from msjgym.evaluate.sweep import main as _main  # the module itself, so pickled tasks name it, not __main__

    sys.exit(_main())
