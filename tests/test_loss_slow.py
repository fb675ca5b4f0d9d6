"""Longer statistical validations of the loss system (``python -m pytest -m slow tests/test_loss_slow.py``)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import msjgym
from msjgym.core.estimates import t_interval
from msjgym.systems.loss.model import make_loss_model
from msjgym.systems.loss import theory as th

pytestmark = pytest.mark.slow


def _est(model, policy="greedy", reps=10, jobs=200_000, seed=0):
    rows = msjgym.evaluate(model, policy, reps=reps, jobs=jobs, seed=seed, references=False).replications
    return {k: t_interval(np.array([r[k] for r in rows]), 0.99) for k in rows[0]}


@pytest.mark.parametrize("n", [101, 1001, 10_001, 100_001])
def test_theorem4_and_exact_chain_at_large_n_with_a_partial_job(n):
    model = make_loss_model(n, 2, "n", alpha=0.5, beta=1.0)
    est = _est(model, jobs=max(200_000, 20 * n), seed=n)
    exact = th.greedy_full_access(n, 2, model.lam)
    t4 = th.theorem4_bounds(n, 2, model.lam)
    for name, value in (("blocking_probability", exact.blocking), ("response_time", exact.response_time)):
        assert abs(est[name].mean - value) <= est[name].ci95, name
    assert est["blocking_probability"].mean <= t4.blocking_upper
    assert est["response_time"].mean <= t4.response_upper
    assert est["stein_lhs"].mean <= t4.stein_upper


@pytest.mark.parametrize("k", [1, 2, 3, 7, 20])
@pytest.mark.parametrize("policy", th.POLICIES)
def test_exact_count_chain_d2_n40(k, policy):
    model = make_loss_model(40, 2, k, lam=0.9)
    if policy == "fixed-width" and k < 2:
        pytest.skip("k < d: fixed-width blocks everything")
    est = _est(model, policy, jobs=100_000, seed=k)
    chain = th.exact_chain(40, 2, k, 0.9, policy)
    for name, value in (("blocking_probability", chain.blocking), ("response_time", chain.response_time),
                        ("utilization", chain.busy_fraction), ("stein_lhs", chain.stein_lhs)):
        assert abs(est[name].mean - value) <= est[name].ci95, (name, est[name], value)


@pytest.mark.parametrize("n", [1024, 4096, 16384])
def test_theorem9_setting_below_corollary8(n):
    alpha, beta, d = 0.5, 4.0, 2
    model = make_loss_model(n, d, "n^alpha log n", alpha=alpha, beta=beta)
    est = _est(model, reps=8, jobs=max(200_000, 20 * n), seed=n)
    c8 = th.corollary8_bound(n, d, model.k, alpha, beta)
    assert est["stein_lhs"].mean <= c8.stein_upper
    assert est["blocking_probability"].mean <= min(c8.blocking_upper, 1.0)
    full = th.greedy_full_access(n, d, model.lam)
    assert est["blocking_probability"].mean <= full.blocking + 3 * est["blocking_probability"].ci95 + 1e-6


def test_constant_k_converges_to_fixed_point_as_n_grows():
    fp = th.fixed_point(3, 2, 0.8)
    gaps = []
    for n in (50, 500, 5000):
        est = _est(make_loss_model(n, 2, 3, alpha=0.0, beta=0.2), reps=8, jobs=max(100_000, 40 * n), seed=n)
        gaps.append(abs(est["blocking_probability"].mean - fp.blocking))
    assert gaps[-1] < gaps[0] and gaps[-1] < 0.005
    assert math.isclose(fp.busy_fraction, 0.8 * (1 - fp.busy_fraction ** 3), rel_tol=1e-9)
