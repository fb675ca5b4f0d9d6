"""Saturated-system analysis of FCFS multiserver-job systems: throughput = FCFS stability threshold, and the
heavy-traffic constant E[Δ(Y_d)] + 1.

The *saturated system* is the closed version of an FCFS (head-of-line blocking) MSJ system: the queue never empties,
and whenever servers free up, jobs drawn i.i.d. from the class mix enter in order until the head job does not fit.
Its long-run completion rate μ (jobs per unit time) is the stability threshold of the open FCFS system: stable iff
λ < μ (Grosof & Ayhan, "Multiserver-job Response Time under Multilevel Scaling", §§3.1–3.2, §5). The
relative completions Δ (the Poisson-equation solution of the completion-rate reward, eq. (1)) give the heavy-traffic
mean queue length lim_{ρ→1} (1 − ρ)E[Q] = E[Δ(Y_d)] + 1 (eq. (2), from the paper's ref. [16]).

References below: "the paper" = Grosof & Ayhan; its errata are explained in docs/errata.md, results it does not
print in docs/derivations.md.

Implemented here:
    "1 and n" system (needs 1 and n; closed forms, O(n) time, O(chunk) memory, n up to 10⁸):
    * :func:`one_and_n_throughput` — μ (Lemma 5.3) [exact].
    * :func:`one_and_n_mean_relative_completions` — E[Δ(Y_d)] (Lemma 5.5) [exact].
    * :func:`one_and_n_saturated_distributions` — π, P, π^d, Δ̃, Δ as arrays (Lemmas 5.1, 5.2, 5.4, 5.5), small n
      [exact].
    Any needs, exponential durations (numerical solve of the saturated chain, see :func:`saturated_fcfs`):
    * :func:`saturated_fcfs` — every stationary quantity above, as a :class:`SaturatedSystem` [exact].
    * :func:`fcfs_stability_threshold` — μ only [exact].
    * :func:`heavy_traffic_constant` — E[Δ(Y_d)] + 1 = lim_{ρ→1} (1 − ρ)E[Q] (exact limit).
    * :func:`heavy_traffic_mean_number` — (E[Δ(Y_d)] + 1)·ρ/(1 − ρ) [approximation].

    The chain's building blocks, shared with the multi-resource theory (:mod:`msjgym.theory.multi_resource`):
    :class:`SaturatedChain` (built from any class mix), :func:`stationary_distribution`, :func:`time_stationary`.
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph
from scipy.sparse.linalg import spsolve
from scipy.special import digamma

from msjgym.core.validation import require_count, require_positive, require_probability

_CHUNK = 1 << 15          # terms per vectorised block (cache-sized; larger blocks cost page faults)
_EXP_UNDERFLOW = 746.0    # exp(-x) == 0.0 in float64 for x >= this
_PROBABILITY_TOLERANCE = 1e-9
_HARMONIC_SERIES_FROM = 64  # H_i by its asymptotic series for i >= this (see _harmonic)
NO_HEAD = -1
"""Head code of a state with no blocked head job (see :class:`SaturatedSystem`)."""

State = tuple[tuple[int, ...], int]


# =====================================================================================================================
# "1 and n" system: closed forms (Lemmas 5.1–5.5)


def one_and_n_throughput(servers: int, p_n: float, mu_1: float, mu_n: float) -> float:
    """Saturated-system throughput μ of the FCFS "1 and n" system = its stability threshold. [exact]

    Source: Grosof & Ayhan, "Multiserver-job Response Time under Multilevel Scaling", Lemma 5.3:

        μ = (1/p_n) · [1/μ_n + p₁ⁿ/(n μ₁ p_n) + Σ_{b=1}^{n−1} p₁ᵇ/(b μ₁)]⁻¹,   p₁ = 1 − p_n,

    evaluated as 1 / [p_n/μ_n + p₁ⁿ/(n μ₁) + (p_n/μ₁) Σ_{b=1}^{n−1} p₁ᵇ/b] (= nμ₁/(1 + x), see :class:`_OneAndN`),
    a sum of positive terms (no cancellation), with p₁ᵇ = exp(b·log1p(−p_n)) and the series summed in vectorised
    blocks and truncated where p₁ᵇ underflows, so the cost is O(min(n, 1/p_n)) and n up to 10⁸ is
    fine.

    Limits: n = 1 gives 1/(p₁/μ₁ + p_n/μ_n) (an M/H₂/1); p_n = 1 gives μ_n (an M/M/1 of n-server jobs); p_n = 0 is
    not covered by the lemma (it divides by p_n) and is returned as its limit n·μ₁ (an M/M/n of 1-server jobs), which
    the formula above also gives continuously as p_n → 0.

    Args:
        servers: n >= 1, the number of servers.
        p_n: probability in [0, 1] that a job needs all n servers (else it needs 1).
        mu_1: service rate μ₁ > 0 of 1-server jobs (durations Exp(μ₁)), per unit time.
        mu_n: service rate μ_n > 0 of n-server jobs (durations Exp(μ_n)), per unit time.
    Returns:
        μ, jobs per unit time: the open FCFS system is stable iff λ < μ.
    """
    n, p_n, mu_1, mu_n = _one_and_n_args(servers, p_n, mu_1, mu_n)
    if p_n == 1.0:
        return mu_n
    if p_n == 0.0:
        return n * mu_1
    return _OneAndN.of(n, p_n, mu_1, mu_n).throughput


def one_and_n_mean_relative_completions(servers: int, p_n: float, mu_1: float, mu_n: float) -> float:
    """E[Δ(Y_d)] of the saturated FCFS "1 and n" system: the heavy-traffic constant minus 1. [exact]

    Source: Grosof & Ayhan, Lemma 5.5 (and its proof): with m = μ/μ₁ (μ from Lemma 5.3) and H_i the harmonic numbers,

        E[Δ(Y_d)] = p₁ⁿ (1 − m/n) Δ̃(n) + Σ_{i=1}^{n−1} p₁ⁱ p_n (1 − m/i)(i − m H_i),
        Δ̃(n) = n − 1 + (1 − m/n)/p_n − m H_{n−1}        (= n − 1 + 1/p_n − m H_{n−1} − m/(n p_n)),

    so that lim_{ρ→1} (1 − ρ)E[Q] = E[Δ(Y_d)] + 1 (paper eq. (2)). Numerics: p₁ⁱ =
    exp(i·log1p(−p_n)); H_i from digamma or its asymptotic series (no cumulative drift); 1 − m/n = x/(1 + x) with
    x ≥ −p_n computed without cancellation (see :class:`_OneAndN`), because 1 − μ/(nμ₁) cancels catastrophically in
    regime 3; the sum runs in vectorised blocks of 2¹⁵ terms, truncated where p₁ⁱ underflows: O(min(n, 1/p_n))
    time, O(1) memory in n.

    Limits: p_n = 1 gives 0 (every job needs n servers: constant completion rate μ_n); p_n = 0 gives 0 (every job
    needs 1 server: the saturated system always serves n jobs), also the continuous limit p_n → 0 at fixed n;
    n = 1 gives p₁p_n μ² (1/μ_n − 1/μ₁)², i.e. E[Δ(Y_d)] + 1 = (1 + C²)/2 of the M/H₂/1
    (docs/derivations.md#multilevel-one-server).

    Args: as :func:`one_and_n_throughput`.
    Returns:
        E[Δ(Y_d)], dimensionless (a number of completions).
    """
    n, p_n, mu_1, mu_n = _one_and_n_args(servers, p_n, mu_1, mu_n)
    if p_n in (0.0, 1.0):
        return 0.0
    system = _OneAndN.of(n, p_n, mu_1, mu_n)
    return system.head_term + system.tail_sum()


@dataclass(frozen=True, eq=False)
class OneAndNSaturated:
    """Stationary distributions of the saturated "1 and n" system in the paper's coordinates (Lemmas 5.1–5.5).

    One-dimensional states i = 0..n (paper §5.4) = number of 1-server jobs in service: i = 0 is (a, b) = (1, 0)
    (the n-server job in service), 1 <= i < n is (1, i) (i 1-server jobs in service, the n-server job blocked at the
    head), i = n is (0, n) (n 1-server jobs in service). These are the completing states; :class:`SaturatedSystem`
    labels them ((0, 1), NO_HEAD), ((i, 0), 1) and ((n, 0), NO_HEAD) for needs (1, n).

    Attributes:
        transition_average: π[a, b], shape (2, n + 1), Lemma 5.1: stationary law of the transition-based embedded
            DTMC (one step per job generation and per completion) on the paper's states (a, b); (0, b < n) are the
            arriving states, π[1, n] = 0 ((1, n) is unreachable). Normalised to sum 1: π[1, 0] = p_n/2 (the paper
            writes everything relative to π[0, 0], which equals π[1, 0] for n >= 2).
        time_average: P_i, Lemma 5.2 (with its b = 1 erratum, docs/errata.md#multilevel-lemma-5-2).
        completion_average: π^d_i = p₁ⁱ p_n (i < n), p₁ⁿ (i = n), Lemma 5.4.
        completion_rates: μ_i = μ_n (i = 0), i·μ₁ (i >= 1), per unit time.
        relative_completions_offset: Δ̃(i) = Δ(i) − Δ(0), Lemma 5.5 proof (Δ̃(0) = 0).
        relative_completions: Δ(i) = Δ̃(i) − Σ_j P_j Δ̃(j), normalised by E[Δ(Y)] = 0.
        throughput: μ, Lemma 5.3, jobs per unit time.
        mean_relative_completions: E[Δ(Y_d)] = Σ_i π^d_i Δ(i), Lemma 5.5.
    """

    transition_average: np.ndarray
    time_average: np.ndarray
    completion_average: np.ndarray
    completion_rates: np.ndarray
    relative_completions_offset: np.ndarray
    relative_completions: np.ndarray
    throughput: float
    mean_relative_completions: float


def one_and_n_saturated_distributions(servers: int, p_n: float, mu_1: float, mu_n: float) -> OneAndNSaturated:
    """π, P, π^d, Δ̃ and Δ of the saturated "1 and n" system as arrays (O(n) memory: meant for small n). [exact]

    Source: Grosof & Ayhan, Lemmas 5.1 (π), 5.2 (P, including b = 1: erratum, docs/errata.md#multilevel-lemma-5-2), 5.3
    (μ), 5.4 (π^d) and the proof of Lemma 5.5 (Δ̃(i) = i − m H_i for 1 <= i < n, Δ̃(n) as in
    :func:`one_and_n_mean_relative_completions`). Lemma 5.1 as printed (relative to π_{0,0}) assumes n >= 2: for n = 1
    the states (0, 0) and (0, n − 1) coincide and π_{0,0} = 1/2 ≠ π_{1,0} = p_n/2; writing every π relative to π_{1,0} =
    p_n/2 (as done here) makes the lemma hold for all n >= 1. See :class:`OneAndNSaturated` for the layout.

    Args: as :func:`one_and_n_throughput`, except p_n must be > 0 (at p_n = 0 the chain never leaves (0, n) and the
    lemmas divide by p_n).
    """
    n, p_n, mu_1, mu_n = _one_and_n_args(servers, p_n, mu_1, mu_n)
    if p_n == 0.0:
        raise ValueError("p_n = 0.0: must be > 0 for the distributions (Lemmas 5.1-5.4 divide by p_n); the limit "
                         "p_n -> 0 puts all mass on state (0, n) with Δ = 0")
    system = _OneAndN.of(n, p_n, mu_1, mu_n)
    i = np.arange(n + 1, dtype=np.float64)
    powers = _p1_powers(system.log_p1, i)                                   # p₁ⁱ, i = 0..n
    rates = np.concatenate(([mu_n], mu_1 * i[1:]))
    pi_d = np.concatenate((p_n * powers[:n], powers[n:]))
    p_time = pi_d * (system.m * mu_1) / rates                               # P_i = (μ/μ_i) π^d_i
    offset = np.concatenate(([0.0], _delta_tilde_below_n(i[1:n], system.m), [system.delta_tilde_n]))
    delta = offset - float(p_time @ offset)
    return OneAndNSaturated(
        transition_average=_lemma_5_1(powers, p_n), time_average=p_time, completion_average=pi_d,
        completion_rates=rates, relative_completions_offset=offset, relative_completions=delta,
        throughput=system.throughput, mean_relative_completions=float(pi_d @ delta))


@dataclass(frozen=True)
class _OneAndN:
    """Validated parameters of a "1 and n" system with 0 < p_n <= 1 and the scalars its closed forms share.

    Attributes (besides n, p_n, μ₁, μ_n):
        log_p1: ln p₁ = log1p(−p_n) (−inf when p_n = 1).
        one_plus_x: 1 + x = nμ₁/μ = nμ₁[p_n/μ_n + p₁ⁿ/(nμ₁) + (p_n/μ₁)S], S = Σ_{b=1}^{n−1} p₁ᵇ/b (positive terms).
        x: nμ₁/μ − 1 = p_n[(nμ₁ − μ_n)/μ_n + Σ_{b=1}^{n−1} p₁ᵇ (n − b)/b]. This is the paper's eq. (30)
            (proof of Lemma 8.3), x = nμ₁p_n/μ_n + expm1(n·log1p(−p_n)) + n p_n S, with p₁ⁿ − 1 = −p_n Σ_{b=0}^{n−1} p₁ᵇ
            substituted, so all terms of the series are positive and the only cancellation left is the intrinsic
            nμ₁ − μ_n.
    """

    n: int
    p_n: float
    mu_1: float
    mu_n: float
    log_p1: float
    one_plus_x: float
    x: float

    @staticmethod
    def of(n: int, p_n: float, mu_1: float, mu_n: float) -> _OneAndN:
        log_p1 = -math.inf if p_n == 1.0 else math.log1p(-p_n)
        log_series, gap_series = _series(log_p1, n - 1, n)
        one_plus_x = n * mu_1 * (p_n / mu_n + _exp(n * log_p1) / (n * mu_1) + p_n * log_series / mu_1)
        x = p_n * ((n * mu_1 - mu_n) / mu_n + gap_series)
        return _OneAndN(n, p_n, mu_1, mu_n, log_p1, one_plus_x, x)

    @property
    def throughput(self) -> float:
        """μ = nμ₁/(1 + x), Lemma 5.3, jobs per unit time."""
        return self.n * self.mu_1 / self.one_plus_x

    @property
    def m(self) -> float:
        """m = μ/μ₁, the throughput in units of one 1-server job's service rate."""
        return self.n / self.one_plus_x

    @property
    def deficit(self) -> float:
        """1 − μ/(nμ₁) = x/(1 + x), without cancellation."""
        return self.x / self.one_plus_x

    @property
    def delta_tilde_n(self) -> float:
        """Δ̃(n) = n − 1 + (1 − μ/(nμ₁))/p_n − m H_{n−1} (Lemma 5.5's Δ̃(n), without cancellation)."""
        return self.n - 1 + self.deficit / self.p_n - self.m * float(_harmonic(self.n - 1))

    @property
    def head_term(self) -> float:
        """p₁ⁿ (1 − μ/(nμ₁)) Δ̃(n): the state-n term of Lemma 5.5."""
        return _exp(self.n * self.log_p1) * self.deficit * self.delta_tilde_n

    def tail_sum(self) -> float:
        """Σ_{i=1}^{n−1} p₁ⁱ p_n (1 − m/i)(i − m H_i): the sum in Lemma 5.5, in blocks, truncated at underflow."""
        m = self.m
        blocks = []
        for i in _blocks(self.log_p1, self.n - 1):
            weight = np.exp(i * self.log_p1)
            weight *= i - m
            weight /= i
            weight *= _delta_tilde_below_n(i, m)
            blocks.append(float(np.sum(weight)))      # not weight @ ...: BLAS threads stall on a busy machine
        return self.p_n * math.fsum(blocks)


def _one_and_n_args(servers: int, p_n: float, mu_1: float, mu_n: float) -> tuple[int, float, float, float]:
    return (require_count("servers", servers), require_probability("p_n", p_n), require_positive("mu_1", mu_1),
            require_positive("mu_n", mu_n))


def _series(log_p1: float, terms: int, n: int) -> tuple[float, float]:
    """(Σ_{b=1}^{terms} p₁ᵇ/b, Σ_{b=1}^{terms} p₁ᵇ (n − b)/b) for p₁ = exp(log_p1); the first → ln(1/p_n) as
    terms → ∞ (Σ_{b>=1} p₁ᵇ/b = −ln(1 − p₁))."""
    log_parts, gap_parts = [], []
    for b in _blocks(log_p1, terms):
        ratio = np.exp(b * log_p1)
        ratio /= b
        log_parts.append(float(np.sum(ratio)))
        ratio *= n - b
        gap_parts.append(float(np.sum(ratio)))
    return math.fsum(log_parts), math.fsum(gap_parts)


def _blocks(log_p1: float, last: int) -> Iterator[np.ndarray]:
    """Float arrays covering i = 1..last in blocks of at most _CHUNK, stopping where p₁ⁱ = exp(i·log_p1)
    underflows to 0 (later terms of every series here vanish)."""
    if log_p1 == -math.inf:
        return
    if -log_p1 * last > _EXP_UNDERFLOW:
        last = math.ceil(_EXP_UNDERFLOW / -log_p1)
    for start in range(1, last + 1, _CHUNK):
        yield np.arange(start, min(start + _CHUNK, last + 1), dtype=np.float64)


def _p1_powers(log_p1: float, exponents: np.ndarray) -> np.ndarray:
    """p₁ᵏ = exp(k·log_p1), accurate for tiny p_n; for p₁ = 0 (log_p1 = −inf), 0⁰ = 1 and 0ᵏ = 0."""
    if log_p1 == -math.inf:
        return (exponents == 0).astype(np.float64)
    return np.exp(exponents * log_p1)


def _exp(log_value: float) -> float:
    """exp, with exp(−inf) = 0 (p₁ⁿ when p_n = 1)."""
    return 0.0 if log_value == -math.inf else math.exp(log_value)


def _harmonic(i: np.ndarray | int) -> np.ndarray | float:
    """H_i = Σ_{k=1}^{i} 1/k (H_0 = 0), without cumulative-sum drift.

    H_i = ψ(i + 1) + γ (digamma) if any i < 64, else the asymptotic series
    ln i + γ + 1/(2i) − 1/(12i²) + 1/(120i⁴) − 1/(252i⁶), whose remainder (< 1/(240 i⁸) < 2e−17) is below the
    rounding error; the series is about 4× faster than digamma on large blocks.
    """
    i = np.asarray(i, dtype=np.float64)
    if i.size == 0 or i.min() < _HARMONIC_SERIES_FROM:
        return digamma(i + 1.0) + np.euler_gamma
    inv2 = 1.0 / (i * i)
    tail = inv2 * (-1.0 / 12 + inv2 * (1.0 / 120 - inv2 / 252))
    return np.log(i) + np.euler_gamma + 0.5 / i + tail


def _delta_tilde_below_n(i: np.ndarray, m: float) -> np.ndarray:
    """Δ̃(i) = i − m H_i for 1 <= i < n (Lemma 5.5 proof: Δ(i) − Δ(i − 1) = 1 − m/i), m = μ/μ₁."""
    return i - m * _harmonic(i)


def _lemma_5_1(powers: np.ndarray, p_n: float) -> np.ndarray:
    """π[a, b] of Lemma 5.1, normalised, from p₁ᵇ (b = 0..n); see :class:`OneAndNSaturated`."""
    n = powers.size - 1
    scale = p_n / 2.0                                   # π_{1,0}: total mass 2π_{1,0}/p_n = 1
    pi = np.zeros((2, n + 1))
    pi[1, :n] = scale * powers[:n]
    pi[0, :n - 1] = scale * powers[:n - 1]
    pi[0, n - 1:] = scale * powers[n - 1:] / p_n
    return pi


# =====================================================================================================================
# Any needs, exponential durations: the saturated chain solved numerically


@dataclass(frozen=True, eq=False)
class SaturatedSystem:
    """Stationary analysis of the saturated FCFS multiserver-job system (Grosof & Ayhan §3.2, §5). [exact]

    States. A state is (counts, head): counts[k] = class-k jobs in service, head = class of the job blocked at the head
    of the queue, or NO_HEAD (−1). The head's class is drawn only when a job could fit (free servers >= the smallest
    need), as the paper does for "1 and n" (§3.2: jobs are generated "until either all n servers are occupied, or an
    n-server job is generated that cannot be served"); this changes neither μ nor E[Δ(Y_d)]
    (docs/modelling-choices.md#multilevel-saturated-head) and makes the states match the paper's. Two kinds of states
    occur (paper §5.1):

    * completing states: a blocked head (head >= 0), or no head and fewer free servers than the smallest need.
      Time is spent here; the next event is a completion (total rate μ_y = Σ_k counts[k]·rates[k]).
    * arriving states: head = NO_HEAD with room for some class. Zero sojourn time (completion rate 0); the next
      step draws a job's class i.i.d. ("an arrival" of the saturated system).

    A completion removes the job; if the blocked head now fits it enters in the same step. An arrival either enters
    (then, if room is left, the next state is again arriving) or becomes the blocked head. Only the recurrent class
    of this chain is kept (e.g. the empty system is transient when no single job can fill the servers).

    For needs (1, n) the states are the paper's (a, b) (Lemma 5.1) one to one: (0, b < n) = ((b, 0), NO_HEAD)
    arriving; (0, n) = ((n, 0), NO_HEAD); (1, 0) = ((0, 1), NO_HEAD); (1, 1 <= b < n) = ((b, 0), 1).

    Attributes:
        states: the recurrent states, in breadth-first order from the empty system.
        time_average: P_y, the time-stationary law (0 on arriving states).
        transition_average: π_y, the stationary law of the transition-based embedded DTMC (paper §5): one step at
            every completion (the state *before* it) and one at every job generation (the arriving state before
            the draw). Completions and generations alternate in the long run, so completing states carry total
            mass exactly 1/2, and π restricted to them and renormalised is π^d. For needs (1, n) this is Lemma 5.1's
            π (normalised) under the state map above.
        completion_average: π^d_y ∝ P_y μ_y, the law of Y_d: the state from which a completion occurs (Lemma 5.4).
        completion_rates: μ_y, completions per unit time in state y (0 on arriving states).
        throughput: μ = Σ_y P_y μ_y, jobs per unit time: the open FCFS system is stable iff λ < μ.
        relative_completions: Δ(y), solution of the Poisson equation (paper eq. (1))
            μ_y Δ(y) = μ_y − μ + Σ_{y'} r_{y,y'} Δ(y') on completing states (r = completion rates to y', self-loops
            included; equivalent to (1)), Δ(y) = Σ_k p_k Δ(next state after drawing class k) on arriving states
            (the zero-sojourn limit of (1)), normalised by Σ_y P_y Δ(y) = 0.
        mean_relative_completions: E[Δ(Y_d)] = Σ_y π^d_y Δ(y); lim_{ρ→1} (1 − ρ)E[Q] = E[Δ(Y_d)] + 1.
        transition_matrix: the one-step matrix T of the transition-based DTMC (scipy CSR): π T = π, and
            (I − T)Δ = r with r_y = 1 − μ/μ_y on completing states, 0 on arriving states.
    """

    states: list[State]
    time_average: np.ndarray
    transition_average: np.ndarray
    completion_average: np.ndarray
    completion_rates: np.ndarray
    throughput: float
    relative_completions: np.ndarray
    mean_relative_completions: float
    transition_matrix: sp.csr_matrix


def saturated_fcfs(servers: int, needs: Sequence[int], probabilities: Sequence[float],
                   rates: Sequence[float]) -> SaturatedSystem:
    """Solve the saturated FCFS multiserver-job system with exponential durations. [exact]

    Source: the saturated system of Grosof & Ayhan §3.2 and §5 (defined there for needs 1 and n) for arbitrary needs:
    build the transition-based embedded DTMC of :class:`SaturatedSystem` (breadth-first from the empty system, keep its
    recurrent class), then solve two sparse linear systems with SuperLU: π(I − T) = 0 with one balance equation replaced
    by π_0 = 1 (a single unit entry, not a dense row of ones), then normalised; and (I − T)Δ = r with Δ_0 = 0, then
    shifted so that Σ P_y Δ(y) = 0. From π: P_y ∝ π_y/μ_y, π^d_y ∝ π_y on completing states, μ = Σ P_y μ_y. For needs
    (1, n) every output equals the closed forms of Lemmas 5.1–5.5. The state count is polynomial in n for a fixed number
    of classes (n = 64 with three classes: a few hundred states, milliseconds).

    Args:
        servers: n >= 1, identical servers.
        needs: servers m_k in [1, servers] held at once by a class-k job (K >= 1 classes).
        probabilities: p_k > 0, summing to 1 within 1e-9 (renormalised): the i.i.d. class of each job. Classes
            with p_k = 0 are rejected (drop them: they never occur).
        rates: μ_k > 0, class-k durations are Exp(μ_k), per unit time.
    Returns:
        A :class:`SaturatedSystem`.
    """
    chain = SaturatedChain.build(_ClassMix.checked(needs, probabilities, rates, servers))
    pi = stationary_distribution(chain.matrix)
    p_time, throughput = time_stationary(pi, chain.rates)
    pi_d = np.where(chain.rates > 0, pi, 0.0)
    pi_d /= pi_d.sum()
    delta = _relative_completions(chain, throughput, p_time)
    return SaturatedSystem(
        states=chain.states, time_average=p_time, transition_average=pi, completion_average=pi_d,
        completion_rates=chain.rates, throughput=throughput, relative_completions=delta,
        mean_relative_completions=float(pi_d @ delta), transition_matrix=chain.matrix)


def fcfs_stability_threshold(servers: int, needs: Sequence[int], probabilities: Sequence[float],
                             rates: Sequence[float]) -> float:
    """μ, the saturated throughput = FCFS stability threshold (stable iff λ < μ), any needs. [exact]

    Source: Grosof & Ayhan §3.2 (saturated system, prior work cited there). As :func:`saturated_fcfs` without the
    Poisson equation. Arguments as :func:`saturated_fcfs`.

    Returns:
        μ, jobs per unit time.
    """
    chain = SaturatedChain.build(_ClassMix.checked(needs, probabilities, rates, servers))
    return time_stationary(stationary_distribution(chain.matrix), chain.rates)[1]


def heavy_traffic_constant(servers: int, needs: Sequence[int], probabilities: Sequence[float],
                           rates: Sequence[float]) -> float:
    """E[Δ(Y_d)] + 1 = lim_{ρ→1} (1 − ρ)E[Q] of the FCFS multiserver-job system, any needs. [exact limit]

    Source: Grosof & Ayhan eq. (2), quoting their ref. [16] (Grosof, Hong, Harchol-Balter & Scheller-Wolf, "The RESET
    and MARC techniques, with application to multiserver-job analysis", Thm 4.2), ρ = λ/μ. Q may be taken as the number
    waiting or the number in system (they differ by at most n, so the limit is the same;
    docs/modelling-choices.md#multilevel-queue-length); by Little's law also lim (1 − ρ)μE[T]. For one class of need 1
    (M/M/n) it is 1; for the M/G/1-like case n = 1 it is (1 + C²)/2. Arguments as :func:`saturated_fcfs`.

    Returns:
        E[Δ(Y_d)] + 1, dimensionless (jobs × (1 − ρ)).
    """
    return saturated_fcfs(servers, needs, probabilities, rates).mean_relative_completions + 1.0


def heavy_traffic_mean_number(load_fraction_rho: float, constant: float) -> float:
    """E[N] ≈ (E[Δ(Y_d)] + 1)·ρ/(1 − ρ) for the open FCFS system at finite load. [approximation]

    Source: docs/derivations.md#multilevel-finite-load (not in the paper): the heavy-traffic limit of eq. (2)
    extended to ρ < 1; by ref. [16] the error is an additive O(1) (bounded in ρ), so the relative error vanishes as
    ρ → 1. Do not use it for other policies (docs/modelling-choices.md#multilevel-heavy-traffic-scope).

    Args:
        load_fraction_rho: ρ = λ/μ in [0, 1), the fraction of the FCFS stability region in use (not the
            utilisation); μ from :func:`fcfs_stability_threshold`.
        constant: E[Δ(Y_d)] + 1 > 0, from :func:`heavy_traffic_constant` or
            :func:`one_and_n_mean_relative_completions` + 1.
    Returns:
        Approximate mean number of jobs (waiting or in system: the two differ by O(1)).
    """
    rho = require_probability("load_fraction_rho", load_fraction_rho)
    if rho == 1.0:
        raise ValueError("load_fraction_rho = 1.0: must be < 1 (the queue is unstable at ρ = 1)")
    return require_positive("constant", constant) * rho / (1.0 - rho)


@dataclass(frozen=True)
class _ClassMix:
    """Validated class mix: needs m_k, probabilities p_k (summing to 1), rates μ_k, servers n."""

    needs: tuple[int, ...]
    probabilities: tuple[float, ...]
    rates: tuple[float, ...]
    servers: int

    @staticmethod
    def checked(needs: Sequence[int], probabilities: Sequence[float], rates: Sequence[float],
                servers: int) -> _ClassMix:
        n = require_count("servers", servers)
        m = tuple(require_count(f"needs[{k}]", need) for k, need in enumerate(needs))
        if not m:
            raise ValueError("needs = []: must hold at least one class")
        if not len(m) == len(probabilities) == len(rates):
            raise ValueError(f"needs, probabilities and rates have lengths {len(m)}, {len(probabilities)}, "
                             f"{len(rates)}: must be equal (one entry per class)")
        if max(m) > n:
            raise ValueError(f"needs = {list(m)!r}: every need must be in [1, servers = {n}]")
        p = [require_probability(f"probabilities[{k}]", q) for k, q in enumerate(probabilities)]
        if min(p) == 0.0:
            raise ValueError(f"probabilities = {p!r}: every class must have probability > 0 (drop the classes "
                             f"that never occur)")
        if abs(math.fsum(p) - 1.0) > _PROBABILITY_TOLERANCE:
            raise ValueError(f"probabilities = {p!r}: must sum to 1 (within {_PROBABILITY_TOLERANCE:g}), "
                             f"got {math.fsum(p)!r}")
        total = math.fsum(p)
        mu = tuple(require_positive(f"rates[{k}]", rate) for k, rate in enumerate(rates))
        return _ClassMix(m, tuple(q / total for q in p), mu, n)

    def free(self, counts: tuple[int, ...]) -> int:
        """Idle servers in configuration ``counts``."""
        return self.servers - sum(need * c for need, c in zip(self.needs, counts))

    def is_arriving(self, state: State) -> bool:
        counts, head = state
        return head == NO_HEAD and self.free(counts) >= min(self.needs)

    def arrival_steps(self, counts: tuple[int, ...]) -> Iterator[tuple[State, float]]:
        """(next state, probability) when a job of i.i.d. class is generated in arriving configuration ``counts``."""
        free = self.free(counts)
        for k, (need, p) in enumerate(zip(self.needs, self.probabilities)):
            yield ((_shifted(counts, k, +1), NO_HEAD) if need <= free else (counts, k)), p

    def completion_steps(self, counts: tuple[int, ...], head: int) -> Iterator[tuple[State, float]]:
        """(next state, rate) for each class that can complete in completing state (counts, head)."""
        for j, c in enumerate(counts):
            if c == 0:
                continue
            after = _shifted(counts, j, -1)
            if head != NO_HEAD and self.needs[head] <= self.free(after):
                yield (_shifted(after, head, +1), NO_HEAD), c * self.rates[j]
            else:
                yield (after, head), c * self.rates[j]


def _shifted(counts: tuple[int, ...], k: int, delta: int) -> tuple[int, ...]:
    return counts[:k] + (counts[k] + delta,) + counts[k + 1:]


@dataclass(frozen=True)
class SaturatedChain:
    """The transition-based DTMC of :class:`SaturatedSystem` on its recurrent class, built by :meth:`build` from a
    class mix: any object with ``needs`` (one entry per class), ``is_arriving(state)``, ``arrival_steps(counts)`` and
    ``completion_steps(counts, head)`` (the steps as (target state, weight) pairs), states ``(counts, head)``. Shared
    with :func:`msjgym.theory.multi_resource.fcfs_saturated_throughput`, whose mix fits vectors."""

    states: list[State]
    matrix: sp.csr_matrix   # one-step transition probabilities T
    rates: np.ndarray       # completion rate μ_y (0 on arriving states)

    @staticmethod
    def build(mix: _ClassMix) -> SaturatedChain:
        start: State = ((0,) * len(mix.needs), NO_HEAD)
        index, states = {start: 0}, [start]
        rows, cols, probs, rates = [], [], [], []
        for i, state in enumerate(states):          # grows while iterating: breadth-first search
            if mix.is_arriving(state):
                steps, total = list(mix.arrival_steps(state[0])), 1.0
                rates.append(0.0)
            else:
                steps = list(mix.completion_steps(*state))
                total = math.fsum(w for _, w in steps)
                rates.append(total)
            for target, weight in steps:
                j = index.setdefault(target, len(states))
                if j == len(states):
                    states.append(target)
                rows.append(i)
                cols.append(j)
                probs.append(weight / total)
        size = len(states)
        matrix = sp.csr_matrix((probs, (rows, cols)), shape=(size, size))
        keep = _recurrent_class(matrix)
        return SaturatedChain([states[i] for i in keep], matrix[keep][:, keep].tocsr(), np.asarray(rates)[keep])


def _recurrent_class(matrix: sp.csr_matrix) -> np.ndarray:
    """Indices of the unique closed communicating class of the chain with one-step matrix ``matrix``."""
    count, labels = csgraph.connected_components(matrix, directed=True, connection="strong")
    coo = matrix.tocoo()
    leaving = labels[coo.row] != labels[coo.col]
    closed = np.setdiff1d(np.arange(count), labels[coo.row[leaving]])
    if closed.size != 1:
        raise RuntimeError(f"the saturated chain has {closed.size} closed classes; expected exactly one")
    return np.flatnonzero(labels == closed[0])


def _with_unit_row(matrix: sp.spmatrix, row: int) -> sp.csc_matrix:
    """``matrix`` with row ``row`` replaced by the unit row e_row (pins one unknown; no dense row)."""
    coo = matrix.tocoo()
    keep = coo.row != row
    data = np.append(coo.data[keep], 1.0)
    return sp.csc_matrix((data, (np.append(coo.row[keep], row), np.append(coo.col[keep], row))),
                         shape=matrix.shape)


def stationary_distribution(matrix: sp.csr_matrix) -> np.ndarray:
    """The stationary law of an irreducible DTMC with one-step matrix ``matrix`` (a uniformized CTMC's too): π with
    π T = π, Σπ = 1; solves (I − T)ᵀ π = 0 with the balance equation of state 0 replaced by π_0 = 1."""
    size = matrix.shape[0]
    system = (sp.identity(size, format="csr") - matrix).T
    rhs = np.zeros(size)
    rhs[0] = 1.0
    pi = np.atleast_1d(spsolve(_with_unit_row(system, 0), rhs))
    return pi / pi.sum()


def time_stationary(pi: np.ndarray, rates: np.ndarray) -> tuple[np.ndarray, float]:
    """The time-stationary law and the throughput of a :class:`SaturatedChain` (``pi``: its stationary law,
    ``rates``: its completion rates): (P, μ), P_y ∝ π_y/μ_y on completing states (mean sojourn 1/μ_y per visit),
    μ = Σ P_y μ_y."""
    completing = rates > 0
    p_time = np.zeros_like(pi)
    p_time[completing] = pi[completing] / rates[completing]
    p_time /= p_time.sum()
    return p_time, float(p_time @ rates)


def _relative_completions(chain: SaturatedChain, throughput: float, p_time: np.ndarray) -> np.ndarray:
    """Δ: (I − T)Δ = r (r_y = 1 − μ/μ_y completing, 0 arriving) with Δ_0 = 0, shifted to Σ P_y Δ(y) = 0."""
    size = chain.rates.size
    completing = chain.rates > 0
    reward = np.zeros(size)
    reward[completing] = 1.0 - throughput / chain.rates[completing]
    reward[0] = 0.0
    system = _with_unit_row(sp.identity(size, format="csr") - chain.matrix, 0)
    delta = np.atleast_1d(spsolve(system, reward))
    return delta - float(p_time @ delta)
