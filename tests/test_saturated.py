"""Saturated (closed) mode: the throughput of FCFS equals the stability threshold μ of Grosof & Ayhan's Lemma 5.3.

Tolerance: the 99.9 % Student-t CI over 10 replications covers μ.
"""
from __future__ import annotations

import pytest

from conftest import covers, exp_class, model
from msjgym.evaluate.evaluator import evaluate
from msjgym.theory.saturated import one_and_n_throughput


@pytest.mark.parametrize("n, p_n, mu_1, mu_n", [(10, 0.1, 1.0, 1.0), (4, 0.3, 2.0, 0.5), (32, 0.05, 1.0, 4.0)])
def test_fcfs_saturated_throughput_is_lemma_5_3(n, p_n, mu_1, mu_n):
    m = model(n, 1.0, exp_class("1", 1, 1 - p_n, mu_1), exp_class("n", n, p_n, mu_n))
    result = evaluate(m, "fcfs", reps=10, jobs=200_000, seed=41, saturated=True)
    mu = one_and_n_throughput(n, p_n, mu_1, mu_n)
    ok, mean, half = covers([r["throughput"] for r in result.replications], mu)
    assert ok, f"saturated throughput {mean} ± {half} vs Lemma 5.3 μ = {mu}"


def test_saturated_server_filling_keeps_every_server_busy():
    """ServerFilling with a backlog that always needs >= n servers fills all of them (Lemma 7.1)."""
    m = model(8, 1.0, exp_class("1", 1, 0.5), exp_class("8", 8, 0.5))
    result = evaluate(m, "server-filling", reps=3, jobs=50_000, seed=42, saturated=True, backlog=16)
    assert all(r["utilization"] == pytest.approx(1.0, abs=1e-12) for r in result.replications)
