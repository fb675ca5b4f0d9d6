"""Saturated-system analysis of FCFS multiserver-job systems: throughput = FCFS stability threshold.

The *saturated system* is the closed version of an FCFS (head-of-line blocking) MSJ system: the queue never empties,
and whenever servers free up, jobs drawn i.i.d. from the class mix enter in order until the head job does not fit.
Its long-run completion rate μ (jobs per unit time) is the stability threshold of the open FCFS system: stable iff
λ < μ (Grosof & Ayhan, "Multiserver-job Response Time under Multilevel Scaling", §3.2; notes §§1.4, 3.1).

Implemented here:
    * :func:`one_and_n_throughput` — μ of the "1 and n" system in closed form (Lemma 5.3), O(min(n, 1/p_n)).
"""
from __future__ import annotations

import math

import numpy as np

from msjgym.theory.queues import require_count, require_positive, require_probability

_CHUNK = 1 << 20          # terms per vectorised block of a series
_EXP_UNDERFLOW = 746.0    # exp(-x) == 0.0 in float64 for x >= this


def one_and_n_throughput(servers: int, p_n: float, mu_1: float, mu_n: float) -> float:
    """Saturated-system throughput μ of the FCFS "1 and n" system = its stability threshold. [exact]

    Source: Grosof & Ayhan, "Multiserver-job Response Time under Multilevel Scaling", Lemma 5.3:

        μ = (1/p_n) · [1/μ_n + p₁ⁿ/(n μ₁ p_n) + Σ_{b=1}^{n−1} p₁ᵇ/(b μ₁)]⁻¹,   p₁ = 1 − p_n,

    evaluated as 1 / [p_n/μ_n + p₁ⁿ/(n μ₁) + (p_n/μ₁) Σ_{b=1}^{n−1} p₁ᵇ/b], a sum of positive terms (no
    cancellation), with p₁ᵇ = exp(b·log1p(−p_n)) and the series summed in vectorised blocks and truncated where p₁ᵇ
    underflows (notes §3.11), so the cost is O(min(n, 1/p_n)) and n up to 10⁸ is fine.

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
    n = require_count("servers", servers)
    p_n = require_probability("p_n", p_n)
    mu_1 = require_positive("mu_1", mu_1)
    mu_n = require_positive("mu_n", mu_n)
    if p_n == 1.0:
        return mu_n
    if p_n == 0.0:
        return n * mu_1
    p1_to_n = math.exp(n * math.log1p(-p_n))
    return 1.0 / (p_n / mu_n + p1_to_n / (n * mu_1) + p_n * _log_series(p_n, n - 1) / mu_1)


def _log_series(p_n: float, terms: int) -> float:
    """Σ_{b=1}^{terms} (1 − p_n)ᵇ / b for p_n in (0, 1); tends to ln(1/p_n) as terms → ∞ (notes §3.10)."""
    log_p1 = math.log1p(-p_n)
    terms = min(terms, math.ceil(_EXP_UNDERFLOW / -log_p1))
    total = 0.0
    for start in range(1, terms + 1, _CHUNK):
        b = np.arange(start, min(start + _CHUNK, terms + 1), dtype=np.float64)
        total += float(np.sum(np.exp(b * log_p1) / b))
    return total
