"""Compile every family's kernels once on this machine, in parallel processes (``msjgym compile``).

A first run compiles what it needs and caches it (:mod:`msjgym.core.jit`), so precompiling is never required. It
helps where many processes would otherwise compile the same kernels at the same time, each on its own: the workers
of a test run or of a process pool started on a fresh cache, a container image built once and run many times, the
machines of a Ray cluster before a sweep. It runs in two phases, each spread over ``workers`` processes:

1. each family's event loop (with the family's default policy), one task per family, so no two processes compile
   the same loop;
2. every other built-in policy's kernels (on the first built-in scenario of its family it runs on) and each
   environment's decision path (one reset and one step of every registered environment).

Nothing is simulated beyond the few events a task needs to load its kernels. A task that fails (a policy that
runs on none of its family's built-in scenarios) is reported, not raised: precompiling is an optimisation.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

from tqdm import tqdm

from msjgym import api
from msjgym.core.validation import int_at_least
from msjgym.errors import MsjgymError


_SHORT = api.RunSettings(reps=1, jobs=16, batches=1)
"""A replication just long enough to build; the kernels are compiled for any length."""


@dataclass(frozen=True)
class Task:
    """One unit of precompiling: a policy's kernels on a scenario (``policy`` set) or an environment (``env_id``)."""

    family: str
    scenario: str = ""
    policy: str = ""
    env_id: str = ""

    @property
    def label(self) -> str:
        return self.env_id or f"{self.family} policy {self.policy}"


def plan(families: list[str] | None = None) -> tuple[list[Task], list[Task]]:
    """The two phases' tasks for ``families`` (names; None: every registered family)."""
    chosen = [api.family(name) for name in families] if families else api.families()
    loops: list[Task] = []
    rest: list[Task] = []
    for family in chosen:
        scenarios = [name for name, _ in family.scenarios()]
        if not scenarios:
            continue
        first = family.default_policy(family.load(scenarios[0], {}))
        for policy in family.policies():
            scenario = _runs_on(family, scenarios, policy)
            if scenario is None:
                continue
            task = Task(family.name, scenario, policy)
            if policy == first and not any(t.family == family.name for t in loops):
                loops.append(task)
            else:
                rest.append(task)
        rest += [Task(family.name, env_id=env_id) for env_id in family.env_ids]
    # environments first: their decision paths are the largest tasks (MSJ-v0's about as long as a family's loop),
    # and a pool that starts its longest tasks first does not end waiting on one of them
    rest.sort(key=lambda task: not task.env_id)
    return loops, rest


def _runs_on(family: api.Family, scenarios: list[str], policy: str) -> str | None:
    """The first built-in scenario of ``family`` that ``policy`` runs on (None: none)."""
    for name in scenarios:
        try:
            family.validate(family.load(name, {}), policy, _SHORT)
        except MsjgymError:
            continue
        return name
    return None


def compile_task(task: Task) -> tuple[str, float, str | None]:
    """Load or compile one task's kernels (in a worker process): (label, seconds, error or None)."""
    start = time.perf_counter()
    try:
        if task.env_id:
            _touch_env(task.env_id)
        else:
            family = api.family(task.family)
            scenario = family.load(task.scenario, {})
            sim = family.simulation(scenario, task.policy, _SHORT, seed=0)
            sim.prepare()
    except Exception as exc:  # noqa: BLE001 - reported per task, never fatal (see the module docstring)
        return task.label, time.perf_counter() - start, f"{type(exc).__name__}: {exc}"
    return task.label, time.perf_counter() - start, None


def _touch_env(env_id: str) -> None:
    """One reset and one valid step of environment ``env_id``: compiles its decision path."""
    import gymnasium as gym

    env = gym.make(env_id)  # registered by importing msjgym, which importing this module did
    try:
        env.reset(seed=0)
        env.step(env.action_space.sample())  # every action is valid in the initial state (the environments' rule)
    finally:
        env.close()


def precompile(families: list[str] | None = None, workers: int | None = None,
               progress: bool = True) -> list[tuple[str, float, str | None]]:
    """Compile (or load) every built-in kernel and environment path of ``families`` with ``workers`` processes
    (None: one per CPU). Returns (label, seconds, error or None) per task; ``progress`` shows a bar on stderr."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise MsjgymError(f"workers = {workers!r}: must be a positive integer")
    workers = workers or os.cpu_count() or 1
    loops, rest = plan(families)
    done: list[tuple[str, float, str | None]] = []
    with tqdm(total=len(loops) + len(rest), unit="task", delay=1.0, disable=not progress, file=sys.stderr,
              desc="compiling") as bar:
        # spawn, not fork: a worker must not inherit a half-initialised numba or a parent's threads
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            for phase in (loops, rest):
                for future in as_completed([pool.submit(compile_task, task) for task in phase]):
                    done.append(future.result())
                    bar.update(1)
    return done


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``msjgym compile``."""
    parser.add_argument("--family", action="append", default=None, metavar="NAME",
                        choices=[f.name for f in api.families()],
                        help="only this family's kernels (repeat for several; default: every family)")
    parser.add_argument("--workers", type=int_at_least(1), default=None, metavar="N",
                        help="processes compiling at once (default: one per CPU)")
    parser.add_argument("--no-progress", action="store_true", help="never show a progress bar")


def command(args: argparse.Namespace) -> int:
    """``msjgym compile``: precompile, then one line per task that failed and a summary line; status 1 if any
    failed."""
    start = time.perf_counter()
    done = precompile(args.family, args.workers, progress=not args.no_progress)
    failed = [(label, error) for label, _, error in done if error]
    for label, error in failed:
        print(f"msjgym: could not compile {label}: {error}", file=sys.stderr)
    print(f"compiled or loaded {len(done) - len(failed)} of {len(done)} kernels and environment paths in "
          f"{time.perf_counter() - start:.1f} s (cached on this machine: later runs load them)")
    return 1 if failed else 0
