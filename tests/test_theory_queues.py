"""Standard queue formulas (Erlang B/C, M/M/c, M/G/1) and the saturated "1 and n" throughput (Lemma 5.3)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from msjgym.theory.queues import (
    erlang_b,
    erlang_c,
    mg1_mean_number_in_system,
    mg1_mean_wait,
    mmc_mean_number_in_queue,
    mmc_mean_number_in_system,
    mmc_mean_wait,
)
from msjgym.theory.saturated import one_and_n_throughput

EULER_GAMMA = 0.5772156649015329


# ---------------------------------------------------------------------------------------------------------------------
# Independent references


def erlang_b_direct(s: int, a: float) -> float:
    """Textbook Erlang B: (a^s/s!) / Σ_{k=0}^{s} a^k/k!."""
    terms = [a**k / math.factorial(k) for k in range(s + 1)]
    return terms[-1] / sum(terms)


def erlang_c_direct(s: int, a: float) -> float:
    """Textbook Erlang C: (a^s/s! · s/(s−a)) / (Σ_{k<s} a^k/k! + a^s/s! · s/(s−a))."""
    top = a**s / math.factorial(s) * s / (s - a)
    return top / (sum(a**k / math.factorial(k) for k in range(s)) + top)


def saturated_one_and_n_chain_throughput(n: int, p_n: float, mu_1: float, mu_n: float) -> float:
    """μ of the saturated "1 and n" FCFS system, by solving its CTMC balance equations numerically.

    The chain is built from the admission rule alone (Grosof & Ayhan §3.2, §5.1): a state is (1-server jobs in service,
    n-server job in service?, class of the blocked head); on a completion the head is retried and, while jobs fit,
    admitted and replaced by a fresh i.i.d. head. μ = Σ_s P_s · (completion rate in s).
    """
    need = {"1": 1, "n": n}
    draws = [(c, q) for c, q in (("1", 1.0 - p_n), ("n", p_n)) if q > 0]

    def settle(ones: int, big: bool, head: str) -> dict[tuple[int, bool, str], float]:
        """Distribution of the blocked state reached by admitting heads from (ones, big) with head ``head``."""
        out: dict[tuple[int, bool, str], float] = {}
        stack = [(ones, big, head, 1.0)]
        while stack:
            b, nj, h, w = stack.pop()
            if b + n * nj + need[h] > n:
                out[(b, nj, h)] = out.get((b, nj, h), 0.0) + w
                continue
            b2, nj2 = (b + 1, nj) if h == "1" else (b, True)
            stack.extend((b2, nj2, c, w * q) for c, q in draws)
        return out

    def completions(state: tuple[int, bool, str]) -> list[tuple[float, dict]]:
        b, nj, h = state
        events = [(mu_n, settle(b, False, h))] if nj else []
        return events + ([(b * mu_1, settle(b - 1, nj, h))] if b else [])

    start = {}
    for c, q in draws:
        for s, w in settle(0, False, c).items():
            start[s] = start.get(s, 0.0) + q * w
    index: dict[tuple[int, bool, str], int] = {}
    frontier = list(start)
    while frontier:
        s = frontier.pop()
        if s not in index:
            index[s] = len(index)
            frontier.extend(t for _, dist in completions(s) for t in dist)
    size = len(index)
    generator = np.zeros((size, size))
    rate_out = np.zeros(size)
    for s, i in index.items():
        for rate, dist in completions(s):
            rate_out[i] += rate
            for t, w in dist.items():
                generator[i, index[t]] += rate * w
        generator[i, i] -= rate_out[i]
    system = generator.T.copy()
    system[-1, :] = 1.0
    rhs = np.zeros(size)
    rhs[-1] = 1.0
    stationary = np.linalg.solve(system, rhs)
    return float(stationary @ rate_out)


# ---------------------------------------------------------------------------------------------------------------------
# Erlang B / C


@pytest.mark.parametrize("rho", [0.01, 0.3, 0.5, 0.9, 0.999])
def test_erlang_c_single_server_equals_load(rho: float) -> None:
    assert erlang_c(1, rho) == pytest.approx(rho, rel=1e-12)


@pytest.mark.parametrize("rho", [0.1, 0.5, 0.8, 0.99])
def test_erlang_c_two_servers(rho: float) -> None:
    assert erlang_c(2, 2 * rho) == pytest.approx(2 * rho**2 / (1 + rho), rel=1e-12)


@pytest.mark.parametrize("s, a", [(1, 0.5), (3, 2.2), (10, 7.5), (25, 24.0), (50, 30.0), (80, 79.5)])
def test_erlang_b_and_c_match_textbook_sums(s: int, a: float) -> None:
    assert erlang_b(s, a) == pytest.approx(erlang_b_direct(s, a), rel=1e-10)
    assert erlang_c(s, a) == pytest.approx(erlang_c_direct(s, a), rel=1e-10)


def test_erlang_edge_cases_and_large_systems() -> None:
    assert erlang_b(0, 3.0) == 1.0
    assert erlang_b(5, 0.0) == 0.0
    assert erlang_c(5, 0.0) == 0.0
    big = erlang_c(10_000, 9_900.0)  # factorial sums would overflow
    assert 0.0 < big < 1.0
    assert erlang_b(10_000, 2e4) == pytest.approx(0.5, abs=1e-3)  # B ≈ 1 − s/a for a >> s


# ---------------------------------------------------------------------------------------------------------------------
# M/M/c and M/G/1


@pytest.mark.parametrize("lam, mu", [(0.5, 1.0), (2.0, 3.0), (0.99, 1.0)])
def test_mg1_with_exponential_sizes_is_mm1(lam: float, mu: float) -> None:
    rho = lam / mu
    assert mg1_mean_number_in_system(lam, 1 / mu, 2 / mu**2) == pytest.approx(rho / (1 - rho), rel=1e-12)
    assert mg1_mean_wait(lam, 1 / mu, 2 / mu**2) == pytest.approx(rho / (mu - lam), rel=1e-12)
    assert mmc_mean_number_in_system(1, lam, mu) == pytest.approx(rho / (1 - rho), rel=1e-12)
    assert mmc_mean_wait(1, lam, mu) == pytest.approx(rho / (mu - lam), rel=1e-12)


@pytest.mark.parametrize("c, lam, mu", [(2, 1.5, 1.0), (8, 6.0, 0.9), (40, 35.0, 1.0)])
def test_mmc_means_satisfy_little_and_erlang_c(c: int, lam: float, mu: float) -> None:
    a, rho = lam / mu, lam / (c * mu)
    wait = mmc_mean_wait(c, lam, mu)
    assert mmc_mean_number_in_queue(c, lam, mu) == pytest.approx(lam * wait, rel=1e-12)
    assert mmc_mean_number_in_system(c, lam, mu) == pytest.approx(lam * (wait + 1 / mu), rel=1e-12)
    assert mmc_mean_number_in_queue(c, lam, mu) == pytest.approx(erlang_c_direct(c, a) * rho / (1 - rho), rel=1e-9)


@pytest.mark.parametrize("call", [
    lambda: erlang_c(2, 2.0),                      # a = s: unstable
    lambda: erlang_c(0, 0.5),                      # no servers
    lambda: erlang_b(True, 1.0),                   # bool is not a server count
    lambda: erlang_b(2.5, 1.0),                    # non-integral server count
    lambda: erlang_b(2, -1.0),
    lambda: mmc_mean_wait(1, 2.0, 1.0),            # ρ = 2
    lambda: mmc_mean_number_in_system(2, 1.0, 0.0),
    lambda: mg1_mean_wait(1.0, 1.0, 2.0),          # ρ = 1
    lambda: mg1_mean_wait(0.5, 1.0, 0.5),          # E[S²] < E[S]²
    lambda: mg1_mean_number_in_system(0.5, float("nan"), 2.0),
    lambda: one_and_n_throughput(0, 0.1, 1.0, 1.0),
    lambda: one_and_n_throughput(10, 1.5, 1.0, 1.0),
    lambda: one_and_n_throughput(10, 0.1, -1.0, 1.0),
    lambda: one_and_n_throughput(10, 0.1, 1.0, math.inf),
])
def test_invalid_inputs_raise_value_error(call) -> None:
    with pytest.raises(ValueError, match=r"= .*: must|unstable"):
        call()


# ---------------------------------------------------------------------------------------------------------------------
# Saturated "1 and n" system: Lemma 5.3 of Grosof & Ayhan


def test_one_and_n_throughput_reference_value() -> None:
    mu = one_and_n_throughput(10, 0.1, 1.0, 1.0)
    assert mu == pytest.approx(saturated_one_and_n_chain_throughput(10, 0.1, 1.0, 1.0), rel=1e-10)
    assert mu == pytest.approx(2.913, abs=5e-4)


@pytest.mark.parametrize("p_n, mu_1, mu_n", [(0.3, 1.0, 2.0), (0.9, 5.0, 0.5), (0.5, 1.0, 1.0)])
def test_one_and_n_single_server_is_mh21(p_n: float, mu_1: float, mu_n: float) -> None:
    expected = 1.0 / ((1 - p_n) / mu_1 + p_n / mu_n)
    assert one_and_n_throughput(1, p_n, mu_1, mu_n) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 10, 1000])
def test_one_and_n_degenerate_p_n(n: int) -> None:
    assert one_and_n_throughput(n, 1.0, 3.0, 0.7) == 0.7
    assert one_and_n_throughput(n, 0.0, 3.0, 0.7) == pytest.approx(3.0 * n, rel=1e-12)
    assert one_and_n_throughput(n, 1e-12, 3.0, 0.7) == pytest.approx(3.0 * n, rel=1e-6)  # continuous at 0
    assert one_and_n_throughput(n, 1 - 1e-12, 3.0, 0.7) == pytest.approx(0.7, rel=1e-6)  # continuous at 1


@pytest.mark.parametrize("n, p_n, mu_1, mu_n", [
    (2, 0.5, 1.0, 1.0), (3, 0.2, 1.0, 4.0), (5, 0.2, 2.0, 0.5), (10, 0.1, 1.0, 1.0),
    (12, 0.05, 10.0, 1.0), (20, 0.3, 1.0, 10.0), (25, 0.01, 0.5, 3.0),
])
def test_one_and_n_matches_saturated_chain_solve(n: int, p_n: float, mu_1: float, mu_n: float) -> None:
    assert one_and_n_throughput(n, p_n, mu_1, mu_n) == pytest.approx(
        saturated_one_and_n_chain_throughput(n, p_n, mu_1, mu_n), rel=1e-9)


@pytest.mark.parametrize("mu_1, mu_n", [(1.0, 1.0), (1.0, 4.0), (3.0, 1.0)])
def test_one_and_n_large_n_matches_corrected_regime3_expansion(mu_1: float, mu_n: float) -> None:
    """p_n = n^−2: μ/μ₁ = n − (ln n + γ + μ₁/μ_n − 1) + O(n^−1 ln² n) (Grosof & Ayhan Thm 4.2 with the γ erratum,
    docs/errata.md#multilevel-thm-4-2-euler-gamma)."""
    n = 10**6
    deficit = n - one_and_n_throughput(n, n**-2.0, mu_1, mu_n) / mu_1
    expected = math.log(n) + EULER_GAMMA + mu_1 / mu_n - 1
    assert abs(deficit - expected) < 5 * math.log(n) ** 2 / n
    assert abs(deficit - (expected - EULER_GAMMA)) > 0.5  # the paper's γ-less form is off by γ
