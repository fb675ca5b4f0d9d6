"""msjgym.systems.loss.theory: exact solutions agree with each other and satisfy the paper's identities to machine
precision; bounds, asymptotics and the α = 0 erratum."""
from __future__ import annotations

import math

import numpy as np
import pytest

from msjgym.systems.loss import theory as th
from msjgym.theory.queues import erlang_b

CASES = [(12, 3, 12, 0.8, "greedy"), (13, 3, 13, 0.8, "greedy"), (13, 3, 4, 0.8, "greedy"),
         (20, 2, 3, 0.9, "random-width"), (20, 2, 5, 0.7, "fixed-width"), (15, 4, 15, 0.95, "random-width")]


@pytest.mark.parametrize("n,d,k,lam,policy", CASES)
def test_exact_chain_satisfies_the_identities(n, d, k, lam, policy):
    c = th.exact_chain(n, d, k, lam, policy)
    assert c.width_probability.sum() == pytest.approx(1.0, abs=1e-12)
    work, little = th.conservation_residuals(lam, c.blocking, c.busy_fraction, c.response_time,
                                             c.mean_jobs.sum() / n)
    assert abs(work) < 1e-10 and abs(little) < 1e-10
    for i in range(1, d + 1):  # E[i X_i] = nλE[A_i]
        assert i * c.mean_jobs[i] == pytest.approx(n * lam * c.width_probability[i], rel=1e-9, abs=1e-12)
    assert c.stein_lhs == pytest.approx(c.stein_rhs, rel=1e-9)  # Lemma 1, eq. (9)


def test_full_access_closed_forms():
    assert th.greedy_full_access(30, 1, 0.8).blocking == pytest.approx(erlang_b(30, 24.0), rel=1e-14)
    assert th.greedy_full_access(30, 3, 0.8).response_time == 1 / 3
    s = th.greedy_full_access(31, 3, 0.8)  # n mod d = 1: sandwich B(M, a/d) − r/(nλ) <= P_b <= B(M, a/d)
    b = erlang_b(10, 31 * 0.8 / 3)
    assert b - 1 / (31 * 0.8) <= s.blocking <= b and s.response_time > 1 / 3
    assert th.fixed_width_full_access(31, 3, 0.8) == pytest.approx(b, rel=1e-14)


@pytest.mark.parametrize("alpha,beta", [(0.0, 0.3), (0.25, 1.0), (0.5, 1.0), (0.75, 1.0)])
def test_blocking_asymptotics_approach_exact(alpha, beta):
    ratios = []
    for n in (10**3, 10**4):
        exact = th.greedy_full_access(n, 2, th.arrival_fraction(n, alpha, beta)).blocking
        ratios.append(th.blocking_asymptotic(n, 2, alpha, beta) / exact)
    assert abs(ratios[1] - 1) < abs(ratios[0] - 1) + 1e-12 and abs(ratios[1] - 1) < 0.07


def test_theorem4_bounds_hold_for_the_exact_solution():
    for alpha, beta in [(0.0, 0.5), (0.5, 1.0), (0.75, 2.0)]:
        for n in (101, 1001, 10_001):
            lam = th.arrival_fraction(n, alpha, beta)
            exact = th.greedy_full_access(n, 3, lam)
            t4 = th.theorem4_bounds(n, 3, lam)
            assert exact.blocking <= t4.blocking_upper
            assert exact.response_time <= th.theorem4_response_bound(n, 3, lam, exact.blocking)
    assert not th.theorem4_bounds(10, 3, 0.9).condition_holds  # βn^(1−α) = 1 < 2d


def test_corollary8_bound_and_theorem9_conditions():
    c = th.corollary8_bound(4096, 2, math.ceil(64 * math.log(4096)), 0.5, 4.0)
    assert c.stein_upper > 0 and c.exponential_term < c.stein_upper
    assert th.theorem9(0.5, 3.0, 2).applies is False and th.theorem9(0.5, 3.01, 2).applies
    t = th.theorem9(0.0, 0.5, 2)
    assert t.applies and t.blocking_rate_exponent is None and "erratum" in t.note


def test_alpha0_erratum_sampling_term_is_not_o_of_1_over_n():
    """docs/errata.md#loss-thm-9-alpha-0: with α = 0, k = ln n the third term of (35) times n grows without bound."""
    terms = [n * th.corollary8_bound(n, 2, math.ceil(math.log(n)), 0.0, 0.5).exponential_term
             for n in (10**3, 10**5, 10**7)]
    assert terms[0] < terms[1] < terms[2] and terms[2] > 1e4


def test_fixed_point_solves_its_equation_and_mean_field_tends_to_it():
    fp = th.fixed_point(2, 2, 0.9)
    q = fp.busy_fraction
    assert q == pytest.approx(0.9 * (1 - q**2), rel=1e-10) and fp.blocking == pytest.approx(q**2, rel=1e-10)
    mf = th.mean_field_blocking(10**5, 2, 2, 0.9)
    assert mf.blocking == pytest.approx(fp.blocking, rel=1e-3)


def test_bad_inputs_raise():
    for args in [(10, 0, 0.5), (10, 11, 0.5), (10, 2, 1.0), (10, 2, 0.0), (0, 1, 0.5)]:
        with pytest.raises(ValueError):
            th.greedy_full_access(*args)
    with pytest.raises(ValueError, match="k = 11"):
        th.exact_chain(10, 2, 11, 0.5)
    assert np.isnan(th.exact_chain(10, 3, 2, 0.5, "fixed-width").response_time)
