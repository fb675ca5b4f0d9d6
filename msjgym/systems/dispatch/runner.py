"""Evaluate a built-in dispatch policy on a dispatch scenario (``msjgym evaluate lb-... --policy P``).

Runs :func:`msjgym.systems.dispatch.simulate.simulate` with the paper's protocol (each replication starts empty and runs
``arrivals`` arrivals, default N·10⁴; the first 10 % are warm-up; 20 replications; replication r uses
``SeedSequence(seed).spawn(reps)[r]``) and returns an :class:`~msjgym.evaluate.runner.EvaluationResult` whose
metrics are ``response_time``, ``mean_queue_length``, ``busy_fraction``, ``message_rate``,
``little_response_time`` (E[Q]/λ) and ``P(Q=k)`` (time-average fraction of servers with k jobs), each a mean over
replications with a Student-t 95 % CI, and the scorecard (:mod:`msjgym.systems.dispatch.scorecard`) judged.
"""
from __future__ import annotations

import secrets
import time
from typing import Any

import numpy as np

from msjgym.systems.dispatch import scorecard as lb_scorecard
from msjgym.systems.dispatch.scenarios import DispatchSetting
from msjgym.evaluate.runner import EvaluationResult
from msjgym.systems.msj.scenarios import Scenario
from msjgym.evaluate.statistics import Estimate
from msjgym.systems.dispatch.simulate import METRICS, DispatchResult, simulate
from msjgym.systems.msj.engine import RunConfig

DEFAULT_REPS = 20
LEVEL_FLOOR = 1e-6
"""Queue-length levels are reported up to the last one whose mean fraction of servers is at least this."""


def dispatch_metrics(res: DispatchResult, at_least: int = 0) -> dict[str, Estimate]:
    """The metrics of a dispatch run: :data:`METRICS` and P(Q=k) for k = 0, 1, ... up to the last level holding at
    least :data:`LEVEL_FLOOR` of the servers, or ``at_least`` levels, at most
    :data:`~msjgym.systems.dispatch.scorecard.MAX_LEVELS_SHOWN`."""
    out = dict(res.estimates)
    pmf, ci = res.queue_length_distribution, res.queue_length_ci95
    held = np.flatnonzero(pmf >= LEVEL_FLOOR)
    levels = min(max(int(held[-1]) + 1 if held.size else 0, at_least), lb_scorecard.MAX_LEVELS_SHOWN)
    for k in range(levels):
        out[lb_scorecard.level_metric(k)] = (Estimate(float(pmf[k]), float(ci[k])) if k < pmf.size
                                             else Estimate(0.0, 0.0))
    return out


def evaluate_dispatch(scenario: Scenario, policy: str, *, reps: int | None = None, arrivals: int | None = None,
                      seed: int | None = None, progress: bool = False,
                      references: bool = True) -> EvaluationResult:
    """Simulate ``policy`` (a built-in dispatch policy) on a dispatch scenario and judge the scorecard.

    Args:
        scenario: from :func:`msjgym.systems.msj.scenarios.load_scenario` (an ``lb-*`` built-in).
        reps: replications (default 20, the paper's). arrivals: per replication (default N·10⁴, the paper's).
        seed: root seed (None: a random 32-bit seed, reported). progress: a progress bar over replications.
    """
    setting: DispatchSetting = scenario.model  # type: ignore[assignment]
    setting.model(policy)  # validates the policy's parameters before the references are computed
    refs = lb_scorecard.references(setting, policy) if references else []
    seed = secrets.randbits(32) if seed is None else seed
    start = time.perf_counter()
    res = simulate(policy, setting.servers, setting.lam, setting.dist, reps=DEFAULT_REPS if reps is None else reps,
                   arrivals=arrivals, seed=seed, progress=progress, **setting.policy_params(policy))
    return _result(scenario, res, refs, time.perf_counter() - start, setting.paper_row(policy))


AGENT_REPS = 10
AGENT_ARRIVALS_PER_SERVER = 1_000
"""Defaults for a dispatcher of your own: it decides in Python at every arrival, so 10 replications of 1,000
arrivals per server (a tenth of the paper's run length; raise them with --reps / --jobs)."""


def evaluate_custom_dispatcher(scenario: Scenario, policy: str, *, observation: str = "histogram", levels: int = 8,
                               reps: int | None = None, arrivals: int | None = None,
                               seed: int | None = None, progress: bool = False) -> EvaluationResult:
    """Run a dispatcher of your own (``FILE.py:NAME`` or ``sb3:MODEL.zip``) on a dispatch scenario.

    It sees what a ``msjgym/Dispatch-v0`` agent sees in ``observation`` mode (``levels`` = the histogram length
    L): "sampled" (the queue lengths of ``d`` sampled servers, the scenario's ``d``, default 2), "histogram" (exact
    queue lengths) or "estimates" (push's estimates with the scenario's δ; pull's on ``lb-pull-table3``). The
    scorecard lists what holds for any dispatcher: stability, busy fraction = λ and the information model's message
    rate (the cavity values belong to the paper's policies, not to yours).
    """
    from msjgym.envs.dispatch_agent_runner import evaluate_dispatcher
    setting: DispatchSetting = scenario.model  # type: ignore[assignment]
    information = "pull" if setting.table == 3 and observation == "estimates" else "push"
    info: dict[str, Any] = {}
    if observation == "sampled":
        info["d"] = setting.d
    elif observation == "estimates":
        info = {"delta": setting.delta, "information": information}
        if information == "pull":
            info["delta1"] = setting.delta1
    seed = secrets.randbits(32) if seed is None else seed
    start = time.perf_counter()
    res = evaluate_dispatcher(policy, setting.servers, setting.lam, setting.dist, observation=observation,
                              levels=levels, reps=AGENT_REPS if reps is None else reps,
                              arrivals=AGENT_ARRIVALS_PER_SERVER * setting.servers if arrivals is None else arrivals,
                              seed=seed, progress=progress, **info)
    refs = lb_scorecard.information_references(setting, res.model)
    return _result(scenario, res, refs, time.perf_counter() - start, None)


def _result(scenario: Scenario, res: DispatchResult, refs: list, total: float, row: Any) -> EvaluationResult:
    """The ``EvaluationResult`` of a dispatch run, with the scorecard ``refs`` judged (``row``: the paper's)."""
    wall = sum(r.seconds for r in res.replications)
    metrics = dispatch_metrics(res, sum(r.quantity.startswith("P(Q=") for r in refs))
    per_rep = [{name: float(getattr(r, name)) for name in METRICS} for r in res.replications]
    result = EvaluationResult(
        scenario=scenario.name, policy=res.agent or res.model.policy, params=dict(scenario.params), stable=True,
        metrics=metrics, replications=per_rep, growth_rate=None, unstable_replications=[], growth_rates=[],
        config=RunConfig(jobs=res.arrivals - res.warmup, warmup=res.warmup, batches=1, detect_instability=False),
        reps=len(res.replications), seed=res.seed, events=res.events, wall_seconds=wall,
        compile_seconds=max(0.0, total - wall))
    if refs:
        result.references = lb_scorecard.judge(refs, result, row, res.queue_length_distribution)
    return result
