"""Instability detection: a load beyond FCFS's stability region, below capacity."""
from __future__ import annotations

import time

import pytest

from conftest import covers, exp_class, model
from msjgym.evaluate.evaluator import evaluate
from msjgym.api import load_scenario
from msjgym.theory.saturated import one_and_n_throughput


def _one_and_n_beyond_fcfs():
    """The '1 and n' system at 1.2 × the FCFS threshold μ (Lemma 5.3); its load (busy-server fraction) is < 1."""
    mu = one_and_n_throughput(10, 0.1, 1.0, 1.0)
    scenario = load_scenario("one-and-n", {"arrival_rate": 1.2 * mu})
    assert scenario.model.load < 0.7
    return scenario, mu


def test_fcfs_beyond_its_threshold_is_flagged_unstable_quickly():
    scenario, mu = _one_and_n_beyond_fcfs()
    start = time.perf_counter()
    result = evaluate(scenario, "fcfs", reps=10, jobs=10_000_000, seed=31)
    assert time.perf_counter() - start < 10
    assert not result.stable and result.unstable_replications == list(range(10))
    assert result.metrics == {}
    # Above the threshold FCFS completes jobs at rate μ, so the number in system grows at λ − μ.
    ok, mean, half = covers(result.growth_rates, 0.2 * mu)
    assert ok, f"growth {mean} ± {half} vs λ − μ = {0.2 * mu}"


def test_server_filling_is_stable_at_the_same_load():
    scenario, _ = _one_and_n_beyond_fcfs()
    result = evaluate(scenario, "server-filling", reps=10, jobs=200_000, seed=32)
    assert result.stable
    ok, mean, half = covers([r["utilization"] for r in result.replications], scenario.model.load)
    assert ok, (mean, half)


@pytest.mark.parametrize("seed", range(5))
def test_heavy_but_stable_loads_are_not_flagged(seed):
    """No false alarm: an M/H2/1 at ρ = 0.95 with SCV 20 (a slow, large transient from empty) runs to the end."""
    from msjgym.core.distributions import from_spec
    from msjgym.systems.msj.model import JobClass
    h2 = JobClass("h2", 1, 1.0, from_spec({"dist": "hyperexp", "mean": 1.0, "scv": 20.0}))
    result = evaluate(model(1, 0.95, h2), "fcfs", reps=4, jobs=200_000, seed=seed)
    assert result.stable


def test_stable_multiserver_near_capacity_is_not_flagged():
    result = evaluate(model(32, 0.97 * 32, exp_class("a", 1, 1.0)), "fcfs", reps=4, jobs=300_000, seed=33)
    assert result.stable
