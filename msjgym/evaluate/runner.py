"""Evaluate a policy on a scenario: independent replications, warm-up removed, 95 % confidence intervals.

Replication r draws from ``SeedSequence(seed).spawn(reps)[r]``: replications never share a stream, and replication
r's numbers do not depend on how many replications were run. With one replication, CIs come from batch means.
A replication whose number of jobs keeps growing is stopped and reported unstable with its growth rate.
"""
from __future__ import annotations

import secrets
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm import tqdm

from msjgym.core import rng
from msjgym.core.traces import Trace
from msjgym.errors import MsjgymError
from msjgym.evaluate import scorecard
from msjgym.systems.msj.scenarios import Scenario
from msjgym.evaluate.scorecard import Reference
from msjgym.evaluate.statistics import Estimate, open_metrics, saturated_metrics, t_interval
from msjgym.policies.msj import Policy, get_policy
from msjgym.systems.msj.state import DONE, RUNNING, UNSTABLE
from msjgym.systems.msj.engine import MSJSimulation, RunConfig
from msjgym.systems.msj.model import MSJModel

CHUNK_EVENTS = 1 << 18  # events per compiled call between progress-bar updates


@dataclass
class EvaluationResult:
    """What ``evaluate`` measured. ``metrics`` is empty when the scenario was found unstable.

    Attributes:
        replications: each replication's own metric values (for checks across replications).
        unstable_replications: indices of the replications stopped for unbounded growth.
        growth_rates: their growth rates of the number in system, jobs per unit time.
        growth_rate: mean and CI of ``growth_rates`` (None when every replication was stable).
        events: simulated events (arrivals + completion instants) over all replications.
        wall_seconds: time spent simulating; compile_seconds: compiling or loading the kernels before that.
        per_job: for a replayed trace, each job's arrival, need, duration, completion, response and waiting time
            (NaN for a job that had not completed when the run stopped).
    """

    scenario: str
    policy: str
    params: dict[str, Any]
    stable: bool
    metrics: dict[str, Estimate]
    replications: list[dict[str, float]]
    growth_rate: Estimate | None
    unstable_replications: list[int]
    growth_rates: list[float]
    config: RunConfig
    reps: int
    seed: int
    events: int
    wall_seconds: float
    compile_seconds: float
    references: list[Reference] = field(default_factory=list)
    per_job: dict[str, np.ndarray] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object printed by ``msjgym evaluate --json``."""
        return {
            "scenario": self.scenario,
            "policy": self.policy,
            "params": self.params,
            "stable": self.stable,
            "metrics": {k: v.to_dict() for k, v in self.metrics.items()},
            "references": [r.to_dict() for r in self.references],
            "growth_rate": None if self.growth_rate is None else self.growth_rate.to_dict(),
            "unstable_replications": self.unstable_replications,
            "mode": "saturated" if self.config.saturated else "open",
            "reps": self.reps,
            "jobs": self.config.jobs,
            "warmup": self.config.warmup,
            "seed": self.seed,
            "events": self.events,
            "wall_seconds": round(self.wall_seconds, 3),
            "compile_seconds": round(self.compile_seconds, 3),
        }


def evaluate(scenario: Scenario | MSJModel, policy: str | Policy, *, reps: int | None = None,
             jobs: int | None = None, warmup: int | None = None, seed: int | None = None, batches: int = 20, saturated: bool = False,
             backlog: int = 1, detect_instability: bool = True, debug: bool = False,
             progress: bool = False, references: bool | list[Reference] = True) -> EvaluationResult:
    """Simulate ``reps`` independent replications of ``scenario`` under ``policy`` and estimate its metrics.

    Args:
        scenario: a loaded scenario, or a bare model.
        policy: a built-in policy or its name.
        reps: independent replications (default 10; with 1, CIs come from batch means). A replayed trace is
            deterministic: it takes one replication.
        jobs: measured jobs per replication (default 100,000; for a trace, all its jobs after the warm-up).
        warmup: jobs discarded first in each replication (default ``jobs // 10``; 0 for a trace).
        seed: root seed; None draws a random 32-bit seed (reported in the result, so the run can be repeated).
        batches: measurement batches per replication.
        saturated: measure the closed system that always has ``backlog`` waiting jobs (maximum throughput).
        detect_instability: stop and report replications whose number in system keeps growing.
        debug: check the state invariants after every event (slow).
        progress: show a progress bar on stderr (after one second).
        references: put the theory's references beside the results (``msjgym.evaluate.scorecard``): True computes
            them, a list uses those (computed beforehand), False skips them.
    """
    model = scenario.model if isinstance(scenario, Scenario) else scenario
    trace = model.trace
    if reps is None:
        reps = 1 if trace is not None else 10
    if not isinstance(reps, (int, np.integer)) or isinstance(reps, bool) or reps < 1:
        raise MsjgymError(f"reps = {reps!r}: must be an integer >= 1")
    if trace is not None and (reps != 1 or saturated):
        raise MsjgymError(f"reps = {reps}{', saturated' if saturated else ''}: a trace replay is deterministic and "
                          "open: use one replication (CIs come from batch means)")
    if seed is not None and (not isinstance(seed, (int, np.integer)) or seed < 0):
        raise MsjgymError(f"seed = {seed!r}: must be an integer >= 0")
    pol = get_policy(policy) if isinstance(policy, str) else policy
    if trace is not None:
        warmup = 0 if warmup is None else warmup
        jobs = len(trace) - warmup if jobs is None else jobs
    else:
        jobs = 100_000 if jobs is None else jobs
        warmup = jobs // 10 if warmup is None else warmup
    config = RunConfig(jobs=jobs, warmup=warmup, batches=batches, saturated=saturated, backlog=backlog,
                       detect_instability=detect_instability, debug=debug)
    if seed is None:
        seed = secrets.randbits(32)
    streams, _ = rng.spawn_states(seed, reps)
    sim = MSJSimulation(model, pol, config, streams)
    compile_seconds = _compile(sim, progress)

    start = time.perf_counter()
    per_rep = config.warmup + config.jobs
    with tqdm(total=reps * per_rep, unit="job", unit_scale=True, delay=1.0, disable=not progress,
              file=sys.stderr, desc=pol.name) as bar:
        for b in range(reps):
            while sim.advance(b, CHUNK_EVENTS) == RUNNING:
                bar.update(min(sim.progress(b), per_rep) + b * per_rep - bar.n)
            bar.update((b + 1) * per_rep - bar.n)
    wall = time.perf_counter() - start
    result = _result(scenario, pol, sim, reps, seed, wall, compile_seconds)
    if references is True:
        regime = scenario.regime if isinstance(scenario, Scenario) else None
        references = scorecard.references(model, pol, regime=regime, saturated=saturated)
    if references:
        result.references = scorecard.judge(references, result)
    if trace is not None:
        result.per_job = _per_job(trace, sim.completion_times(0))
    return result


def _per_job(trace: Trace, completion: np.ndarray) -> dict[str, np.ndarray]:
    response = completion - trace.arrival
    return {"arrival_time": trace.arrival, "need": trace.need, "duration": trace.duration,
            "completion_time": completion, "response_time": response, "waiting_time": response - trace.duration}


def _compile(sim: MSJSimulation, progress: bool) -> float:
    """Compile (or load from the cache) the event loop before timing; returns the seconds it took.

    The first run after installing compiles for about a minute; with ``progress`` a note says so after 2 s.
    """
    start = time.perf_counter()
    note = threading.Timer(2.0, lambda: print(
        "msjgym: compiling the simulation kernels (first run only; cached afterwards) ...", file=sys.stderr))
    if progress:
        note.start()
    try:
        sim.advance(0, 0)
    finally:
        note.cancel()
    return time.perf_counter() - start


def _result(scenario: Scenario | MSJModel, policy: Policy, sim: MSJSimulation, reps: int, seed: int,
            wall: float, compile_seconds: float) -> EvaluationResult:
    model, config, st = sim.model, sim.config, sim.state
    unstable = [b for b in range(reps) if sim.status(b) == UNSTABLE]
    assert all(sim.status(b) in (DONE, UNSTABLE) for b in range(reps))
    names = [c.name for c in model.classes]

    def unit_metrics(bstat: np.ndarray, bsys: np.ndarray, hist: np.ndarray) -> dict[str, float]:
        if config.saturated:
            return saturated_metrics(bstat, bsys, model.needs, model.servers, names)
        return open_metrics(bstat, bsys, hist, model.needs, model.servers, names)

    per_rep = [unit_metrics(st.bstat[b].sum(axis=0), st.bsys[b].sum(axis=0), st.hist[b].sum(axis=0))
               for b in range(reps)]
    metrics: dict[str, Estimate] = {}
    rates = [sim.growth_rate(b) for b in unstable]
    growth = t_interval(np.array(rates)) if unstable else None
    if not unstable:
        units = per_rep if reps > 1 else [
            unit_metrics(st.bstat[0, i], st.bsys[0, i], st.hist[0, i]) for i in range(config.batches)]
        metrics = {k: t_interval(np.array([u[k] for u in units])) for k in units[0]}
    if isinstance(scenario, Scenario):
        name, params = scenario.name, dict(scenario.params)
    else:
        name, params = "model", {}
    params.setdefault("load", model.load)
    return EvaluationResult(
        scenario=name, policy=policy.name, params=params, stable=not unstable, metrics=metrics,
        replications=per_rep, growth_rate=growth, unstable_replications=unstable, growth_rates=rates,
        config=config, reps=reps,
        seed=seed, events=sum(sim.events(b) for b in range(reps)), wall_seconds=wall,
        compile_seconds=compile_seconds)
