"""Saturated FCFS multiserver-job system: Grosof & Ayhan's closed forms (Lemmas 5.1–5.5) and the generic solver.

Corrections to the paper: docs/errata.md; results it does not print: docs/derivations.md. All checks are
deterministic except :func:`test_generic_threshold_matches_simulated_saturated_system` (seeded).
"""
from __future__ import annotations

import itertools
import tracemalloc
from decimal import Decimal, localcontext

import numpy as np
import pytest

from conftest import covers, exp_class, model
from msjgym.evaluate.evaluator import evaluate
from msjgym.theory.saturated import (
    NO_HEAD,
    SaturatedSystem,
    fcfs_stability_threshold,
    heavy_traffic_constant,
    heavy_traffic_mean_number,
    one_and_n_mean_relative_completions,
    one_and_n_saturated_distributions,
    one_and_n_throughput,
    saturated_fcfs,
)

RATES = [(1.0, 1.0), (1.0, 4.0), (3.0, 0.5), (10.0, 1.0)]
GRID = list(itertools.product([1, 2, 3, 7, 20, 60, 150], [0.01, 0.1, 0.5, 0.9], RATES))
REL = 1e-9


def one_and_n(n: int, p_n: float, mu_1: float, mu_n: float) -> SaturatedSystem:
    """The generic solver on needs (1, n): class 0 needs 1 server, class 1 needs n."""
    return saturated_fcfs(n, (1, n), (1.0 - p_n, p_n), (mu_1, mu_n))


def one_d_state(n: int, i: int) -> tuple[tuple[int, ...], int]:
    """Generic label of the paper's 1-D state i (number of 1-server jobs in service, §5.4)."""
    if i == 0:
        return (0, 1), NO_HEAD        # (1, 0): the n-server job in service
    if i < n:
        return (i, 0), 1              # (1, i): i 1-server jobs in service, the n-server job blocked
    return (n, 0), NO_HEAD            # (0, n): n 1-server jobs in service


def paper_state(a: int, b: int) -> tuple[tuple[int, ...], int]:
    """Generic label of the paper's transition-chain state (a, b) (Lemma 5.1), (a, b) ≠ (1, n)."""
    if a == 0:
        return (b, 0), NO_HEAD        # arriving for b < n; (0, n) completing
    return ((0, 1), NO_HEAD) if b == 0 else ((b, 0), 1)


def mh2_heavy_traffic(p_n: float, mu_1: float, mu_n: float) -> float:
    """(1 + C²)/2 = E[S²]/(2E[S]²) of the mixture Exp(μ₁) w.p. 1 − p_n, Exp(μ_n) w.p. p_n."""
    mean = (1 - p_n) / mu_1 + p_n / mu_n
    second = 2 * (1 - p_n) / mu_1**2 + 2 * p_n / mu_n**2
    return second / (2 * mean**2)


# ---------------------------------------------------------------------------------------------------------------------
# Closed forms = generic solver


@pytest.mark.parametrize("n, p_n, rates", GRID)
def test_closed_forms_equal_generic_solver(n: int, p_n: float, rates: tuple[float, float]) -> None:
    mu_1, mu_n = rates
    closed = one_and_n_saturated_distributions(n, p_n, mu_1, mu_n)
    generic = one_and_n(n, p_n, mu_1, mu_n)
    assert len(generic.states) == 2 * n + 1          # the paper's (a, b) states, (1, n) unreachable
    where = {state: k for k, state in enumerate(generic.states)}
    order = [where[one_d_state(n, i)] for i in range(n + 1)]

    mu = one_and_n_throughput(n, p_n, mu_1, mu_n)
    assert generic.throughput == pytest.approx(mu, rel=REL)
    assert closed.throughput == pytest.approx(mu, rel=REL)
    delta_d = one_and_n_mean_relative_completions(n, p_n, mu_1, mu_n)
    assert generic.mean_relative_completions == pytest.approx(delta_d, rel=REL, abs=1e-13)
    assert closed.mean_relative_completions == pytest.approx(delta_d, rel=REL, abs=1e-13)

    np.testing.assert_allclose(generic.time_average[order], closed.time_average, rtol=REL, atol=0)
    np.testing.assert_allclose(generic.completion_average[order], closed.completion_average, rtol=REL, atol=0)
    np.testing.assert_allclose(generic.completion_rates[order], closed.completion_rates, rtol=1e-15)
    scale = np.max(np.abs(closed.relative_completions)) + 1.0
    np.testing.assert_allclose(generic.relative_completions[order], closed.relative_completions, rtol=REL,
                               atol=REL * scale)
    offset = generic.relative_completions[order] - generic.relative_completions[order[0]]
    np.testing.assert_allclose(offset, closed.relative_completions_offset, rtol=REL, atol=REL * scale)

    reachable = [(a, b) for a in (0, 1) for b in range(n + 1) if (a, b) != (1, n)]
    pi = np.array([generic.transition_average[where[paper_state(a, b)]] for a, b in reachable])
    np.testing.assert_allclose(pi, [closed.transition_average[a, b] for a, b in reachable], rtol=REL, atol=0)
    assert closed.transition_average[1, n] == 0.0


@pytest.mark.parametrize("n, p_n", [(2, 0.3), (5, 0.1), (40, 0.02)])
def test_lemma_5_1_as_printed_for_n_at_least_2(n: int, p_n: float) -> None:
    """π relative to π_{0,0} is exactly the printed Lemma 5.1, and its balance equations hold."""
    pi = one_and_n_saturated_distributions(n, p_n, 2.0, 0.5).transition_average / (p_n / 2)
    p1 = 1 - p_n
    b = np.arange(n + 1)
    np.testing.assert_allclose(pi[1, :n], p1 ** b[:n], rtol=1e-12)
    np.testing.assert_allclose(pi[0, :n - 1], p1 ** b[:n - 1], rtol=1e-12)
    assert pi[0, n - 1] == pytest.approx(p1 ** (n - 1) / p_n, rel=1e-12)
    assert pi[0, n] == pytest.approx(p1**n / p_n, rel=1e-12)
    assert pi[0, n - 1] == pytest.approx(pi[0, n - 2] * p1 + pi[0, n], rel=1e-12)
    assert pi[1, n - 1] == pytest.approx(pi[0, n - 1] * p_n, rel=1e-12)


def test_lemma_5_1_normalisation_differs_at_n_1() -> None:
    """At n = 1 the printed π_{0,0} = π_{1,0} fails ((0, 0) = (0, n−1)); relative to π_{1,0} it holds."""
    p_n = 0.3
    pi = one_and_n_saturated_distributions(1, p_n, 1.0, 2.0).transition_average
    np.testing.assert_allclose(pi, [[0.5, (1 - p_n) / 2], [p_n / 2, 0.0]], rtol=1e-15)
    generic = one_and_n(1, p_n, 1.0, 2.0)
    where = {s: k for k, s in enumerate(generic.states)}
    assert generic.transition_average[where[paper_state(0, 0)]] == pytest.approx(0.5, rel=1e-12)


@pytest.mark.parametrize("p_n, mu_1, mu_n", [(0.3, 1.0, 2.0), (0.9, 5.0, 0.5), (0.5, 1.0, 1.0), (0.01, 1.0, 0.01)])
def test_single_server_is_mh21(p_n: float, mu_1: float, mu_n: float) -> None:
    """n = 1: E[Δ(Y_d)] + 1 = (1 + C²)/2 of the M/H₂/1 (docs/derivations.md#multilevel-one-server)."""
    expected = mh2_heavy_traffic(p_n, mu_1, mu_n)
    assert one_and_n_mean_relative_completions(1, p_n, mu_1, mu_n) + 1 == pytest.approx(expected, rel=1e-12)
    assert heavy_traffic_constant(1, (1, 1), (1 - p_n, p_n), (mu_1, mu_n)) == pytest.approx(expected, rel=1e-12)
    assert one_and_n_throughput(1, p_n, mu_1, mu_n) == pytest.approx(1 / ((1 - p_n) / mu_1 + p_n / mu_n), rel=1e-14)


@pytest.mark.parametrize("n", [1, 2, 10, 1000, 10**6])
@pytest.mark.parametrize("mu_1, mu_n", [(1.0, 1.0), (3.0, 0.7), (0.5, 4.0)])
def test_degenerate_p_n(n: int, mu_1: float, mu_n: float) -> None:
    """p_n → 0 at fixed n: μ → nμ₁ and E[Δ] → 0; p_n = 1: μ = μ_n and E[Δ] = 0 (Lemmas 5.3 and 5.5 there)."""
    tiny = 1e-9 / n**2            # far below the regime-3 scale: E[Δ] ≈ ½ n² p_n ln² n (Thm 4.2)
    assert one_and_n_throughput(n, tiny, mu_1, mu_n) == pytest.approx(n * mu_1, rel=1e-7)
    assert one_and_n_mean_relative_completions(n, tiny, mu_1, mu_n) < 1e-6
    assert one_and_n_mean_relative_completions(n, 0.0, mu_1, mu_n) == 0.0
    assert one_and_n_throughput(n, 1.0, mu_1, mu_n) == mu_n
    assert one_and_n_mean_relative_completions(n, 1.0, mu_1, mu_n) == 0.0
    assert one_and_n_mean_relative_completions(n, 1 - 1e-12, mu_1, mu_n) < 1e-9
    distributions = one_and_n_saturated_distributions(min(n, 50), 1.0, mu_1, mu_n)
    assert distributions.throughput == pytest.approx(mu_n, rel=1e-15)
    assert distributions.mean_relative_completions == pytest.approx(0.0, abs=1e-15)


def test_p_n_to_zero_at_fixed_n_is_continuous() -> None:
    n, mu_1, mu_n = 20, 1.0, 2.0
    gaps = [n * mu_1 - one_and_n_throughput(n, p, mu_1, mu_n) for p in (1e-2, 1e-4, 1e-6, 1e-8)]
    assert all(a > 10 * b > 0 for a, b in itertools.pairwise(gaps))          # μ ↑ nμ₁ linearly in p_n
    deltas = [one_and_n_mean_relative_completions(n, p, mu_1, mu_n) for p in (1e-2, 1e-4, 1e-6, 1e-8)]
    assert all(a > 10 * b > 0 for a, b in itertools.pairwise(deltas))        # E[Δ] ↓ 0 linearly in p_n


def lemma_5_5_decimal(n: int, p_n: float, mu_1: float, mu_n: float) -> tuple[float, float]:
    """(μ, E[Δ(Y_d)]) from the printed Lemmas 5.3 and 5.5 in 60-digit decimal arithmetic (an independent
    reference: no log1p, digamma or cancellation-avoiding rewrites)."""
    with localcontext() as ctx:
        ctx.prec = 60
        p, m1, mn = Decimal(p_n), Decimal(mu_1), Decimal(mu_n)
        q = 1 - p
        powers, harmonic, series = [Decimal(1)], [Decimal(0)], Decimal(0)
        for b in range(1, n + 1):
            powers.append(powers[-1] * q)
            harmonic.append(harmonic[-1] + Decimal(1) / b)
            if b < n:
                series += powers[b] / (b * m1)
        mu = 1 / (p * (1 / mn + powers[n] / (n * m1 * p) + series))
        m = mu / m1
        total = powers[n] * (1 - m / n) * (n - 1 + 1 / p - m * harmonic[n - 1] - m / (n * p))
        for i in range(1, n):
            total += powers[i] * p * (1 - m / i) * (i - m * harmonic[i])
        return float(mu), float(total)


@pytest.mark.parametrize("alpha", [0.5, 1.0, 2.0, 3.0])
@pytest.mark.parametrize("mu_1, mu_n", [(1.0, 1.0), (10.0, 1.0), (1.0, 10.0)])
def test_closed_forms_match_high_precision_reference(alpha: float, mu_1: float, mu_n: float) -> None:
    """At n = 3000 and p_n = n^−α (incl. regime 3, where 1 − μ/(nμ₁) cancels) the float closed forms keep
    ~12 digits."""
    n = 3000
    mu, delta_d = lemma_5_5_decimal(n, n**-alpha, mu_1, mu_n)
    assert one_and_n_throughput(n, n**-alpha, mu_1, mu_n) == pytest.approx(mu, rel=1e-13)
    assert one_and_n_mean_relative_completions(n, n**-alpha, mu_1, mu_n) == pytest.approx(delta_d, rel=1e-11)


def test_closed_forms_need_no_n_length_arrays() -> None:
    """O(chunk) memory: at n = 10⁷ an n-length float array alone would take 80 MB."""
    n = 10**7
    tracemalloc.start()
    try:
        one_and_n_throughput(n, n**-2.0, 1.0, 1.0)
        one_and_n_mean_relative_completions(n, n**-2.0, 1.0, 1.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2**20


# ---------------------------------------------------------------------------------------------------------------------
# Generic solver: sanity on multi-class systems


GENERIC_SYSTEMS = [
    ((1, 5, 10), (0.8, 0.1, 0.1), (1.0, 1.0, 1.0), 10),          # paper §10.4 setting
    ((1, 5), (0.9, 0.1), (1.0, 1.0), 10),                        # paper §10.3 setting
    ((1, 32, 64), (0.9, 0.05, 0.05), (1.0, 2.0, 0.5), 64),       # needs {1, n/2, n}, n = 64
    ((1, 8, 64), (0.6, 0.3, 0.1), (1.0, 0.5, 2.0), 64),
    ((3, 6, 8), (0.5, 0.3, 0.2), (1.0, 2.0, 0.5), 64),
    ((2, 3), (0.5, 0.5), (1.0, 3.0), 7),                         # empty system is transient
    ((1, 2, 3, 4), (0.4, 0.3, 0.2, 0.1), (1.0, 0.8, 0.6, 0.4), 12),
]


@pytest.mark.parametrize("needs, probabilities, rates, servers", GENERIC_SYSTEMS)
def test_generic_solver_sanity(needs, probabilities, rates, servers) -> None:
    system = saturated_fcfs(servers, needs, probabilities, rates)
    size = len(system.states)
    for law in (system.time_average, system.transition_average, system.completion_average):
        assert law.shape == (size,) and law.min() >= -1e-15 and law.sum() == pytest.approx(1.0, abs=1e-12)
    matrix = system.transition_matrix
    np.testing.assert_allclose(np.asarray(matrix.sum(axis=1)).ravel(), 1.0, rtol=1e-12)
    assert np.max(np.abs(system.transition_average @ matrix - system.transition_average)) < 1e-14

    completing = system.completion_rates > 0
    mu = system.throughput
    assert mu == pytest.approx(float(system.time_average @ system.completion_rates), rel=1e-14)
    assert np.all(system.time_average[~completing] == 0)
    assert system.transition_average[completing].sum() == pytest.approx(0.5, abs=1e-12)   # completions = arrivals
    np.testing.assert_allclose(2 * system.transition_average[completing], system.completion_average[completing],
                               rtol=1e-10, atol=1e-16)
    np.testing.assert_allclose(system.completion_average,
                               system.time_average * system.completion_rates / mu, rtol=1e-10, atol=1e-16)

    delta = system.relative_completions
    reward = np.where(completing, 1 - mu / np.where(completing, system.completion_rates, 1.0), 0.0)
    scale = 1.0 + np.max(np.abs(delta))
    assert np.max(np.abs(delta - matrix @ delta - reward)) < 1e-11 * scale                 # Poisson equation
    assert abs(system.time_average @ delta) < 1e-12 * scale                                 # E[Δ(Y)] = 0
    assert system.mean_relative_completions == pytest.approx(system.completion_average @ delta, rel=1e-14)

    for counts, head in system.states:                                                     # states are feasible
        free = servers - sum(c * m for c, m in zip(counts, needs))
        assert free >= 0 and (head == NO_HEAD or needs[head] > free)

    needs_, p, r = np.array(needs), np.array(probabilities), np.array(rates)
    assert mu >= r.min() * (1 - 1e-12)                       # some job is always in service
    assert mu <= (servers // needs_.min()) * r.max() * (1 + 1e-12)
    assert mu <= servers / np.sum(p * needs_ / r) * (1 + 1e-12)   # busy servers <= n: f_max <= 1
    assert fcfs_stability_threshold(servers, needs, probabilities, rates) == pytest.approx(mu, rel=1e-12)
    assert heavy_traffic_constant(servers, needs, probabilities, rates) == pytest.approx(
        system.mean_relative_completions + 1, rel=1e-12)


@pytest.mark.parametrize("need, servers, rate", [(1, 1, 2.0), (1, 10, 1.0), (3, 10, 0.5), (7, 64, 3.0), (64, 64, 1.5)])
def test_single_class_has_constant_completion_rate(need: int, servers: int, rate: float) -> None:
    """K = 1: floor(n/m) jobs always in service, μ = floor(n/m)·rate, Δ ≡ 0."""
    system = saturated_fcfs(servers, (need,), (1.0,), (rate,))
    assert system.throughput == pytest.approx(servers // need * rate, rel=1e-14)
    assert np.all(np.abs(system.relative_completions) < 1e-12)
    assert heavy_traffic_constant(servers, (need,), (1.0,), (rate,)) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("servers", [1, 3, 8])
@pytest.mark.parametrize("p, mu_a, mu_b", [(0.7, 1.0, 5.0), (0.2, 3.0, 0.5)])
def test_unit_needs_with_two_rates_are_n_independent_renewal_servers(servers: int, p: float, mu_a: float,
                                                                     mu_b: float) -> None:
    """Needs all 1: each server is a renewal process of H₂ durations, so μ = n/E[S] and Δ is additive over
    servers: E[Δ(Y_d)] + 1 = (1 + C²)/2 for every n (many-server heavy traffic)."""
    system = saturated_fcfs(servers, (1, 1), (p, 1 - p), (mu_a, mu_b))
    assert system.throughput == pytest.approx(servers / (p / mu_a + (1 - p) / mu_b), rel=1e-13)
    assert system.mean_relative_completions + 1 == pytest.approx(mh2_heavy_traffic(1 - p, mu_a, mu_b), rel=1e-11)


@pytest.mark.parametrize("needs, probabilities", [
    ((1, 10), lambda a: (1 - 10**-a, 10**-a)),                     # Fig. 6(a): bell peak near α = 0.8, 50–60 %
    ((1, 5), lambda a: (1 - 10**-a, 10**-a)),                      # Fig. 8(b): peak near α = 0.4, ~78 %
    ((1, 5, 10), lambda a: (1 - 10**-a, 10**-a / 2, 10**-a / 2)),  # Fig. 9: peak near α = 0.7, in between
])
def test_capacity_at_stability_boundary_has_interior_minimum(needs, probabilities) -> None:
    """Paper §10.1, §10.3, §10.4 (Figs. 6(a), 8(b), 9): f_max(α) = μ Σ p_k m_k/μ_k / n at n = 10, rates 1, has an
    interior minimum, located where the paper's simulated E[Q] bells peak, at the capacity levels it reports (f as
    corrected in docs/errata.md#multilevel-fraction-of-capacity)."""
    alphas = np.round(np.arange(0.05, 3.0, 0.05), 2)
    f_max = []
    for alpha in alphas:
        p = probabilities(alpha)
        f_max.append(fcfs_stability_threshold(10, needs, p, (1.0,) * len(needs)) * np.dot(p, needs) / 10)
    k = int(np.argmin(f_max))
    assert 0 < k < len(alphas) - 1
    expected = {(1, 10): (0.8, 0.50, 0.60), (1, 5): (0.4, 0.75, 0.81), (1, 5, 10): (0.7, 0.60, 0.75)}[needs]
    assert abs(alphas[k] - expected[0]) <= 0.15
    assert expected[1] <= f_max[k] <= expected[2]


def test_generic_threshold_matches_simulated_saturated_system() -> None:
    """Three classes {1, 5, 10}: the simulator's closed-system throughput covers μ (99.9 % CI, seeded)."""
    needs, probabilities, rates = (1, 5, 10), (0.7, 0.2, 0.1), (1.0, 2.0, 0.5)
    m = model(10, 1.0, *(exp_class(str(k), need, p, rate) for k, (need, p, rate)
                         in enumerate(zip(needs, probabilities, rates))))
    result = evaluate(m, "fcfs", reps=10, jobs=100_000, seed=7, saturated=True)
    mu = fcfs_stability_threshold(10, needs, probabilities, rates)
    ok, mean, half = covers([r["throughput"] for r in result.replications], mu)
    assert ok, f"simulated saturated throughput {mean} ± {half} vs solver μ = {mu}"


# ---------------------------------------------------------------------------------------------------------------------
# Heavy-traffic approximation and input checks


def test_heavy_traffic_mean_number() -> None:
    assert heavy_traffic_mean_number(0.9, 2.5) == pytest.approx(22.5, rel=1e-14)
    assert heavy_traffic_mean_number(0.0, 2.5) == 0.0
    # M/M/1 (constant 1): ρ/(1 − ρ) is exact
    assert heavy_traffic_mean_number(0.5, heavy_traffic_constant(1, (1,), (1.0,), (1.0,))) == pytest.approx(1.0)


@pytest.mark.parametrize("call", [
    lambda: saturated_fcfs(10, (1, 10), (0.9, 0.0), (1.0, 1.0)),          # probability-0 class
    lambda: saturated_fcfs(10, (1, 10), (0.9, 0.2), (1.0, 1.0)),          # probabilities sum to 1.1
    lambda: saturated_fcfs(10, (1, 11), (0.9, 0.1), (1.0, 1.0)),          # need > servers
    lambda: saturated_fcfs(10, (0, 10), (0.9, 0.1), (1.0, 1.0)),          # need 0
    lambda: saturated_fcfs(10, (1, 10), (0.9, 0.1), (1.0,)),              # lengths differ
    lambda: saturated_fcfs(10, (), (), ()),                               # no class
    lambda: saturated_fcfs(10, (1, 10), (0.9, 0.1), (1.0, -1.0)),         # negative rate
    lambda: fcfs_stability_threshold(0, (1, 10), (0.9, 0.1), (1.0, 1.0)),  # no servers
    lambda: heavy_traffic_mean_number(1.0, 2.0),
    lambda: heavy_traffic_mean_number(0.5, 0.0),
    lambda: heavy_traffic_mean_number(-0.1, 2.0),
    lambda: one_and_n_mean_relative_completions(10, 1.5, 1.0, 1.0),
    lambda: one_and_n_mean_relative_completions(0, 0.1, 1.0, 1.0),
    lambda: one_and_n_mean_relative_completions(10, 0.1, 0.0, 1.0),
    lambda: one_and_n_saturated_distributions(10, 0.0, 1.0, 1.0),
])
def test_invalid_inputs_raise_value_error(call) -> None:
    with pytest.raises(ValueError, match=r"must"):
        call()


def test_probability_zero_error_message_is_clear() -> None:
    with pytest.raises(ValueError, match=r"probability > 0 \(drop the classes that never occur\)"):
        saturated_fcfs(10, (1, 5, 10), (0.5, 0.5, 0.0), (1.0, 1.0, 1.0))
