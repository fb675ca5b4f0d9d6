"""Evaluate a policy on a scenario of any family: independent replications, warm-up removed, 95 % CIs.

One evaluator for every family. The scenario's family builds the replications (:class:`msjgym.api.Simulation`);
this module runs them and does everything else the same way for all: the seeds (replication r draws from
``SeedSequence(seed).spawn(reps)[r]``: replications never share a stream, and replication r's numbers do not depend
on how many replications ran), the note before a long first compilation, the progress bar, instability (a
replication whose number in system keeps growing is stopped and reported with its growth rate, not waited on), the
Student-t intervals over replications (or over batch means when there is one replication; none for a run the family
marks ``exact``, one replay of a fixed input such as a trace, whose values are exact), the theory's references and
their verdicts, and the :class:`~msjgym.evaluate.result.Result`.
"""
from __future__ import annotations

import math
import re
import secrets
import sys
import threading
import time
from dataclasses import replace
from typing import Any

import numpy as np
from tqdm import tqdm

from msjgym import api
from msjgym.core import limits
from msjgym.core import histogram
from msjgym.core.estimates import Estimate
from msjgym.evaluate.intervals import estimates, t_interval, widening
from msjgym.core.references import FALSE_ALARM, Reference, interval_verdicts, unstable_predictions
from msjgym.core.validation import check_int, requirement, show
from msjgym.errors import MsjgymError
from msjgym.evaluate.checks import relaxation_note, run_checks, tail_notes
from msjgym.evaluate.result import Result

CHUNK_EVENTS = 1 << 18
"""Events per call into a family's simulation between progress-bar updates."""
COMPILE_NOTE_AFTER = 2.0
"""Seconds of compiling after which a note says so (first run only: compiled kernels are cached)."""


def evaluate(scenario: api.Scenario | str | Any, policy: str | Any, *, reps: int | None = None, jobs: int | None = None,
             warmup: int | None = None, seed: int | None = None, batches: int = 20, progress: bool = False,
             references: bool | list[Reference] = True, notes: bool = False, **options: Any) -> Result:
    """Simulate ``reps`` independent replications of ``scenario`` under ``policy`` and estimate its metrics.

    Args:
        scenario: a loaded scenario (:func:`msjgym.load_scenario`), a scenario name or file, or a family's model.
        policy: a built-in policy of the scenario's family (its name or declaration), ``FILE.py:NAME`` (an object,
            class or function with ``act(observation, action_mask) -> action``), ``sb3:MODEL.zip``,
            ``rllib:CHECKPOINT_DIR``, or such an object itself.
        reps: independent replications (None: the family's default, 10 for most).
        jobs: measured jobs (or arrivals) per replication (None: the family's default).
        warmup: jobs (or arrivals) discarded at the start of each replication (None: the family's default).
        seed: root seed; None draws a random 32-bit seed (reported in the result, so the run can be repeated).
        batches: measurement batches per replication (the CIs of a single replication come from them).
        progress: show a progress bar on stderr (after one second), and a note while compiling.
        references: put the theory's references beside the results: True computes them, a list uses those,
            False skips them.
        notes: print on stderr the stability conditions that predict instability before simulating.
        options: the family's own switches (``saturated=True``, ``observation="histogram"``, ``mode="start"``, ...),
            as its :meth:`~msjgym.api.Family.options` declares them; any other is a one-line ``MsjgymError``.
    """
    scenario = api.as_scenario(scenario)
    family = api.family(scenario.family)
    if not isinstance(policy, str) and family.policies().get(getattr(policy, "name", None)) is policy:
        policy = policy.name  # a built-in's declaration
    # the run length: None (the family's default) or an integer in its range, before anything is compiled
    reps, jobs, warmup, seed, batches = (None if value is None else _run_int(name, value, low, high) for name, value,
                                         low, high in (("reps", reps, 1, limits.MAX_REPS),
                                                       ("jobs", jobs, 1, limits.MAX_JOBS),
                                                       ("warmup", warmup, 0, limits.MAX_JOBS),
                                                       ("seed", seed, 0, limits.MAX_SEED),
                                                       ("batches", batches, 1, limits.MAX_BATCHES)))
    options = api.check_options(family, options)  # each a declared option of the family, within its range
    run = api.RunSettings(reps=reps, jobs=jobs, warmup=warmup, batches=batches, seed=seed, options=options)
    family.validate(scenario, policy, run)  # once, before the theory or a compile starts
    if references is True:
        references = family.references(scenario, policy, run)
    refs = list(references) if references else []
    if notes:
        for ref in unstable_predictions(refs):
            print(f"msjgym: note: outside the stability region before simulating: {ref.description} "
                  f"[{ref.source}]", file=sys.stderr)
    if seed is None:
        seed = secrets.randbits(32)
    sim = family.simulation(scenario, policy, run, seed)
    compile_seconds = _prepare(sim, progress or notes)
    start = time.perf_counter()
    run_replications(sim, sim.name, progress)
    wall = time.perf_counter() - start
    result = summarize(scenario, policy, sim, seed, wall, compile_seconds)
    if refs:
        units = result.reps if result.reps > 1 else len(sim.batch_metrics(0))
        result.verdict_scale, result.verdict_level = widening(interval_verdicts(refs, result.metrics), units,
                                                              FALSE_ALARM)
        result.references = family.judge(scenario, refs, result)
    return result


def _run_int(name: str, value: Any, low: int, high: int) -> int:
    """A run-length argument of the Python API: an int (not ``2.0``, not ``True``: a float or a flag here is a
    mistake in the caller's code, not a number read from text) in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise MsjgymError(f"{name} = {show(value)}: {requirement(low, high, integer=True)}")
    return check_int(name, value, low, high)


def _prepare(sim: api.Simulation, progress: bool) -> float:
    """Compile (or load from the cache) the simulation's kernels before timing; returns the seconds it took."""
    start = time.perf_counter()
    said = sim.compile_note() if progress else None
    if said:
        print(said, file=sys.stderr, flush=True)
    note = threading.Timer(COMPILE_NOTE_AFTER, lambda: print(
        "msjgym: compiling the simulation kernels (first run only; cached afterwards) ...", file=sys.stderr))
    if progress and not said:
        note.start()
    try:
        sim.prepare()
    finally:
        note.cancel()
    return time.perf_counter() - start


def run_replications(sim: api.Simulation, label: str, progress: bool) -> None:
    """Run every replication of ``sim`` to its end (done or unstable), with a progress bar over all of them."""
    per_rep = sim.per_rep
    chunk = getattr(sim, "chunk", CHUNK_EVENTS)
    with tqdm(total=sim.reps * per_rep, unit=sim.unit, unit_scale=True, delay=1.0, disable=not progress,
              file=sys.stderr, desc=label) as bar:
        for b in range(sim.reps):
            while sim.advance(b, chunk) == api.RUNNING:
                bar.update(min(sim.progress(b), per_rep) + b * per_rep - bar.n)
            bar.update((b + 1) * per_rep - bar.n)


def summarize(scenario: api.Scenario, policy: str, sim: api.Simulation, seed: int, wall: float,
              compile_seconds: float) -> Result:
    """The :class:`Result` of a simulation whose replications have all ended (no references)."""
    reps = sim.reps
    status = [sim.status(b) for b in range(reps)]
    if any(s == api.RUNNING for s in status):
        raise RuntimeError("summarize: a replication has not ended")
    unstable = [b for b in range(reps) if status[b] == api.UNSTABLE]
    rates = [sim.growth_rate(b) for b in unstable]
    per_rep = [sim.metrics(b) for b in range(reps)]
    metrics = {}
    checks = []
    if not unstable and getattr(sim, "exact", False):  # one replay of a fixed input: exact values, no interval
        metrics = honest({k: Estimate(v, math.nan) for k, v in per_rep[0].items()})
        checks = run_checks(sim.invariants(), [per_rep[0] | sim.check_values(0)], exact=True)
    elif not unstable:
        units = per_rep
        batches = sim.batch_metrics(0) if reps == 1 else []
        batched = bool(batches)
        if batched:
            units = batches
        metrics = honest(estimates(units))
        if len(units) < 2:  # one replication without batch means: a value, no interval (said, never left bare)
            metrics = {k: replace(v, no_ci=NO_CI) for k, v in metrics.items()}
        values = ([u | sim.check_values(0, i) for i, u in enumerate(units)] if batched else
                  [u | sim.check_values(b) for b, u in enumerate(units)])
        checks = run_checks(sim.invariants(), values)
    converged = None if unstable or getattr(sim, "exact", False) else relaxation_note(
        [sim.batch_metrics(b) for b in range(reps)], sim.jobs, sim.unit)
    return Result(
        scenario=scenario.name, family=scenario.family, policy=sim.name, params=_params(scenario, sim), stable=not unstable,
        metrics=metrics, reps=reps, jobs=sim.jobs, warmup=sim.warmup, seed=seed,
        events=sum(sim.events(b) for b in range(reps)), wall_seconds=wall, compile_seconds=compile_seconds,
        unit=sim.unit, mode=sim.mode, batches=sim.batches, replications=per_rep, unstable_replications=unstable,
        growth_rates=rates, growth_rate=t_interval(np.array(rates)) if unstable else None,
        diagnostics=sim.diagnostics(), per_job=sim.per_job(),
        per_job_header=getattr(sim, "per_job_header", dict)(), notes=sim.notes(), checks=checks,
        check_notes=tail_notes(sim.service_laws(), reps, reps * (sim.jobs + sim.warmup)) + (
            [converged] if converged else []))


NO_CI = "one measurement unit (1 replication, 1 batch): no confidence interval; use --reps >= 2 or --batches >= 2"
"""Why a sampled run's estimates have no interval."""

_PERCENTILE = re.compile(r"_p\d+$")


def honest(metrics: dict[str, Estimate]) -> dict[str, Estimate]:
    """``metrics`` with a warning on each value that is not an honest measurement: a percentile outside the
    histogram's range (±inf), a negative time (the clock's float64 rounding), an infinite value (an overflow)."""
    out = {}
    for name, est in metrics.items():
        base = name.split("[", 1)[0]
        warning = None
        if _PERCENTILE.search(base) and math.isinf(est.mean):
            warning = histogram.range_warning(est.mean)
        elif math.isinf(est.mean):
            warning = "not finite: the value over- or underflowed float64"
        elif base.endswith("_time") and _negative(name, est, metrics):
            warning = ("negative: the clock's float64 rounding lost the shortest times (time scales too far apart; "
                       "rescale the scenario)")
        if warning:  # an infinite mean has no interval (equal infinities would otherwise show a half-width of 0)
            est = replace(est, ci95=est.ci95 if math.isfinite(est.mean) else math.nan, warning=warning)
        out[name] = est
    return out


def _negative(name: str, est: Estimate, metrics: dict[str, Estimate]) -> bool:
    """Whether a mean time is negative beyond rounding noise: below -1e-9 of the response time (of the same class),
    and with its whole CI below 0 (a class that never waits shows a waiting time of ±1e-15 around 0: no warning)."""
    suffix = name[name.index("["):] if "[" in name else ""
    scale = metrics.get("response_time" + suffix)
    scale = abs(scale.mean) if scale is not None and math.isfinite(scale.mean) and scale.mean != 0 else 1.0
    half = est.ci95 if math.isfinite(est.ci95) else 0.0
    return est.mean < -1e-9 * scale and est.mean + half < 0


def _params(scenario: api.Scenario, sim: api.Simulation) -> dict[str, Any]:
    """The parameters a result reports: the scenario's as the run uses them (:meth:`~msjgym.api.Simulation.run_params`),
    with the simulation's summary quantities (the load) beside them."""
    own = getattr(sim, "run_params", None)
    used = own() if own is not None else None
    params = dict(scenario.params if used is None else used)
    for key, value in sim.summary_params().items():
        params.setdefault(key, value)
    return params
