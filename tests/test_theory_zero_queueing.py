"""Zero-queueing results of Wang, Xie & Harchol-Balter (msjgym.systems.msj.theory.zero_queueing).

Formulas against hand-computed values, the paper's Table 3 configurations (§7, against Thms 4.1 and 4.2), the regime
classifier (§1, Fig. 3), the fluid solution (eq. (16) solves (7)) and the single-class Erlang C reference.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from msjgym.systems.msj.theory.zero_queueing import (
    QueueingProbabilityBound,
    ScalingRegime,
    classify_regime,
    fluid_rhs,
    fluid_solution,
    lemma_5_3_bound,
    lemma_5_4_bound,
    queueing_probability_bound,
    single_class_load_limit,
    single_class_queueing_probability,
    single_class_stable,
    stability_sufficient,
    sufficient_load_limit,
)

# Table 3 of the paper (§7): n, (m1, m2, m3) for Sets I and II, and the printed loads.
TABLE_3 = [
    (64, (3, 6, 8), 0.8351, 0.7128),
    (256, (3, 8, 16), 0.8564, 0.8105),
    (1024, (3, 10, 32), 0.8750, 0.8750),
    (4096, (3, 12, 64), 0.8912, 0.9175),
    (16384, (3, 14, 128), 0.9053, 0.9456),
    (65536, (3, 16, 256), 0.9175, 0.9641),
]
SET_1 = ScalingRegime(beta=0.25, alpha=0.1, gamma=0.5, c=1.0)
SET_2 = ScalingRegime(beta=1.0, alpha=0.3, gamma=0.5, c=1.0)


# =====================================================================================================================
# Stability


def test_stability_conditions_by_hand():
    assert sufficient_load_limit(8, 64) == 0.875
    assert stability_sufficient(0.87, 8, 64) and not stability_sufficient(0.875, 8, 64)
    assert single_class_load_limit(3, 10) == pytest.approx(0.9)        # M/M/3 with λm/(nμ) < 9/10
    assert single_class_stable(0.89, 3, 10) and not single_class_stable(0.9, 3, 10)
    assert single_class_load_limit(4, 16) == 1.0
    for n, m in [(10, 3), (64, 8), (100, 7), (9, 9)]:                    # Thm 4.1 is weaker than the exact K = 1 limit
        assert sufficient_load_limit(m, n) < single_class_load_limit(m, n)


@pytest.mark.parametrize("n, needs, rho_1, rho_2", TABLE_3)
def test_table_3_satisfies_theorem_4_1(n, needs, rho_1, rho_2):
    """Every Table 3 configuration of Sets I and II satisfies ρ < 1 − m_max/n (Thm 4.1, eq. (4)), and the loads are
    the printed ones (1 − n^(−0.1)/4 and 1 − n^(−0.3), to 4 decimals)."""
    assert SET_1.load(n) == pytest.approx(rho_1, abs=5e-5)
    assert SET_2.load(n) == pytest.approx(rho_2, abs=5e-5)
    assert SET_1.max_need(n) == needs[2] == max(needs)
    assert stability_sufficient(SET_1.load(n), max(needs), n)
    assert stability_sufficient(SET_2.load(n), max(needs), n)


# =====================================================================================================================
# Queueing-probability bound (Thm 4.2) and the drift lemmas


def test_queueing_probability_bound_by_hand():
    """n = 16, needs (1, 4), ρ = 1/2: (5) = (3·2·√(1/4) + 1/4)/(1/2) = 6.5; combined = (4 + 3(4 + 8))/8 = 5."""
    bound = queueing_probability_bound(0.5, [1, 4], 16)
    assert bound.value == pytest.approx(6.5)
    assert bound.combined == pytest.approx(5.0)
    assert bound.vacuous and bound.combined_vacuous
    typo_eq_2 = 3 * 2 * math.sqrt(4 / 16 + 4 / 16) / 0.5       # eq. (2)'s misprint: docs/errata.md#zero-queueing-eq-2
    assert bound.value != pytest.approx(typo_eq_2)


def test_queueing_probability_bound_non_vacuous_and_m_max_form():
    """n = 10⁶, one class of need 1, ρ = 1/2: (3√1e−6 + 1e−6)/(1/2) = 0.006002 (< 1); an int ``needs`` is m_max."""
    bound = queueing_probability_bound(0.5, [1], 10**6)
    assert bound == QueueingProbabilityBound(value=pytest.approx(0.006002), combined=pytest.approx(0.006002),
                                             vacuous=False, combined_vacuous=False)
    by_m_max = queueing_probability_bound(0.5, 4, 16, K=2)
    assert by_m_max.value == pytest.approx(6.5) and by_m_max.combined == pytest.approx(6.5)
    assert queueing_probability_bound(0.3, [2, 5, 9], 100).combined < queueing_probability_bound(0.3, [2, 5, 9],
                                                                                                100).value


@pytest.mark.parametrize("n, needs, rho_1, rho_2", TABLE_3)
def test_bound_is_vacuous_at_every_table_3_size(n, needs, rho_1, rho_2):
    """Thm 4.2: (5) and the combined form of (13)+(14) exceed 1 at every simulated size (§7), in Sets I and II."""
    for rho in (SET_1.load(n), SET_2.load(n)):
        bound = queueing_probability_bound(rho, needs, n)
        assert bound.vacuous and bound.combined_vacuous
        assert 1 < bound.combined < bound.value


def test_bound_requires_theorem_4_1():
    with pytest.raises(ValueError, match="1 − m_max/n"):
        queueing_probability_bound(0.875, [1, 8], 64)
    with pytest.raises(ValueError, match="K"):
        queueing_probability_bound(0.5, [1, 4], 16, K=3)
    with pytest.raises(ValueError, match="give K"):
        queueing_probability_bound(0.5, 4, 16)
    with pytest.raises(ValueError, match="needs"):
        queueing_probability_bound(0.5, [1, 17], 16)


def test_lemma_bounds_by_hand():
    assert lemma_5_4_bound(100, 4) == pytest.approx(60.0)              # 3√400
    # n = 100, needs (1, 10), rates (0.5, 2), ρ = 1/2: B = 90/0.5 = 180, n(1−ρ) − m_max = 40, nρ = 50.
    assert lemma_5_3_bound(100, [1, 10], [0.5, 2.0], 0.5) == pytest.approx(180 + 2 * 20 * 50 / 40)  # v = 10/0.5
    assert lemma_5_3_bound(100, [1, 10], [0.5, 2.0], 0.5, exact_v_max=True) == pytest.approx(180 + 2 * 5 * 50 / 40)
    with pytest.raises(ValueError, match="n\\(1 − ρ\\) − m_max"):
        lemma_5_3_bound(100, [1, 10], [0.5, 2.0], 0.9)


# =====================================================================================================================
# Single-class exact reference


@pytest.mark.parametrize("n", [2, 8, 64, 1000])
@pytest.mark.parametrize("rho", [0.1, 0.5, 0.9])
def test_single_class_half_need_is_mm2(n, rho):
    """m = n/2: an M/M/2 (the paper's §1 example) whose P_Q = 2ρ²/(1 + ρ) (Erlang C), for every even n."""
    assert single_class_queueing_probability(n, n // 2, rho) == pytest.approx(2 * rho**2 / (1 + rho), rel=1e-12)


def test_single_class_erlang_c_by_hand():
    """n = 10, m = 3, ρ = 0.6: M/M/3 with a = 2 Erlangs, C(3, 2) = 4/9."""
    assert single_class_queueing_probability(10, 3, 0.6) == pytest.approx(4 / 9, rel=1e-12)
    with pytest.raises(ValueError, match="unstable"):
        single_class_queueing_probability(10, 3, 0.9)


def test_single_class_threshold_sharpness():
    """m = √n, ρ = 1 − n^(−α)/2 (with one class the threshold 2α + γ < 1 of §1 is tight): P_Q falls to 0 when
    2α + γ < 1, stays ≈ constant at 2α + γ = 1, and rises when 2α + γ > 1."""
    sizes = [4**k for k in range(3, 10)]

    def p_q(alpha: float) -> np.ndarray:
        r = ScalingRegime(0.5, alpha, 0.5)
        return np.array([single_class_queueing_probability(n, r.max_need(n), r.load(n)) for n in sizes])

    below, at, above = p_q(0.1), p_q(0.25), p_q(0.4)
    assert np.all(np.diff(below) < 0) and below[-1] < 1e-3
    assert np.ptp(at) < 0.01
    assert np.all(np.diff(above) > 0)


# =====================================================================================================================
# Fluid limit


def test_fluid_solution_solves_the_ode():
    """(16) satisfies ẏ = 1 − min{μy, 1/ρ_i} (central differences) and tends to 1/μ_i."""
    rates, loads = np.array([0.25, 0.5, 1.0]), np.array([0.3, 0.3, 0.3])
    y0 = [0.0, 1.0 / (0.5 * 0.3), 3.0]                                  # empty, at the limit 1/(μρ_i), in between
    t = np.linspace(0.1, 20.0, 200)
    h = 1e-5
    slope = (fluid_solution(t + h, y0, rates, loads) - fluid_solution(t - h, y0, rates, loads)) / (2 * h)
    np.testing.assert_allclose(slope, fluid_rhs(fluid_solution(t, y0, rates, loads), rates, loads), atol=1e-7)
    np.testing.assert_allclose(fluid_solution(0.0, y0, rates, loads), y0)
    np.testing.assert_allclose(fluid_solution(200.0, y0, rates), 1.0 / rates, rtol=1e-12)
    np.testing.assert_allclose(fluid_solution(2.0, [0, 0, 0], rates)[None], [(1 - np.exp(-rates * 2.0)) / rates])
    assert fluid_solution(t, y0, rates).shape == (t.size, 3)


def test_fluid_rhs_by_hand():
    """ẏ = 1 − min{μy, 1/ρ}: μ = 1, ρ = 0.5: y = 1 → 0; y = 0 → 1; y = 5 → 1 − 2 = −1 (capped at n/m_i servers)."""
    np.testing.assert_allclose(fluid_rhs([[1.0], [0.0], [5.0]], [1.0], [0.5]), [[0.0], [1.0], [-1.0]])


def test_fluid_solution_validity_range():
    with pytest.raises(ValueError, match=r"1/\(μ_i ρ_i\)"):
        fluid_solution(1.0, [0.0, 10.0], [1.0, 0.5], loads=[0.2, 0.3])
    with pytest.raises(ValueError, match="t ="):
        fluid_solution(-1.0, [0.0], [1.0])


# =====================================================================================================================
# Scaling regimes


@pytest.mark.parametrize("alpha, gamma, region, diminishing", [
    (0.0, 0.0, 1, True),
    (0.0, 0.5, 2, True),
    (0.0, 1.0, 2, False),     # K = 1: an M/M/s with constant s at constant load
    (0.4, 0.0, 3, True),
    (0.5, 0.0, 3, False),     # Halfin–Whitt
    (0.1, 0.5, 4, True),      # Set I
    (0.3, 0.5, 4, False),     # Set II
    (0.25, 0.5, 4, False),    # the boundary 2α + γ = 1
])
def test_classify_regime(alpha, gamma, region, diminishing):
    c = classify_regime(alpha, gamma)
    assert (c.region, c.diminishing, c.covered_by_theorem_4_2) == (region, diminishing, diminishing)
    assert c.bound_exponent == pytest.approx((1 - 2 * alpha - gamma) / 2)
    assert "K = 1" in c.tightness


def test_scaling_regime_sets():
    assert SET_1.classify().region == 4 and SET_1.classify().diminishing
    assert SET_1.classify().bound_exponent == pytest.approx(0.15)
    assert not SET_2.classify().diminishing
    assert SET_1.theorem_4_1_eventually() and SET_2.theorem_4_1_eventually()
    assert not ScalingRegime(0.5, 0.6, 0.5).theorem_4_1_eventually()          # α + γ > 1
    assert ScalingRegime(0.5, 0.0, 1.0, c=0.25).theorem_4_1_eventually()      # α + γ = 1, β > c
    assert not ScalingRegime(0.5, 0.0, 1.0, c=0.5).theorem_4_1_eventually()   # α + γ = 1, β = c
    assert ScalingRegime(0.5, 0.0, 0.25, c=3.0).max_need(64) == 8             # round(3·64^(1/4)) = round(8.49)


@pytest.mark.parametrize("kwargs", [{"beta": 0.0}, {"beta": 1.5}, {"alpha": -0.1}, {"gamma": 1.2}, {"c": 0.0}])
def test_scaling_regime_rejects_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        ScalingRegime(**({"beta": 0.5, "alpha": 0.1, "gamma": 0.5, "c": 1.0} | kwargs))
    with pytest.raises(ValueError):
        classify_regime(0.1, 1.5)
