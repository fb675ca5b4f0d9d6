"""Evaluate a policy on a loss scenario: independent replications, warm-up removed, 95 % confidence intervals.

Same contract as :func:`msjgym.evaluate.runner.evaluate`: replication r uses ``SeedSequence(seed).spawn(reps)[r]``;
with one replication the CIs come from batch means. Run length is counted in arrivals. The default warm-up is
max(jobs/10, 20n) arrivals, i.e. at least about 20 time units (the count chain relaxes at rate >= 1 per time unit;
jobs/10 alone would be a fraction of a time unit at large n).

Metrics (per replication, then mean ± CI): ``blocking_probability`` (blocked/arrivals), ``response_time`` (mean of
1/width over accepted jobs = E[D], conditioning on the width), ``number_in_system``, ``utilization`` (busy fraction
q_1), ``throughput`` (accepted jobs per unit time), ``width_probability[wi]`` (fraction of arrivals given i servers;
w0 = blocked), ``number_in_system[wi]`` (E[X_i]), ``sqrt_n_blocking`` (√n P_b), ``stein_lhs`` (E[(λ − d x_d)²]) and
the residuals of GMGM's identities, each zero in steady state: ``residual_work`` (E[q_1] − λ(1 − P_b), eq. (1)),
``residual_little`` (λ(1 − P_b)E[D] − E[Σ x_i], eq. (2)), ``residual_width[wi]`` (E[i x_i] − λE[A_i]),
``residual_pasta`` (P_b − time average of P(block | x)), ``residual_stein`` (Lemma 1 eq. (9), with A_d the
policy's P(width d | x)).
"""
from __future__ import annotations

import math
import secrets
import time

import numpy as np

from msjgym.core import rng
from msjgym.errors import MsjgymError
from msjgym.evaluate.runner import EvaluationResult
from msjgym.evaluate.statistics import Estimate, t_interval
from msjgym.policies.loss import LossPolicy, get_loss_policy
from msjgym.systems.loss import kernel as ls
from msjgym.systems.loss.model import LossModel
from msjgym.systems.msj.engine import RunConfig

CHUNK = 1 << 20


def loss_metrics(stats: np.ndarray, model: LossModel) -> dict[str, float]:
    """Metric values from one replication's (or batch's) summed statistics row (``msjgym.systems.loss.kernel`` layout)."""
    n, d, lam = model.servers, model.d, model.lam
    T, arr, blocked = stats[ls.S_TIME], stats[ls.S_ARR], stats[ls.S_BLOCK]
    accepted = arr - blocked
    nan = math.nan
    pb = blocked / arr if arr > 0 else nan
    # Σ_i (c_i/accepted)/i: exactly 1/d (in floating point) when every accepted job got d servers
    ed = sum((stats[ls.S_WIDTH + i] / accepted) / i for i in range(1, d + 1)) if accepted > 0 else nan
    jobs = stats[ls.S_JOBS] / T if T > 0 else nan
    q1 = stats[ls.S_BUSY] / (n * T) if T > 0 else nan
    ad = stats[ls.S_AD] / T
    dev2 = stats[ls.S_DEV2] / T
    out = {
        "blocking_probability": pb, "response_time": ed, "number_in_system": jobs, "utilization": q1,
        "throughput": accepted / T, "sqrt_n_blocking": math.sqrt(n) * pb, "stein_lhs": dev2,
        "residual_work": q1 - lam * (1 - pb), "residual_little": lam * (1 - pb) * ed - jobs / n,
        "residual_pasta": pb - stats[ls.S_PBLOCK] / T,
        "residual_stein": dev2 - (d / n) * lam * ad - lam * stats[ls.S_STEIN] / T,
    }
    if model.service is not None:  # Lemma 1 uses the Markov generator: no identity for other size laws
        del out["residual_stein"]
    ax = ls.s_area_x(d)
    for i in range(d + 1):
        out[f"width_probability[w{i}]"] = stats[ls.S_WIDTH + i] / arr
    for i in range(1, d + 1):
        out[f"number_in_system[w{i}]"] = stats[ax + i] / T
        out[f"residual_width[w{i}]"] = i * stats[ax + i] / (n * T) - lam * stats[ls.S_WIDTH + i] / arr
    return out


def _interval(values: np.ndarray) -> Estimate:
    """Student-t CI; a metric identical in every unit (E[D] = 1/d when every job gets d servers) is reported as
    that value with a zero half-width (the mean of equal floats can differ from them in the last bit)."""
    if values.size > 1 and np.all(values == values[0]):
        return Estimate(float(values[0]), 0.0)
    return t_interval(values)


def default_warmup(model: LossModel, jobs: int) -> int:
    """max(jobs/10, 20n) arrivals (module docstring)."""
    return max(jobs // 10, 20 * model.servers)


def simulate_loss(model: LossModel, policy: str | LossPolicy, *, reps: int = 10, jobs: int = 100_000,
                  warmup: int | None = None, seed: int = 0, batches: int = 20,
                  trace_events: int = 0) -> ls.LossSimulation:
    """Run ``reps`` replications to completion and return the simulation (state, statistics, traces)."""
    name = policy.name if isinstance(policy, LossPolicy) else get_loss_policy(policy).name
    warmup = default_warmup(model, jobs) if warmup is None else warmup
    streams, _ = rng.spawn_states(seed, reps)
    sim = ls.LossSimulation(model, name, warmup, jobs, batches, streams, trace_events)
    sim.run_all(CHUNK)
    return sim


def evaluate_loss(scenario, policy: str | LossPolicy, *, reps: int | None = None, jobs: int | None = None,
                  warmup: int | None = None, seed: int | None = None, batches: int = 20,
                  references: bool | list = True) -> EvaluationResult:
    """Simulate a loss scenario (a :class:`~msjgym.systems.msj.scenarios.Scenario` whose model is a
    :class:`LossModel`, or a bare model) and estimate its metrics, with the scorecard's references judged."""
    from msjgym.evaluate import scorecard
    from msjgym.systems.loss import scorecard as loss_scorecard

    model: LossModel = getattr(scenario, "model", scenario)
    reps = 10 if reps is None else reps
    if not isinstance(reps, (int, np.integer)) or isinstance(reps, bool) or reps < 1:
        raise MsjgymError(f"reps = {reps!r}: must be an integer >= 1")
    jobs = 100_000 if jobs is None else jobs
    if jobs < batches:
        raise MsjgymError(f"jobs = {jobs}: must be >= batches = {batches}")
    warmup = default_warmup(model, jobs) if warmup is None else warmup
    if seed is None:
        seed = secrets.randbits(32)
    pol = get_loss_policy(policy) if isinstance(policy, str) else policy
    start = time.perf_counter()
    streams, _ = rng.spawn_states(seed, reps)
    sim = ls.LossSimulation(model, pol.name, warmup, jobs, batches, streams)
    sim.advance(0, 0)  # compile or load the kernels
    compile_seconds = time.perf_counter() - start
    start = time.perf_counter()
    sim.run_all(CHUNK)
    wall = time.perf_counter() - start
    result = summarize_loss(scenario, pol.name, sim.state.stats, reps, jobs, warmup, batches, seed,
                            sum(sim.events(b) for b in range(reps)), wall, compile_seconds)
    if references is True:
        references = loss_scorecard.references(model, pol)
    if references:
        result.references = scorecard.judge(references, result)
    return result


def summarize_loss(scenario, policy_name: str, stats: np.ndarray, reps: int, jobs: int, warmup: int, batches: int,
                   seed: int, events: int, wall: float, compile_seconds: float,
                   policy_known: bool = True) -> EvaluationResult:
    """An :class:`EvaluationResult` from the statistics array of ``reps`` replications (no references).

    ``policy_known=False`` (an agent): the PASTA and Stein residuals are left out — they need the policy's law
    P(width | state), which the statistics took from greedy.
    """
    model: LossModel = getattr(scenario, "model", scenario)

    def metrics_of(row: np.ndarray) -> dict[str, float]:
        out = loss_metrics(row, model)
        if not policy_known:
            out.pop("residual_pasta", None)
            out.pop("residual_stein", None)
        return out

    per_rep = [metrics_of(stats[b].sum(axis=0)) for b in range(reps)]
    units = per_rep if reps > 1 else [metrics_of(stats[0, i]) for i in range(batches)]
    metrics: dict[str, Estimate] = {k: _interval(np.array([u[k] for u in units])) for k in units[0]}
    params = dict(getattr(scenario, "params", {}))
    params.setdefault("lam", model.lam)
    return EvaluationResult(
        scenario=getattr(scenario, "name", "model"), policy=policy_name, params=params, stable=True,
        metrics=metrics, replications=per_rep, growth_rate=None, unstable_replications=[], growth_rates=[],
        config=RunConfig(jobs=jobs, warmup=warmup, batches=batches, detect_instability=False), reps=reps, seed=seed,
        events=events, wall_seconds=wall, compile_seconds=compile_seconds)
