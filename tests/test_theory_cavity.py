"""Cavity fixed points of push, pull, water filling and resource pooling (Hellemans, Kielanski & Van Houdt).

First the solver reproduces the 16 "∞" values of Tables 1–4 (§8) to four decimals. Then the
closed forms against the numerical fixed points, the bounds against both, limits, and input errors.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from msjgym.core.distributions import HyperExponential, PhaseType
from msjgym.systems.dispatch.distributions import paper_law, parse_paper_law, ph_arrays, z_epsilon
from msjgym.systems.dispatch.params import pull_update_rates, water_filling_batch_size, water_filling_sample_size
from msjgym.errors import ScenarioError
from msjgym.systems.dispatch import cavity as cv
from msjgym.systems.dispatch import cavity_formulas as cf
from msjgym.systems.dispatch.paper_tables import TABLE_ROWS, cavity_column, cavity_fixed_point, settings

LAWS = ["exp", "hyperexp(f=1/2, scv=10)", "hyperexp(f=0.2, scv=4)", "erlang(3)", "hypererlang(2, 5, 0.25)",
        "z(eps=0.1)"]


def random_ph(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A random order-n PH law rescaled to mean 1."""
    alpha = rng.dirichlet(np.ones(n))
    s = rng.uniform(0.0, 2.0, (n, n)) * (rng.random((n, n)) < 0.6)
    np.fill_diagonal(s, 0.0)
    exits = rng.uniform(0.05, 2.0, n)
    np.fill_diagonal(s, -(s.sum(axis=1) + exits))
    mean = alpha @ np.linalg.solve(-s, np.ones(n))
    return alpha, s * mean


def y_of(size, delta: float) -> float:
    return cv.size_below_timer_probability(size, delta)


# =====================================================================================================================
# The 16 "∞" values of Tables 1–4


@pytest.mark.parametrize("row", settings(), ids=lambda r: f"table{r.table}-{r.dist.split('(')[0]}")
def test_cavity_reproduces_paper_infinity_column(row):
    fp = cavity_fixed_point(row)
    assert fp.converged and fp.residual < 1e-12 and fp.balance_residual < 1e-12
    assert f"{fp.mean_response_time:.4f}" == f"{row.cavity:.4f}", (row.label, fp.mean_response_time, row.cavity)
    assert abs(fp.mean_response_time - row.cavity) <= 0.5e-4
    assert abs(fp.queue_length_pmf.sum() - 1.0) < 1e-12 and (fp.queue_length_pmf >= 0).all()


def test_table_transcription_is_consistent():
    assert len(TABLE_ROWS) == 64 and len(settings()) == 16
    for row in TABLE_ROWS:                 # the printed rel.err.% follows from the printed sim and ∞ columns
        assert abs(abs(row.sim - row.cavity) / row.cavity * 100 - row.rel_err) < 6e-3, row
        params = row.scenario_params()
        if row.policy == "water-filling":   # printed M = C·log10 N, and K = (δ/λ)M is an integer
            assert params["batch_size"] == row.batch_size
            assert params["sample_size"] == round(row.param / row.lam * row.batch_size)
        if row.policy == "pull":
            assert params["delta1"] == 0.0 and params["delta0"] == pytest.approx(row.param / (1 - row.lam))
    computed = dict((row.setting, value) for row, value in cavity_column(settings()))
    assert len(computed) == 16


# =====================================================================================================================
# Job-size laws by the paper's names


@pytest.mark.parametrize("name", LAWS + ["det", "hyperexp(f=1/250, scv=250)"])
def test_paper_laws_have_mean_one(name):
    assert paper_law(name).mean == pytest.approx(1.0, rel=1e-12)


def test_paper_law_parametrisations():
    h2 = paper_law("h2(f=1/2, scv=15)")
    assert h2 == paper_law({"dist": "hyperexp", "f": 0.5, "scv": 15}) == HyperExponential.from_mean_scv(1, 15, 0.5)
    assert h2.scv == pytest.approx(15) and h2.probs[0] / h2.rates[0] == pytest.approx(0.5)
    assert paper_law("hypererlang(k=2, l=5, p=0.25)").scv == pytest.approx(0.25 / 2 + 0.75 / 5)
    assert paper_law("Erlang(6)").scv == pytest.approx(1 / 6)
    assert parse_paper_law("hypererlang(3, 5, p=0.6)") == ("hypererlang", {"k": 3, "l": 5, "p": 0.6})
    alpha, s = ph_arrays("z(0.5)")
    assert np.allclose(s, -np.eye(2)) and np.allclose(alpha, [0.5, 0.5])     # Z(1/2) = Exp(1)
    for eps in (0.3, 0.05, 1e-3):
        z = z_epsilon(eps)
        assert z.mean == pytest.approx(1.0) and z.probs[1] / z.rates[1] == pytest.approx(1 - eps)


@pytest.mark.parametrize("delta", [0.15, 0.5, 1.2])
def test_y_closed_forms(delta):
    assert y_of("exp", delta) == pytest.approx(1 / (1 + delta), rel=1e-13)
    assert y_of("erlang(4)", delta) == pytest.approx((4 / (4 + delta)) ** 4, rel=1e-13)
    assert y_of("det", delta) == pytest.approx(math.exp(-delta))
    eps = 0.2
    z = (1 - eps) ** 2 / ((1 - eps) + delta * eps) + eps**2 / (eps + (1 - eps) * delta)
    assert y_of("z(0.2)", delta) == pytest.approx(z, rel=1e-13)
    for name in LAWS:                     # Lemma 4.2: 1 + δα'(−S)⁻¹1 = δ/(1 − y)
        alpha, s = ph_arrays(name)
        residual = cv.timer_phase_distribution(name, delta) @ np.linalg.solve(-s, np.ones(alpha.size))
        assert 1 + delta * residual == pytest.approx(delta / (1 - y_of(name, delta)), rel=1e-12)
        assert math.exp(-delta) <= y_of(name, delta) < 1


# =====================================================================================================================
# Push and water filling: closed forms against the chains


def _push_reduced_idle(m: int, delta: float, name: str) -> np.ndarray:
    """Σ_{q<i} π_q, i = 1..m, of the push chain at ν = 0, solved numerically."""
    alpha, s = ph_arrays(name)
    pmf = cv._pmf(cv._estimate_chain(m, alpha, s, delta=delta), 0.0)
    return np.cumsum(pmf)[:m]


@pytest.mark.parametrize("name", LAWS)
def test_push_prop41_and_thresholds_match_chain(name):
    delta = 0.4
    y = y_of(name, delta)
    for m in (1, 2, 3, 6):
        chain = _push_reduced_idle(m, delta, name)
        formula = [cv.push_idle_cumulative(i, m, delta, name) for i in range(1, m + 1)]
        assert np.allclose(chain, formula, rtol=1e-11, atol=1e-14)
        assert 1 - chain[0] == pytest.approx(cv.push_load_threshold(m, delta, y), rel=1e-11)   # Cor 4.5, eq. 12
        lam_m = cv.push_load_threshold(m, delta, y)
        assert cv.push_m_tilde(lam_m, delta, y) == pytest.approx(m, abs=1e-9)
        assert cv.push_delta_threshold(m, lam_m, y) == pytest.approx(delta, rel=1e-9)        # eq. 13


@pytest.mark.parametrize("lam", [0.3, 0.6, 0.85, 0.95])
def test_push_m_tilde_special_cases(lam):
    delta = 0.3
    assert cv.push_m_tilde(lam, delta, 1 / (1 + delta)) == pytest.approx(-math.log(1 - lam) / math.log(1 + delta))
    for k in (1, 3, 8):
        assert cv.erlang_m_tilde(lam, delta, k) == pytest.approx(
            cv.push_m_tilde(lam, delta, y_of(f"erlang({k})", delta)), rel=1e-12)
    assert cv.erlang_m_tilde(lam, delta, 10**6) == pytest.approx(cv.deterministic_m_tilde(lam, delta), rel=1e-5)
    assert cv.deterministic_m_tilde(lam, delta) == pytest.approx(cv.push_m_tilde(lam, delta, math.exp(-delta)))


@pytest.mark.parametrize("policy", ["push", "water-filling"])
@pytest.mark.parametrize("name", LAWS)
def test_push_and_water_filling_fixed_point_vs_theorems(policy, name):
    delta = 0.35
    y = y_of(name, delta)
    for lam in (0.2, 0.5, 0.8, 0.9):
        fp = cv.cavity(policy, lam, name, delta=delta)
        mt = cv.push_m_tilde(lam, delta, y)
        assert fp.converged and fp.m_tilde == pytest.approx(mt)
        assert fp.max_queue_length == max(math.ceil(mt - 1e-9), 1)               # Thm 4.3
        lo, hi = cv.push_max_queue_bounds(lam, delta)                             # Thm 4.7 (ceiling erratum)
        assert lo <= fp.max_queue_length <= max(hi, 1)
        q_lo, q_hi = cv.push_mean_queue_bounds(lam, delta, y)                     # Thm 4.9
        assert q_lo - 1e-12 <= fp.mean_queue_length <= q_hi + 1e-12
        assert fp.mean_queue_length <= cv.push_mean_queue_upper_bound(lam, delta) + 1e-12


def test_push_equals_water_filling_at_integer_m_tilde():
    delta = 0.5
    for name in ("exp", "hyperexp(f=1/2, scv=10)", "erlang(3)"):
        y = y_of(name, delta)
        for m in (1, 2, 4):
            lam = cv.push_load_threshold(m, delta, y)
            push = cv.push_cavity(lam, delta, name)
            wf = cv.water_filling_cavity(lam, delta, name)
            assert push.value == 0.0 and wf.value == 0.0 and push.max_queue_length == wf.max_queue_length == m
            assert push.mean_queue_length == pytest.approx(m - lam / delta, rel=1e-10)   # Thm 4.9 equality
            assert np.allclose(push.queue_length_pmf, wf.queue_length_pmf, atol=1e-12)


def test_push_exponential_mean_queue_matches_reference_bounds():
    # exponential sizes: Thm 4.9 bounds in the form of [23]; E[Q] strictly inside off the thresholds
    delta, lam = 0.3, 0.9
    fp = cv.push_cavity(lam, delta, "exp")
    m = fp.m
    lo = m - (1 - (1 + delta) ** -m) / delta
    hi = (m + 1) - (1 - (1 + delta) ** -(m + 1)) / delta
    assert lo < fp.mean_queue_length < hi


@pytest.mark.parametrize("name", ["exp", "hyperexp(f=1/2, scv=10)", "erlang(3)", "hypererlang(3, 5, 0.6)"])
def test_water_filling_theorems_5_1_and_5_2(name):
    delta = 0.4
    y = y_of(name, delta)
    for lam in (0.55, 0.8, 0.93):
        fp = cv.water_filling_cavity(lam, delta, name)
        if fp.m < 1:
            continue
        assert cv.water_filling_c(lam, delta, name) == pytest.approx(fp.value, abs=1e-10)      # eq. 20
        masses = cv.water_filling_queue_masses(lam, delta, fp.value, fp.m, y)                   # eq. 21–23
        assert np.allclose(masses, fp.queue_length_pmf, atol=1e-10)
        if name == "exp":
            assert fp.value == pytest.approx(cv.water_filling_exponential_c(lam, delta), abs=1e-10)


def test_prop_4_8_erlang_minimises_max_queue_among_order_k():
    rng = np.random.default_rng(7)
    delta, lam = 0.3, 0.85
    for k in (2, 3, 4):
        bound = math.ceil(cv.erlang_m_tilde(lam, delta, k))
        for _ in range(5):
            law = random_ph(rng, k)
            assert bound <= math.ceil(cv.push_m_tilde(lam, delta, y_of(law, delta)))


def test_random_ph_laws_respect_push_bounds_and_balance():
    rng = np.random.default_rng(11)
    for _ in range(6):
        law = random_ph(rng, int(rng.integers(2, 5)))
        lam, delta = float(rng.uniform(0.3, 0.92)), float(rng.uniform(0.1, 1.0))
        fp = cv.push_cavity(lam, delta, law)
        y = y_of(law, delta)
        assert fp.converged
        lo, hi = cv.push_mean_queue_bounds(lam, delta, y)
        assert lo - 1e-12 <= fp.mean_queue_length <= hi + 1e-12
        bl, bu = cv.push_max_queue_bounds(lam, delta)
        assert bl <= fp.max_queue_length <= max(bu, 1)


def test_z_epsilon_approaches_push_upper_bound():
    # Thm 4.7: ⌈m̃⌉ → ⌈λ/((1 − λ)δ)⌉ as ε → 0, above the floor the theorem prints (erratum)
    lam, delta = 0.9, 0.4
    upper = cv.push_max_queue_bounds(lam, delta)[1]
    assert upper == math.ceil(lam / ((1 - lam) * delta)) == 23 > math.floor(lam / ((1 - lam) * delta))
    m_tildes = [cv.push_m_tilde(lam, delta, y_of(z_epsilon(eps), delta)) for eps in (0.1, 1e-2, 1e-4, 1e-7)]
    assert all(a < b for a, b in zip(m_tildes, m_tildes[1:]))
    assert math.ceil(m_tildes[-1]) == upper and m_tildes[-1] < lam / ((1 - lam) * delta)


def test_push_heavy_traffic_limit():
    # Cor 4.10 via eq. (8): m̃·log(1/y) − log(1/(1 − λ)) → log((1 − y)/(δy))
    delta = 0.5
    for name in ("exp", "hyperexp(f=1/2, scv=10)", "erlang(3)"):
        y = y_of(name, delta)
        lam = 1 - 1e-10
        gap = cv.push_m_tilde(lam, delta, y) * math.log(1 / y) - math.log(1 / (1 - lam))
        assert gap == pytest.approx(math.log((1 - y) / (delta * y)), abs=1e-8)
        assert cv.push_heavy_traffic_slope(y) == pytest.approx(1 / math.log(1 / y))


@pytest.mark.parametrize("name", LAWS)
def test_large_probe_rate_gives_vanishing_wait(name):
    # δ >= λ/(1 − λ): every job finds an idle server (JSQ/JIQ-like): max queue 1, E[R] = 1
    lam = 0.8
    for policy in ("push", "water-filling"):
        fp = cv.cavity(policy, lam, name, delta=lam / (1 - lam) * 1.01)
        assert fp.max_queue_length == 1 and fp.mean_response_time == pytest.approx(1.0, rel=1e-10)
    fp = cv.pull_cavity_from_rate(lam, 0.81, name)
    assert fp.max_queue_length == 1 and fp.mean_response_time == pytest.approx(1.0, rel=1e-10)
    for delta in (0.8, 0.9):             # δ₁ = 1 (JIQ, δ >= λ; δ = λ gives δ₀ = 0): no waiting either
        fp = cv.pull_cavity_from_rate(lam, delta, name, delta1=1.0)
        assert fp.converged and fp.max_queue_length == 1 and fp.mean_response_time == pytest.approx(1.0)
    # and the mean response time decreases to 1 as δ grows
    values = [cv.push_cavity(lam, d, name).mean_response_time for d in (0.1, 0.4, 1.0, 3.0)]
    assert all(a >= b - 1e-12 for a, b in zip(values, values[1:]))


# =====================================================================================================================
# Pull


def test_pull_prop_6_1_and_eq_31_match_chain():
    for name in ("exp", "hyperexp(f=1/2, scv=10)", "erlang(3)"):
        alpha, s = ph_arrays(name)
        for delta0, delta1 in ((0.7, 0.0), (0.5, 0.2), (0.3, 0.3), (2.0, 0.6)):
            for m in (1, 2, 5):
                chain = cv._estimate_chain(m, alpha, s, delta0=delta0, delta1=delta1, pull=True)
                pmf = cv._pmf(chain, 0.0)
                cum = np.cumsum(pmf)
                formula = [cv.pull_idle_cumulative(i, m, delta0, delta1) for i in range(1, m + 2)]
                assert np.allclose(cum[: m + 1], formula, rtol=1e-11, atol=1e-14)
                assert 1 - pmf[0] == pytest.approx(cv.pull_load_threshold(m, delta0, delta1), rel=1e-11)
                assert np.arange(pmf.size) @ pmf == pytest.approx(cv.pull_mean_queue_at_level(m, delta0, delta1),
                                                                   rel=1e-11)


def test_pull_insensitivity_and_bounds():
    for delta0, delta1 in ((0.6, 0.0), (0.5, 0.25), (0.4, 0.4)):
        for lam in (0.6, 0.8, 0.9):
            fps = [cv.pull_cavity(lam, delta0, delta1, name) for name in LAWS]
            mt = cv.pull_m_tilde(lam, delta0, delta1)
            assert {fp.max_queue_length for fp in fps} == {max(math.ceil(mt - 1e-9), 1)}   # Thm 6.2
            lo, hi = cv.pull_mean_queue_bounds(lam, delta0, delta1)                         # Thm 6.4
            assert all(fp.converged and lo - 1e-12 <= fp.mean_queue_length <= hi + 1e-12 for fp in fps)
    # at λ = λ←_m the whole distribution is insensitive (Table 3's Erlang(3) row: m̃ = λ/δ = 5)
    fps = [cv.pull_cavity_from_rate(0.75, 0.15, name) for name in LAWS]
    assert all(fp.value == 0.0 and fp.max_queue_length == 5 for fp in fps)
    assert all(np.allclose(fp.queue_length_pmf, fps[0].queue_length_pmf, atol=1e-12) for fp in fps)
    assert fps[0].mean_response_time == pytest.approx(3.0, rel=1e-12)


def test_pull_m_tilde_special_cases():
    lam, delta = 0.8, 0.3
    d0, d1 = pull_update_rates(lam, delta, 0.0)
    assert cv.pull_m_tilde(lam, d0, d1) == pytest.approx(lam / delta)
    assert cv.pull_m_tilde(lam, delta, delta) == pytest.approx(math.log(1 - lam) / math.log(1 - delta))
    assert cv.pull_m_tilde(lam, *pull_update_rates(lam, delta, 1e-9)) == pytest.approx(lam / delta, rel=1e-6)
    # ⌈m̃⌉ increases with δ₁ at fixed δ, as the paper's §3 says (the derivative printed in §6.1 is garbled)
    m_tildes = [cv.pull_m_tilde(lam, *pull_update_rates(lam, delta, d1)) for d1 in (0.0, 0.1, 0.2, 0.3)]
    assert all(a < b for a, b in zip(m_tildes, m_tildes[1:]))
    # δ₁ = 0 heavy traffic: max queue ⌈λ/δ⌉ → ⌈1/δ⌉
    assert cv.pull_cavity_from_rate(1 - 1e-6, 0.3, "exp").max_queue_length == math.ceil(1 / 0.3)


# =====================================================================================================================
# Resource pooling


@pytest.mark.parametrize("name", LAWS)
def test_pooling_eq_37_matches_mph1n_chain(name):
    lam, p = 0.8, 0.2
    alpha, s = ph_arrays(name)
    for n in range(1, 7):
        chain_idle = cv._pmf(cv._level_chain(n - 1, alpha, s, lam=lam, p=p, pooling=True), 0.0)[0]
        assert cv.pooling_idle_probability(n, lam, p, name) == pytest.approx(chain_idle, rel=1e-11)


def test_pooling_exponential_closed_forms():
    for lam, p in ((0.8, 0.3), (0.9, 0.1), (0.95, 0.2), (0.7, 0.05), (0.95, 0.05)):   # ρ = 1 in 2 and 5
        fp = cv.pooling_cavity(lam, p, "exp")
        assert fp.converged and fp.max_queue_length == cv.pooling_exponential_max_queue_length(lam, p)
        rho, m = lam / (1 - p), fp.m
        expected = [(1 - lam) / (1 - p) * rho**q for q in range(m + 1)]
        rho_is_one = abs(1 - lam - p) < 1e-12            # the closed form is 0/0; the level m + 1 gets the rest
        expected.append(1 - sum(expected) if rho_is_one else ((1 - lam) * rho ** (m + 1) - p) / (1 - lam - p))
        assert np.allclose(fp.queue_length_pmf, expected, atol=1e-12)
        assert fp.value == pytest.approx(lam * expected[m] / expected[m + 1] - (1 - p), rel=1e-9)


def test_pooling_threshold_dichotomy():
    for lam in (0.5, 0.7, 0.9):
        p_star = cv.pooling_threshold(lam)
        rho = lam / (1 - p_star)
        assert 1 / (1 + rho) == pytest.approx((1 - lam) / (1 - p_star), rel=1e-12)
        p = p_star + 1e-3 * (lam - p_star)       # above p*: max queue 1, insensitive
        for name in LAWS:
            fp = cv.pooling_cavity(lam, p, name)
            assert fp.max_queue_length == 1
            assert fp.mean_response_time == pytest.approx(cv.pooling_insensitive_response_time(lam, p), rel=1e-10)
        p = 0.9 * p_star                         # below p*: unbounded over laws (Z(ε), ε → 0)
        maxima = [cv.pooling_cavity(lam, p, z_epsilon(eps)).max_queue_length for eps in (0.3, 0.03, 0.003)]
        assert maxima[0] < maxima[-1] and maxima[-1] >= 4


def test_pooling_deterministic_is_the_minimum():
    # Prop 7.3: the M/D/1/n formula; n = 1, 2 reduce to 1/(1 + ρ), 1/(1 + ρe^ρ); Erlang-k → deterministic
    for lam, p in ((0.8, 0.1), (0.9, 0.2), (0.95, 0.05)):
        det = cv.pooling_deterministic_max_queue_length(lam, p)
        for name in LAWS:
            assert det <= cv.pooling_cavity(lam, p, name).max_queue_length
        assert cv.pooling_cavity(lam, p, "erlang(60)").max_queue_length == det
        assert cv.pooling_level(lam, p, "erlang(60)") + 1 == det


def test_md1n_idle_probability_is_stable():
    rho = 0.9 / 0.95
    assert cf._md1n_idle_probability(1, rho) == pytest.approx(1 / (1 + rho), rel=1e-14)
    assert cf._md1n_idle_probability(2, rho) == pytest.approx(1 / (1 + rho * math.exp(rho)), rel=1e-14)
    for n in (40, 100):      # the float sum fails beyond n ≈ 30; Erlang(400) is within 1e-4 of deterministic
        assert cf._md1n_idle_probability(n, rho) == pytest.approx(
            cv.pooling_idle_probability(n, 0.9, 0.05, "erlang(400)"), abs=1e-4)


def test_pooling_balance_and_no_queueing_when_p_at_least_lam():
    fp = cv.pooling_cavity(0.6, 0.6, "exp")
    assert fp.mean_response_time == 0.0 and fp.max_queue_length == 0
    for name in LAWS:
        fp = cv.pooling_cavity(0.85, 0.15, name)
        top = fp.queue_length_pmf[-1]
        assert fp.value == pytest.approx((0.15 - 0.85 * top) / top, rel=1e-9)     # eq. 33


# =====================================================================================================================
# Numerics and errors


def test_gth_stationary_distribution_matches_linear_solve():
    rng = np.random.default_rng(3)
    q = rng.uniform(0, 1, (12, 12)) * 10.0 ** rng.integers(-3, 6, (12, 12))
    np.fill_diagonal(q, 0.0)
    np.fill_diagonal(q, -q.sum(axis=1))
    pi = cv.stationary_distribution(q)
    q_transient = np.pad(q, ((0, 1), (0, 1)))
    q_transient[-1, 0], q_transient[-1, -1] = 2.0, -2.0         # one transient state: gets mass 0
    assert np.allclose(cv.stationary_distribution(q_transient), np.append(pi, 0.0), atol=1e-15)
    assert np.abs(pi @ q).max() < 1e-9 * np.abs(q).max() and pi.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("lam", [1.0, 1.2, 0.0, -0.1, float("nan")])
def test_bad_load_is_rejected(lam):
    for call in (lambda: cv.push_cavity(lam, 0.3, "exp"), lambda: cv.pooling_cavity(lam, 0.3, "exp"),
                 lambda: cv.pull_cavity_from_rate(lam, 0.3, "exp"), lambda: cv.water_filling_cavity(lam, 0.3, "exp")):
        with pytest.raises(ScenarioError, match=r"lam = .*must be a finite number in \(0, 1\)"):
            call()


@pytest.mark.parametrize("delta", [0.0, -0.5, float("inf")])
def test_bad_delta_is_rejected(delta):
    with pytest.raises(ScenarioError, match="delta = "):
        cv.push_cavity(0.5, delta, "exp")
    with pytest.raises(ScenarioError, match="delta = "):
        cv.cavity("water-filling", 0.5, "exp", delta=delta)


def test_bad_batch_and_pull_and_policy_inputs():
    assert water_filling_sample_size(0.8, 0.4, 40) == 20
    with pytest.raises(ScenarioError, match=r"K = \(delta/lam\)·batch_size .* must be an integer"):
        water_filling_sample_size(0.8, 0.4, 41)
    with pytest.raises(ScenarioError, match="batch_size = 2.5"):
        water_filling_sample_size(0.8, 0.4, 2.5)
    with pytest.raises(ScenarioError, match=r"K = 20: must be in \[1, servers = 10\]"):
        water_filling_sample_size(0.8, 0.4, 40, servers=10)
    assert water_filling_batch_size(20, 1000) == 60
    with pytest.raises(ScenarioError, match="M = C·log10"):
        water_filling_batch_size(20, 500)
    with pytest.raises(ScenarioError, match=r"delta1 = 0.9: must be in \[0, min\(1, delta/lam\)\]"):
        pull_update_rates(0.8, 0.3, 0.9)
    with pytest.raises(ScenarioError, match="policy = 'jsq'"):
        cv.cavity("jsq", 0.5, "exp", delta=0.3)
    with pytest.raises(ScenarioError, match=r"expected \(delta\)"):
        cv.cavity("push", 0.5, "exp", p=0.3)
    with pytest.raises(ScenarioError, match=r"p = 1.0: must be a finite number in \[0, 1\)"):
        cv.pooling_cavity(0.5, 1.0, "exp")


@pytest.mark.parametrize("spec, pattern", [
    ("weibull(2)", "unknown distribution 'weibull'; valid: exp, hyperexp"),
    ("hyperexp(f=1/2, scv=0.5)", r"dist.scv = 0.5: must be a finite number >= 1"),
    ("hyperexp(f=1.5, scv=4)", r"dist.f = 1.5: must be a finite number in \(0, 1\)"),
    ("erlang(0)", r"dist.k = 0: must be an integer in \[1, 1,000\]"),
    ("hypererlang(2, 5, p=1.2)", r"dist.p = 1.2: must be a finite number in \(0, 1\)"),
    ("z(eps=0)", r"dist.eps = 0: must be a finite number in \(0, 1\)"),
    ("erlang(k=3, rate=2)", "dist.rate = '2': unknown parameter for 'erlang'; valid: k"),
    ("hyperexp(scv=x)", r"dist.scv = 'x': not a number"),
])
def test_bad_distribution_names(spec, pattern):
    with pytest.raises(ScenarioError, match=pattern):
        cv.push_cavity(0.5, 0.3, spec)


def test_non_ph_and_non_unit_mean_laws_are_rejected():
    with pytest.raises(ScenarioError, match="not phase-type"):
        cv.push_cavity(0.5, 0.3, "det")
    with pytest.raises(ScenarioError, match="job-size mean = 2: the paper's model needs mean-1"):
        cv.push_cavity(0.5, 0.3, PhaseType(alpha=(1.0,), S=((-0.5,),)))


def test_figure_trends():
    # Fig. 1 left: push E[R] increases with λ and decreases with δ (f = 1/2, SCV = 10)
    law = "hyperexp(f=1/2, scv=10)"
    lams = np.linspace(0.5, 0.97, 15)
    slow = [cv.push_cavity(lam, 0.15, law).mean_response_time for lam in lams]
    fast = [cv.push_cavity(lam, 0.5, law).mean_response_time for lam in lams]
    assert np.all(np.diff(slow) > 0) and np.all(np.diff(fast) > 0) and np.all(np.array(slow) > fast)
    # Fig. 3 right: pull with δ₀ = δ₁ = δ, (E[R] − 1)/m̃ increases towards 1 as λ → 1
    ratios = [(fp.mean_response_time - 1) / fp.m_tilde
              for fp in (cv.pull_cavity(lam, 0.5, 0.5, law) for lam in (0.9, 0.99, 0.999, 1 - 1e-5))]
    assert all(a < b for a, b in zip(ratios, ratios[1:])) and 0.8 < ratios[-1] < 1
