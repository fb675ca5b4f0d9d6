"""Systems that are exact classical queues.

Tolerance: each comparison asserts that the 99.9 % Student-t CI over 10 independent replications covers the exact
value (the 95 % CI is what ``msjgym evaluate`` prints; 99.9 % keeps the family of ~20 seeded checks from failing
by chance). Seeds are fixed, so the tests are repeatable. The default suite runs 50,000 jobs a replication (CIs 2×
those of 200,000, still honest: the tolerance is the CI at the size run); ``-m slow`` runs 200,000.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import covers, exp_class, model, skip_unless_applicable
from msjgym.core.distributions import from_spec
from msjgym.evaluate.evaluator import evaluate
from msjgym.api import load_scenario
from msjgym.policies.msj import POLICIES
from msjgym.systems.msj.model import JobClass
from msjgym.theory import queues

REPS, JOBS, SLOW_JOBS = 10, 50_000, 200_000


@pytest.fixture(params=[JOBS, pytest.param(SLOW_JOBS, marks=pytest.mark.slow)], ids=lambda j: f"{j}jobs")
def jobs(request) -> int:
    """Jobs a replication: the default suite's size, and -m slow's."""
    return request.param


def _values(result, name):
    return [r[name] for r in result.replications]


@pytest.mark.parametrize("load", [0.3, 0.7, 0.9])
def test_single_class_fcfs_is_erlang_c(load, jobs):
    """One class of need m on n servers is an M/M/⌊n/m⌋ queue: P(wait) is Erlang C, E[W] its mean wait."""
    n, m, mu = 10, 3, 1.0
    s = n // m
    lam = load * s * mu
    result = evaluate(model(n, lam, exp_class("a", m, 1.0, mu)), "fcfs", reps=REPS, jobs=jobs, seed=11)
    p_wait = queues.erlang_c(s, lam / mu)
    wait = queues.mmc_mean_wait(s, lam, mu)
    ok, mean, half = covers(_values(result, "queueing_probability"), p_wait)
    assert ok, f"P(wait) {mean} ± {half} vs Erlang C {p_wait}"
    ok, mean, half = covers(_values(result, "waiting_time"), wait)
    assert ok, f"E[W] {mean} ± {half} vs {wait}"


def test_half_servers_need_is_mm2(jobs):
    """Need n/2 gives an M/M/2 (Wang, Xie & Harchol-Balter §1) with P(wait) = 2ρ²/(1+ρ), for any even n."""
    rho = 0.6
    result = evaluate(model(64, 2 * rho, exp_class("half", 32, 1.0)), "fcfs", reps=REPS, jobs=jobs, seed=12)
    ok, mean, half = covers(_values(result, "queueing_probability"), 2 * rho**2 / (1 + rho))
    assert ok, (mean, half)


# Size-based policies (ServerFilling-SRPT, -Gittins; priority, SJF by default) do not serve one server in arrival
# order: their own checks are in tests/test_server_filling_srpt.py and tests/test_priority.py.
ARRIVAL_ORDER_ON_ONE_SERVER = sorted(set(POLICIES) - {"server-filling-srpt", "server-filling-gittins",
                                                              "priority"})


@pytest.mark.parametrize("policy", ARRIVAL_ORDER_ON_ONE_SERVER)
def test_one_server_two_classes_is_mg1(policy, jobs):
    """n = 1: every built-in policy serves jobs one at a time in arrival order: an M/G/1 (Pollaczek–Khinchine)."""
    det = from_spec({"dist": "det", "value": 0.5})
    lognormal = from_spec({"dist": "lognormal", "mean": 2.0, "scv": 3.0})
    classes = (JobClass("det", 1, 0.7, det), JobClass("lognormal", 1, 0.3, lognormal))
    mean = 0.7 * det.mean + 0.3 * lognormal.mean
    second = 0.7 * det.second_moment + 0.3 * lognormal.second_moment
    lam = 0.6 / mean
    skip_unless_applicable(policy, model(1, lam, *classes))  # msfq: its default threshold 1 needs n >= 2
    result = evaluate(model(1, lam, *classes), policy, reps=REPS, jobs=jobs, seed=13)
    exact = queues.mg1_mean_number_in_system(lam, mean, second)
    ok, got, half = covers(_values(result, "number_in_system"), exact)
    assert ok, f"{policy}: E[N] {got} ± {half} vs Pollaczek–Khinchine {exact}"


@pytest.mark.parametrize("q, name", [(0.95, "response_time_p95"), (0.99, "response_time_p99")])
def test_mm1_response_time_percentiles(q, name, jobs):
    """FCFS M/M/1: the response time is Exp(μ − λ), so its q-quantile is −ln(1 − q)/(μ − λ).

    Tolerance: the 99.9 % CI over replications plus the histogram's relative resolution (2.3 %, documented).
    """
    from msjgym.core.histogram import RELATIVE_RESOLUTION
    lam, mu = 0.7, 1.0
    result = evaluate(model(1, lam, exp_class("a", 1, 1.0, mu)), "fcfs", reps=REPS, jobs=jobs, seed=14)
    exact = -np.log(1 - q) / (mu - lam)
    ok, mean, half = covers(_values(result, name), exact)
    assert abs(mean - exact) <= half + RELATIVE_RESOLUTION * exact, f"{name} {mean} ± {half} vs {exact}"


@pytest.mark.slow
def test_confidence_intervals_have_nominal_coverage():
    """A long validation (400 evaluations); the default suite checks CIs against exact values in the tests above
    (``test_single_class_fcfs_is_erlang_c``, ``test_one_server_two_classes_is_mg1``, ...).

    Over 400 independent runs (M/M/3 at load 0.7, 10 replications each) the reported 95 % CI covers the exact
    Erlang-C values about 95 % of the time: within 3.3 binomial standard errors (±3.6 points) of 95 %."""
    scenario = load_scenario(str(Path(__file__).resolve().parents[1] / "examples" / "single_class.toml"))
    lam = scenario.model.arrival_rate
    exact = {"queueing_probability": queues.erlang_c(3, lam), "waiting_time": queues.mmc_mean_wait(3, lam, 1.0)}
    runs = 400
    hits = dict.fromkeys(exact, 0)
    for seed in range(runs):
        result = evaluate(scenario, "fcfs", reps=10, jobs=10_000, seed=70_000 + seed, references=False)
        for name, value in exact.items():
            est = result.metrics[name]
            hits[name] += abs(est.mean - value) <= est.ci95
    band = 3.3 * np.sqrt(0.95 * 0.05 / runs)
    for name, count in hits.items():
        assert abs(count / runs - 0.95) <= band, f"{name}: coverage {count / runs:.3f}"
