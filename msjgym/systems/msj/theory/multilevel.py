"""Multilevel-scaling asymptotics of the FCFS "1 and n" multiserver-job system (n → ∞, p_n → 0).

Source: Grosof & Ayhan, "Multiserver-job Response Time under Multilevel Scaling" ("the paper"), §4 and §§6–8, with
the errata of docs/errata.md (section "The '1 and n' system") and the supplementary results of docs/derivations.md.
Jobs need 1 server (probability p₁ = 1 − p_n, rate μ₁) or all n servers (probability p_n, rate μ_n); μ is the
saturated throughput = FCFS stability threshold (jobs per unit time) and E[Δ(Y_d)] + 1 = lim_{ρ→1} (1 − ρ)E[Q] the
heavy-traffic constant. Exact values for any fixed (n, p_n, μ₁, μ_n): :mod:`msjgym.theory.saturated` (Lemmas 5.3,
5.5); use those to evaluate a system, and these formulas only to describe growth rates: in regimes 1 and 2 the
ratio exact/asymptotic approaches 1 like 1 − K/ln(1/p_n), still visibly below 1 at n = 10⁸.

Regimes (paper §3.1, §4; docs/modelling-choices.md#multilevel-regimes), for p_n = n^−α (:func:`classify_regime`):
    1. n-server dominated, p_n = ω(1/n) (α < 1): Thm 4.1.
    2. balanced, p_n = c/n (α = 1, c = 1): Thm 4.1 (limits independent of c).
    3. 1-server dominated, p_n = o(1/n) (α > 1): Lemma 8.1, Thm 4.2 (γ-corrected, Lemma 8.3), Thm 8.1.
Lemma 8.2 (p_n = o(1/(n ln n)) ⇒ E[Δ(Y_d)] = o(1/p_n)) is an upper bound without a formula and is not implemented.

Implemented here:
    * :func:`throughput_regimes_1_2`, :func:`mean_relative_completions_regimes_1_2` — Thm 4.1 [asymptotic].
    * :func:`throughput_regime_3` — Lemma 8.1 [asymptotic].
    * :func:`throughput_polynomial_regime_3` — Thm 4.2 / Lemma 8.3 with the Euler–γ erratum [asymptotic].
    * :func:`mean_relative_completions_polynomial_regime_3` — Thm 4.2 / Thm 8.1 [asymptotic].
    * :func:`mean_relative_completions_polynomial_regime_3_second_order` — not in the paper
      (docs/derivations.md#multilevel-second-order) [asymptotic].
    * :func:`balanced_throughput` — not in the paper (docs/derivations.md#multilevel-balanced-sharp) [approximation].
    * :func:`classify_regime` — the regime of p_n = n^−α and the formulas that apply.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.special import exp1

from msjgym.theory.checks import is_finite, require_count, require_in, require_positive

EULER_GAMMA = 0.5772156649015329
"""Euler–Mascheroni constant γ (the paper prints 0.57726, a typo: docs/errata.md#multilevel-euler-gamma-value)."""


# =====================================================================================================================
# Regimes 1 and 2: p_n = ω(1/n) or p_n = c/n


def throughput_regimes_1_2(p_n: float, mu_1: float) -> float:
    """μ ≈ μ₁/(p_n ln(1/p_n)) in regimes 1 (p_n = ω(1/n)) and 2 (p_n = c/n). [asymptotic]

    Source: Grosof & Ayhan, Thm 4.1 (proofs: Lemma 6.1, Lemma 7.1): μ = (1 + o(1)) μ₁/(p_n ln(1/p_n)) as n → ∞,
    p_n → 0; independent of μ_n and of c. Convergence is logarithmically slow (the ratio moves like 1 − K/ln(1/p_n)).

    Args:
        p_n: probability in (0, 1) that a job needs all n servers.
        mu_1: service rate μ₁ > 0 of 1-server jobs, per unit time.
    Returns:
        Approximate μ, jobs per unit time.
    """
    p_n = _open_probability("p_n", p_n)
    return require_positive("mu_1", mu_1) / (p_n * -math.log(p_n))


def mean_relative_completions_regimes_1_2(p_n: float) -> float:
    """E[Δ(Y_d)] ≈ 1/(2p_n) in regimes 1 (p_n = ω(1/n)) and 2 (p_n = c/n). [asymptotic]

    Source: Grosof & Ayhan, Thm 4.1 (proofs: Thm 6.1, Thm 7.1): E[Δ(Y_d)] = (1 + o(1))/(2p_n); independent of μ₁,
    μ_n and c. In the balanced regime this is n/(2c) = θ(n), the peak of the heavy-traffic queue length.

    Args:
        p_n: probability in (0, 1) that a job needs all n servers.
    Returns:
        Approximate E[Δ(Y_d)], dimensionless.
    """
    return 0.5 / _open_probability("p_n", p_n)


def balanced_throughput(servers: int, c: float, mu_1: float, mu_n: float) -> float:
    """Sharp form of μ in the balanced regime p_n = c/n. [approximation, not in the paper]

    Source: docs/derivations.md#multilevel-balanced-sharp (supplementary), from Lemma 5.3 with
    Σ_{b=1}^{n−1} p₁ᵇ/b ≈ ln(n/c) − E₁(c) and p₁ⁿ ≈ e^−c:

        μ ≈ (1/p_n) [1/μ_n + e^−c/(cμ₁) + (ln(n/c) − E₁(c))/μ₁]⁻¹,    p_n = c/n,   E₁ = exponential integral.

    Unlike Thm 4.1 it keeps the O(1) terms next to ln(1/p_n), so its relative error vanishes like O(1/n) up to
    logarithms instead of O(1/ln n).

    Args:
        servers: n >= 1 with c/n < 1.
        c: balanced-regime constant c > 0 (p_n = c/n).
        mu_1: service rate μ₁ > 0, per unit time.
        mu_n: service rate μ_n > 0, per unit time.
    Returns:
        Approximate μ, jobs per unit time.
    """
    n = require_count("servers", servers)
    c = require_positive("c", c)
    mu_1, mu_n = require_positive("mu_1", mu_1), require_positive("mu_n", mu_n)
    p_n = _open_probability("c/servers", c / n)
    return 1.0 / (p_n * (1.0 / mu_n + math.exp(-c) / (c * mu_1) + (math.log(n / c) - exp1(c)) / mu_1))


# =====================================================================================================================
# Regime 3: p_n = o(1/n)


def throughput_regime_3(servers: int, p_n: float, mu_1: float) -> float:
    """μ ≈ nμ₁/(1 + n p_n ln n) in regime 3 (p_n = o(1/n)). [asymptotic]

    Source: Grosof & Ayhan, Lemma 8.1, from its proof's intermediate step μ = (1 + o(1))(1/p_n)(1/(nμ₁p_n) +
    ln n/μ₁)⁻¹, valid for every p_n = o(1/n). Its two cases: p_n = o(1/(n ln n)) gives μ ~ nμ₁;
    p_n = ω(1/(n ln n)) (and o(1/n)) gives μ ~ μ₁/(p_n ln n).

    Args:
        servers: n >= 1.
        p_n: probability in [0, 1) that a job needs all n servers.
        mu_1: service rate μ₁ > 0 of 1-server jobs, per unit time.
    Returns:
        Approximate μ, jobs per unit time.
    """
    n = require_count("servers", servers)
    p_n = _probability_below_1("p_n", p_n)
    return n * require_positive("mu_1", mu_1) / (1.0 + n * p_n * math.log(n))


def throughput_polynomial_regime_3(servers: int, alpha: float, mu_1: float, mu_n: float, *,
                                   as_printed: bool = False) -> float:
    """μ ≈ μ₁[n − n^{2−α}(ln n + γ + μ₁/μ_n − 1)] for p_n = n^−α, α > 1 (γ-corrected Thm 4.2). [asymptotic]

    Source: Grosof & Ayhan, Thm 4.2 / Lemma 8.3, **with the erratum of docs/errata.md#multilevel-thm-4-2-euler-gamma**:
    the paper prints μ = μ₁(n − n^{2−α}(ln n + μ₁/μ_n − 1 + o(1))), having replaced H_{n−1} by ln n in the proof;
    H_{n−1} = ln n + γ + o(1), and γ is of the same order as the retained constant μ₁/μ_n − 1. Corrected:

        μ = μ₁[n − n^{2−α}(ln n + γ + μ₁/μ_n − 1)] + O(n^{3−2α} ln² n).

    At α = 2 the exact n − μ/μ₁ − (ln n + γ + μ₁/μ_n − 1) → 0 (≈ −(ln n + γ + μ₁/μ_n − 1)²/n), while the printed
    form misses by γ ≈ 0.577 for every n. For α in (1, 2) the remainder converges slowly: use the exact Lemma 5.3
    (:func:`msjgym.theory.saturated.one_and_n_throughput`) to evaluate.

    Args:
        servers: n >= 1.
        alpha: α > 1, p_n = n^−α.
        mu_1: service rate μ₁ > 0 of 1-server jobs, per unit time.
        mu_n: service rate μ_n > 0 of n-server jobs, per unit time.
        as_printed: True reproduces the paper's printed (γ-less, erroneous) form, for comparison only.
    Returns:
        Approximate μ, jobs per unit time.
    """
    n, alpha = require_count("servers", servers), _require_alpha_above_1(alpha)
    mu_1, mu_n = require_positive("mu_1", mu_1), require_positive("mu_n", mu_n)
    gamma = 0.0 if as_printed else EULER_GAMMA
    return mu_1 * (n - n ** (2.0 - alpha) * (math.log(n) + gamma + mu_1 / mu_n - 1.0))


def mean_relative_completions_polynomial_regime_3(servers: int, alpha: float) -> float:
    """E[Δ(Y_d)] ≈ ½ n^{2−α} ln² n for p_n = n^−α, α > 1. [asymptotic]

    Source: Grosof & Ayhan, Thm 4.2 / Thm 8.1: E[Δ(Y_d)] = (1 + o(1)) ½ n^{2−α} ln² n (leading term correct; the proof's
    Item 1 coefficient is not, docs/errata.md#multilevel-thm-8-1-item-1). The relative error is of order (μ₁/μ_n − 1 +
    γ)·2/ln n (see :func:`mean_relative_completions_polynomial_regime_3_second_order`), so it converges slowly when
    μ₁/μ_n is large (the paper's "looser" Fig. 12).

    Args:
        servers: n >= 1.
        alpha: α > 1, p_n = n^−α.
    Returns:
        Approximate E[Δ(Y_d)], dimensionless.
    """
    n, alpha = require_count("servers", servers), _require_alpha_above_1(alpha)
    return 0.5 * n ** (2.0 - alpha) * math.log(n) ** 2


def mean_relative_completions_polynomial_regime_3_second_order(servers: int, alpha: float, mu_1: float,
                                                               mu_n: float) -> float:
    """E[Δ(Y_d)] ≈ n^{2−α}[½ ln² n + (μ₁/μ_n − 1 + γ) ln n] for p_n = n^−α, α > 1. [asymptotic, not in the paper]

    Source: docs/derivations.md#multilevel-second-order, supplementary second-order expansion (not in the paper):
    E[Δ(Y_d)] = n^{2−α}[½ ln² n + (μ₁/μ_n − 1 + γ) ln n + O(1)]. At α = 2 the exact E[Δ(Y_d)] minus this tends
    to a constant (≈ 1.49 for μ₁ = μ_n), while minus the leading term alone it grows like ln n.

    Args:
        servers: n >= 1.
        alpha: α > 1, p_n = n^−α.
        mu_1: service rate μ₁ > 0, per unit time.
        mu_n: service rate μ_n > 0, per unit time.
    Returns:
        Approximate E[Δ(Y_d)], dimensionless.
    """
    n, alpha = require_count("servers", servers), _require_alpha_above_1(alpha)
    mu_1, mu_n = require_positive("mu_1", mu_1), require_positive("mu_n", mu_n)
    log_n = math.log(n)
    return n ** (2.0 - alpha) * (0.5 * log_n ** 2 + (mu_1 / mu_n - 1.0 + EULER_GAMMA) * log_n)


# =====================================================================================================================
# Regime classifier


@dataclass(frozen=True)
class Regime:
    """The multilevel-scaling regime of p_n = n^−α and the asymptotic formulas that apply (paper §4).

    Attributes:
        number: 1 (n-server dominated), 2 (balanced), 3 (1-server dominated).
        name: "n-server dominated", "balanced" or "1-server dominated".
        alpha: α, p_n = n^−α.
        throughput_source, relative_completions_source: the result used by :meth:`throughput` and
            :meth:`mean_relative_completions`.
        formulas: names of every function of this module that applies to this regime.
    """

    number: int
    name: str
    alpha: float
    throughput_source: str
    relative_completions_source: str
    formulas: tuple[str, ...]

    def p_n(self, servers: int) -> float:
        """p_n = n^−α."""
        return float(require_count("servers", servers)) ** -self.alpha

    def throughput(self, servers: int, mu_1: float, mu_n: float) -> float:
        """The regime's asymptotic μ at n = ``servers`` (jobs per unit time); μ_n enters only in regime 3 (Thm 4.1
        does not depend on it). [asymptotic]"""
        if self.number == 3:
            return throughput_polynomial_regime_3(servers, self.alpha, mu_1, mu_n)
        require_positive("mu_n", mu_n)
        return throughput_regimes_1_2(self.p_n(servers), mu_1)

    def mean_relative_completions(self, servers: int) -> float:
        """The regime's leading asymptotic E[Δ(Y_d)] at n = ``servers``. [asymptotic]"""
        if self.number == 3:
            return mean_relative_completions_polynomial_regime_3(servers, self.alpha)
        return mean_relative_completions_regimes_1_2(self.p_n(servers))


_REGIMES_1_2 = ("throughput_regimes_1_2", "mean_relative_completions_regimes_1_2")
_REGIME_3 = ("throughput_regime_3", "throughput_polynomial_regime_3", "mean_relative_completions_polynomial_regime_3",
             "mean_relative_completions_polynomial_regime_3_second_order")


def classify_regime(alpha: float) -> Regime:
    """The regime of p_n = n^−α as n → ∞ (paper §3.1, §4; docs/modelling-choices.md#multilevel-regimes).

    α < 1: regime 1, n-server dominated (n p_n → ∞), Thm 4.1. α = 1 (exactly): regime 2, balanced with c = 1,
    Thm 4.1 (and :func:`balanced_throughput`). α > 1: regime 3, 1-server dominated, Lemma 8.1 and the γ-corrected
    Thm 4.2 (convergence is slow for α in (1, 2)).

    Args:
        alpha: α > 0 (α = 0 would be p_n = 1, an M/M/1 of n-server jobs, not a multilevel-scaling limit).
    Returns:
        A :class:`Regime`.
    """
    if not (is_finite(alpha) and alpha > 0):
        raise ValueError(f"alpha = {alpha!r}: must be a finite number > 0 (p_n = n^-alpha must tend to 0)")
    alpha = float(alpha)
    if alpha < 1.0:
        return Regime(1, "n-server dominated", alpha, "Thm 4.1", "Thm 4.1", _REGIMES_1_2)
    if alpha == 1.0:
        return Regime(2, "balanced", alpha, "Thm 4.1", "Thm 4.1", _REGIMES_1_2 + ("balanced_throughput",))
    return Regime(3, "1-server dominated", alpha,
                  "Thm 4.2 / Lemma 8.3 (γ-corrected, docs/errata.md#multilevel-thm-4-2-euler-gamma)",
                  "Thm 4.2 / Thm 8.1", _REGIME_3)


def _open_probability(name: str, value: object) -> float:
    return require_in(name, value, 0.0, 1.0, closed=(False, False))


def _probability_below_1(name: str, value: object) -> float:
    return require_in(name, value, 0.0, 1.0, closed=(True, False))


def _require_alpha_above_1(alpha: object) -> float:
    if not (is_finite(alpha) and alpha > 1):
        raise ValueError(f"alpha = {alpha!r}: must be a finite number > 1 (regime 3, p_n = n^-alpha = o(1/n))")
    return float(alpha)
