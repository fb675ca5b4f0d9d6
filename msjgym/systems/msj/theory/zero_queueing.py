"""Zero queueing for FCFS multiserver jobs: stability, queueing-probability bounds, fluid limit, scaling regimes.

Source: Wang, Xie & Harchol-Balter, "Zero Queueing for Multi-Server Jobs", Proc. ACM Meas. Anal. Comput. Syst.
5(1), 2021 (SIGMETRICS '21); its errata and the choices it leaves open: docs/errata.md, docs/modelling-choices.md.

Model (paper §3): n identical servers, K job classes, Poisson arrivals λ_i = λp_i, class-i jobs hold m_i servers for
an Exp(μ_i) duration (time units), one FCFS queue with head-of-line blocking. Loads are dimensionless:
ρ_i = λ_i m_i/(n μ_i) (the fraction of the n servers class i keeps busy), ρ = Σ_i ρ_i; m_max = max_i m_i.

Implemented here (kind in brackets):
    * :func:`sufficient_load_limit`, :func:`stability_sufficient` — Thm 4.1, ρ < 1 − m_max/n [bound: sufficient].
    * :func:`single_class_load_limit`, :func:`single_class_stable` — K = 1, ρ < m⌊n/m⌋/n [exact].
    * :func:`queueing_probability_bound` — Thm 4.2 eq. (5), and the tighter combined form of (13)+(14) [bound].
    * :func:`lemma_5_4_bound`, :func:`lemma_5_3_bound` — drift bounds on E[(nρ_i − m_i X_i)^+], E[Σ m_i X_i/μ_i]
      [bound].
    * :func:`single_class_queueing_probability` — K = 1 is an M/M/⌊n/m⌋: Erlang C [exact].
    * :func:`fluid_rhs`, :func:`fluid_solution` — the fluid ODE (7)/(15) and its solution (16) (Thm 4.3) [exact
      solution of the ODE; the ODE itself is an asymptotic: n → ∞ description].
    * :func:`classify_regime`, :class:`ScalingRegime` — the regions of Fig. 3 / §1 and the 2α + γ < 1 condition
      [asymptotic: n → ∞].
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from msjgym.theory.checks import is_real, require_count, require_nonnegative, require_positive
from msjgym.theory.queues import erlang_c

# =====================================================================================================================
# Stability (Thm 4.1; K = 1 exact)


def sufficient_load_limit(m_max: int, n: int) -> float:
    """Load below which Theorem 4.1 guarantees stability: 1 − m_max/n (dimensionless). [bound: sufficient]

    Source: Wang, Xie & Harchol-Balter, Theorem 4.1, eq. (4). Not tight at finite n; the exact FCFS
    stability region for K >= 3 classes with unequal μ_i is open (use :func:`msjgym.systems.msj.theory.open_fcfs
    .saturated_throughput` numerically for small n).

    Args:
        m_max: the largest server need, in [1, n].
        n: number of servers >= 1.
    """
    n, m_max = _servers_and_need(n, m_max, "m_max")
    return 1.0 - m_max / n


def stability_sufficient(load: float, m_max: int, n: int) -> bool:
    """Does Theorem 4.1's sufficient condition ρ < 1 − m_max/n hold? [bound: sufficient, every n]

    Source: Wang, Xie & Harchol-Balter, Theorem 4.1, eq. (4). ``False`` does not mean unstable: the condition is
    sufficient only (ρ >= 1 is unstable under any policy).

    Args:
        load: ρ = Σ_i λ_i m_i/(n μ_i) >= 0.
        m_max: the largest server need, in [1, n].
        n: number of servers >= 1.
    """
    return require_nonnegative("load", load) < sufficient_load_limit(m_max, n)


def single_class_load_limit(m: int, n: int) -> float:
    """Stability limit of the single-class system: ρ < m⌊n/m⌋/n (dimensionless). [exact]

    Source: with K = 1 and need m the FCFS system is an M/M/s, s = ⌊n/m⌋ (Wang, Xie & Harchol-Balter §1, §4),
    stable iff λ < sμ, i.e. ρ = λm/(nμ) < m⌊n/m⌋/n. Always >= 1 − m/n (Thm 4.1's limit).

    Args:
        m: the server need, in [1, n].
        n: number of servers >= 1.
    """
    n, m = _servers_and_need(n, m, "m")
    return m * (n // m) / n


def single_class_stable(load: float, m: int, n: int) -> bool:
    """Is the single-class FCFS system with need m on n servers stable at load ρ? [exact]

    Source: as :func:`single_class_load_limit`. Args: load ρ >= 0, m in [1, n], n >= 1.
    """
    return require_nonnegative("load", load) < single_class_load_limit(m, n)


# =====================================================================================================================
# Queueing probability (Thm 4.2) and the drift lemmas


@dataclass(frozen=True)
class QueueingProbabilityBound:
    """Upper bounds on the queueing probability P_Q (probabilities; a value > 1 says nothing).

    Attributes:
        value: Theorem 4.2 eq. (5): (3K√(m_max/n) + m_max/n)/(1 − ρ).
        combined: (13) with Lemma 5.4 per class, m_i not replaced by m_max: [m_max + 3Σ_i √(n m_i)]/(n(1 − ρ))
            (<= value).
        vacuous: value > 1.
        combined_vacuous: combined > 1.
    """

    value: float
    combined: float
    vacuous: bool
    combined_vacuous: bool


def queueing_probability_bound(load: float, needs: Sequence[int] | int, n: int,
                               K: int | None = None) -> QueueingProbabilityBound:
    """Upper bound on the steady-state queueing probability P_Q of FCFS. [bound, every n]

    Source: Wang, Xie & Harchol-Balter, Theorem 4.2, eq. (5):

        P_Q <= P(Σ_i m_i X_i(∞) > n − m_max) <= (1/(1 − ρ))·(3K√(m_max/n) + m_max/n),

    with the erratum of docs/errata.md#zero-queueing-eq-2 — the introduction's eq. (2) prints 3K√(m_max/n + m_max/n), a
    typo; (5) and its proof give the form above. Also returned: the tighter combination of (13) and Lemma 5.4 (eq. (14))
    that keeps each m_i, P_Q <= [m_max + 3Σ_i √(n m_i)]/(n(1 − ρ)). Both hold for every n under ρ < 1 − m_max/n, and
    both are vacuous (> 1) at every size simulated in the paper (§7).

    Args:
        load: ρ in [0, 1 − m_max/n) (Thm 4.2 assumes Thm 4.1's condition).
        needs: the K server needs m_i in [1, n]; or just m_max (an int), with ``K`` given (then every m_i is taken
            as m_max and ``combined`` equals ``value``).
        n: number of servers >= 1.
        K: number of classes; defaults to ``len(needs)`` and must equal it when both are given.
    Raises:
        ValueError: bad input, or ρ >= 1 − m_max/n.
    """
    n, m = _needs_for_bound(needs, n, K)
    rho = require_nonnegative("load", load)
    m_max = max(m)
    if not rho < 1.0 - m_max / n:
        raise ValueError(f"load ρ = {rho!r} >= 1 − m_max/n = {1.0 - m_max / n!r}: Theorem 4.2 assumes Theorem 4.1's "
                         f"stability condition ρ < 1 − m_max/n")
    value = (3 * len(m) * math.sqrt(m_max / n) + m_max / n) / (1.0 - rho)
    combined = (m_max + math.fsum(lemma_5_4_bound(n, mi) for mi in m)) / (n * (1.0 - rho))
    return QueueingProbabilityBound(value=value, combined=combined, vacuous=value > 1.0,
                                    combined_vacuous=combined > 1.0)


def lemma_5_4_bound(n: int, m_i: int) -> float:
    """Bound 3√(n m_i) on E[(nρ_i − m_i X_i(∞))^+], servers. [bound, every n]

    Source: Wang, Xie & Harchol-Balter, Lemma 5.4, eq. (14) (from Lemma 5.2 with B = √(n m_i), γ = μ_i B,
    v_max = m_i, δ_max <= nμ_i). Since nρ_i/m_i = λ_i/μ_i, it says the number X_i of class-i jobs is rarely far
    below its M/M/∞ mean λ_i/μ_i. Holds for any stable FCFS system (independent of λ_i, μ_i).

    Args:
        n: number of servers >= 1.
        m_i: the class's server need, in [1, n].
    """
    n, m_i = _servers_and_need(n, m_i, "m_i")
    return 3.0 * math.sqrt(n * m_i)


def lemma_5_3_bound(n: int, needs: Sequence[int], rates: Sequence[float], load: float,
                    exact_v_max: bool = False) -> float:
    """Bound on the stationary expected total work E[Σ_i m_i X_i(∞)/μ_i], server × time units. [bound, every n]

    Source: Wang, Xie & Harchol-Balter, Lemma 5.3 (the statement only claims finiteness; the bound is the last line
    of its proof, Lemma 5.2 applied to g with B = (n − m_max)/μ_min, δ_max = nρ, γ = n(1 − ρ) − m_max):

        E[Σ_i m_i X_i/μ_i] <= (n − m_max)/μ_min + 2·v_max·nρ/(n(1 − ρ) − m_max),

    v_max = m_max/μ_min as printed (default), or the tighter v_max = max_i m_i/μ_i of the proof's previous line
    (``exact_v_max=True``). μ_min = min_i μ_i (used but not defined in the paper;
    docs/modelling-choices.md#zero-queueing-mu-min).

    Args:
        n: number of servers >= 1.
        needs: the K server needs m_i in [1, n].
        rates: the K service rates μ_i > 0 (durations Exp(μ_i)), per unit time.
        load: ρ in [0, 1 − m_max/n) (Thm 4.1's condition: the drift constant γ must be > 0).
    """
    n, m = _needs_for_bound(needs, n, None)
    mu = _rates(rates, len(m))
    rho = require_nonnegative("load", load)
    m_max, mu_min = max(m), min(mu)
    gap = n * (1.0 - rho) - m_max
    if gap <= 0:
        raise ValueError(f"load ρ = {rho!r} >= 1 − m_max/n = {1.0 - m_max / n!r}: Lemma 5.3's drift bound needs "
                         f"n(1 − ρ) − m_max > 0")
    v_max = max(mi / mui for mi, mui in zip(m, mu)) if exact_v_max else m_max / mu_min
    return (n - m_max) / mu_min + 2.0 * v_max * n * rho / gap


def single_class_queueing_probability(n: int, m: int, load: float) -> float:
    """Exact queueing probability of the single-class FCFS system: Erlang C(⌊n/m⌋, nρ/m). [exact]

    Source: Wang, Xie & Harchol-Balter §1/§4 (K = 1 with need m is an M/M/s, s = ⌊n/m⌋) and the standard Erlang C
    formula: offered load a = λ/μ = nρ/m Erlangs. For m = n/2 this is 2ρ²/(1 + ρ) (an M/M/2).

    Args:
        n: number of servers >= 1.
        m: the server need, in [1, n].
        load: ρ = λm/(nμ) in [0, m⌊n/m⌋/n) (stability, :func:`single_class_load_limit`).
    """
    n, m = _servers_and_need(n, m, "m")
    rho = require_nonnegative("load", load)
    if not single_class_stable(rho, m, n):
        raise ValueError(f"load ρ = {rho!r} >= m⌊n/m⌋/n = {single_class_load_limit(m, n)!r}: the single-class "
                         f"system (M/M/{n // m}) is unstable")
    return erlang_c(n // m, n * rho / m)


# =====================================================================================================================
# Fluid limit (Thm 4.3)


def fluid_rhs(y: Sequence[float] | np.ndarray, rates: Sequence[float], loads: Sequence[float]) -> np.ndarray:
    """Right-hand side of the fluid ODE ẏ_i = 1 − min{μ_i y_i, 1/ρ_i}, dimensionless per unit time. [exact]

    Source: Wang, Xie & Harchol-Balter, eq. (7) (= (15)). y_i approximates X_i(t)/λ_i (time units: jobs per arrival
    rate); the equilibrium is y_i = 1/μ_i.

    Args:
        y: fluid state(s), shape (..., K), y_i >= 0.
        rates: μ_i > 0, per unit time.
        loads: ρ_i > 0, the classes' loads.
    """
    mu = _rates(rates, None)
    rho = _loads(loads, len(mu))
    y = np.asarray(y, dtype=np.float64)
    if y.shape[-1:] != (len(mu),):
        raise ValueError(f"y has shape {y.shape}: the last axis must have K = {len(mu)} entries")
    return 1.0 - np.minimum(mu * y, 1.0 / rho)


def fluid_solution(t: float | Sequence[float] | np.ndarray, y0: Sequence[float], rates: Sequence[float],
                   loads: Sequence[float] | None = None) -> np.ndarray:
    """Solution of the fluid ODE (7): y_i(t) = (y_i(0) − 1/μ_i)e^{−μ_i t} + 1/μ_i. [exact solution of (7)]

    Source: Wang, Xie & Harchol-Balter, eq. (16), valid for 0 <= y_i(0) <= 1/(μ_i ρ_i): then μ_i y_i stays below
    1/ρ_i and the min in (7) is μ_i y_i. Thm 4.3 [asymptotic: n → ∞ on [0, T], constant ρ_i, m_max = o(n),
    y_i(0) < 1/(ρμ_i)] says X_i(t)/λ_i → y_i(t). Empty start: y_i(t) = (1 − e^{−μ_i t})/μ_i; y_i(∞) = 1/μ_i.

    Args:
        t: time(s) >= 0, time units.
        y0: y_i(0) >= 0 (X_i(0)/λ_i, time units).
        rates: μ_i > 0, per unit time.
        loads: ρ_i > 0; when given, y_i(0) <= 1/(μ_i ρ_i) is checked (else (16) is not the solution of (7)).
    Returns:
        y(t), shape (K,) for a scalar t, else (len(t), K).
    """
    mu = _rates(rates, None)
    y0 = np.array([require_nonnegative(f"y0[{i}]", v) for i, v in enumerate(y0)], dtype=np.float64)
    if y0.shape != mu.shape:
        raise ValueError(f"y0 has {y0.size} entries, rates {mu.size}: must be equal (one per class)")
    if loads is not None:
        rho = _loads(loads, len(mu))
        too_big = y0 > 1.0 / (mu * rho)
        if np.any(too_big):
            i = int(np.argmax(too_big))
            raise ValueError(f"y0[{i}] = {y0[i]!r} > 1/(μ_i ρ_i) = {1.0 / (mu[i] * rho[i])!r}: eq. (16) solves (7) "
                             f"only for y_i(0) <= 1/(μ_i ρ_i)")
    times = np.asarray(t, dtype=np.float64)
    if not np.all(np.isfinite(times) & (times >= 0)):
        raise ValueError(f"t = {t!r}: times must be finite and >= 0")
    tt = times[..., None]
    return (y0 - 1.0 / mu) * np.exp(-mu * tt) + 1.0 / mu


# =====================================================================================================================
# Scaling regimes (§1, Fig. 3)


@dataclass(frozen=True)
class RegimeClassification:
    """Where a scaling ρ^(n) = 1 − βn^(−α), m_max^(n) = Θ(n^γ) falls (Wang, Xie & Harchol-Balter §1, Fig. 3).

    Attributes:
        region: 1 (α = 0, γ = 0), 2 (α = 0, γ > 0), 3 (α > 0, γ = 0), 4 (α > 0, γ > 0: the main region).
        diminishing: 2α + γ < 1, the paper's condition for P_Q → 0 [asymptotic: n → ∞].
        bound_exponent: (1 − 2α − γ)/2: Thm 4.2's bound decays like n^(−bound_exponent) when it is > 0 (an upper
            bound on the rate; the actual decay can be faster).
        covered_by_theorem_4_2: Thm 4.2 / Corollary (6) proves P_Q → 0 (same as ``diminishing``).
        tightness: the converse (P_Q does not vanish when 2α + γ >= 1) is proved for K = 1 only.
        note: one sentence on the region.
    """

    region: int
    diminishing: bool
    bound_exponent: float
    covered_by_theorem_4_2: bool
    tightness: str
    note: str


_REGION_NOTES = {
    1: "constant load and needs: P_Q → 0 (classical, as for M/M/n at constant load)",
    2: "constant load, growing needs: P_Q → 0 iff γ < 1 (γ = 1: K = 1 is an M/M/s with constant s)",
    3: "heavy traffic, constant needs: P_Q → 0 iff α < 1/2 (sub-Halfin–Whitt)",
    4: "heavy traffic and growing needs (main region): P_Q → 0 iff 2α + γ < 1",
}
_TIGHTNESS = ("2α + γ >= 1 ⇒ P_Q does not vanish: proved for K = 1 only (an M/M/⌊n/m⌋ at least as heavy as "
              "Halfin–Whitt); for K >= 2 only simulation evidence (Set II)")


def classify_regime(alpha: float, gamma: float) -> RegimeClassification:
    """Region (1–4) of the scaling ρ = 1 − βn^(−α), m_max = Θ(n^γ), and whether P_Q → 0. [asymptotic: n → ∞]

    Source: Wang, Xie & Harchol-Balter §1 (Regions 1–4, Fig. 3), Thm 4.2 and Corollary (6): with
    m_max ~ cn^γ, bound (5) ~ (3K√c/β)·n^(−(1−2α−γ)/2) + (c/β)·n^(α+γ−1), so P_Q → 0 when 2α + γ < 1 (paper
    Fig. 3 and eq. (6)). Tightness is proved only for K = 1.

    Args:
        alpha: α >= 0, the load exponent (α = 0: constant load).
        gamma: γ in [0, 1], the need exponent (γ = 0: constant needs).
    """
    a = require_nonnegative("alpha", alpha)
    g = require_nonnegative("gamma", gamma)
    if g > 1:
        raise ValueError(f"gamma = {gamma!r}: must be in [0, 1] (m_max <= n)")
    region = 1 + (g > 0) + 2 * (a > 0)
    diminishing = 2 * a + g < 1
    return RegimeClassification(region=region, diminishing=diminishing, bound_exponent=(1 - 2 * a - g) / 2,
                                covered_by_theorem_4_2=diminishing, tightness=_TIGHTNESS,
                                note=_REGION_NOTES[region])


@dataclass(frozen=True)
class ScalingRegime:
    """A scaling sequence ρ^(n) = 1 − βn^(−α), m_max^(n) = round(c·n^γ)
    (docs/modelling-choices.md#zero-queueing-scaling-sequence).

    (α, γ) cannot be estimated from one system size; give the whole sequence. Source: Wang, Xie & Harchol-Balter
    §1 (0 < β < 1, α >= 0, 0 <= γ <= 1); Set I of §7 is β = 1/4, α = 0.1, γ = 1/2, c = 1; Set II is β = 1, α = 0.3
    (β = 1 is outside the paper's 0 < β < 1 but harmless: ρ^(n) < 1 for n > 1).

    Attributes:
        beta: β in (0, 1].
        alpha: α >= 0.
        gamma: γ in [0, 1].
        c: c > 0, the need constant.
    """

    beta: float
    alpha: float
    gamma: float
    c: float = 1.0

    def __post_init__(self) -> None:
        if not (is_real(self.beta) and math.isfinite(self.beta) and 0 < self.beta <= 1):
            raise ValueError(f"beta = {self.beta!r}: must be in (0, 1]")
        require_nonnegative("alpha", self.alpha)
        if not (is_real(self.gamma) and math.isfinite(self.gamma) and 0 <= self.gamma <= 1):
            raise ValueError(f"gamma = {self.gamma!r}: must be in [0, 1]")
        require_positive("c", self.c)

    def load(self, n: int) -> float:
        """ρ^(n) = 1 − βn^(−α) (dimensionless)."""
        return 1.0 - self.beta * require_count("n", n) ** -self.alpha

    def max_need(self, n: int) -> int:
        """m_max^(n) = c·n^γ rounded to the nearest integer (halves up), clipped to [1, n]."""
        n = require_count("n", n)
        return min(max(math.floor(self.c * n**self.gamma + 0.5), 1), n)

    def classify(self) -> RegimeClassification:
        """:func:`classify_regime` of (α, γ)."""
        return classify_regime(self.alpha, self.gamma)

    def theorem_4_1_eventually(self) -> bool:
        """Does ρ^(n) < 1 − m_max^(n)/n hold for all large n? [asymptotic: n → ∞]

        βn^(−α) vs c·n^(γ−1): yes iff α + γ < 1, or α + γ = 1 and β > c (implied by 2α + γ < 1).
        """
        total = self.alpha + self.gamma
        if math.isclose(total, 1.0, rel_tol=0.0, abs_tol=1e-12):
            return self.beta > self.c
        return total < 1


# =====================================================================================================================
# Input checks


def _servers_and_need(n: int, m: int, name: str) -> tuple[int, int]:
    n = require_count("n", n)
    m = require_count(name, m)
    if m > n:
        raise ValueError(f"{name} = {m}: must be in [1, n={n}]")
    return n, m


def _needs_for_bound(needs: Sequence[int] | int, n: int, K: int | None) -> tuple[int, list[int]]:
    """(n, the K needs); an int ``needs`` is m_max repeated K times."""
    n = require_count("n", n)
    if isinstance(needs, numbers.Real):
        if K is None:
            raise ValueError("needs is a single m_max: give K, the number of classes")
        m = [_servers_and_need(n, needs, "m_max")[1]] * require_count("K", K)
    else:
        m = [_servers_and_need(n, x, f"needs[{i}]")[1] for i, x in enumerate(needs)]
        if not m:
            raise ValueError("needs = []: at least one class is required")
        if K is not None and require_count("K", K) != len(m):
            raise ValueError(f"K = {K!r}: must equal len(needs) = {len(m)}")
    return n, m


def _rates(rates: Sequence[float], count: int | None) -> np.ndarray:
    mu = np.array([require_positive(f"rates[{i}]", v) for i, v in enumerate(rates)], dtype=np.float64)
    if mu.size == 0 or (count is not None and mu.size != count):
        raise ValueError(f"rates has {mu.size} entries: must have one per class"
                         + (f" ({count})" if count is not None else ""))
    return mu


def _loads(loads: Sequence[float], count: int) -> np.ndarray:
    rho = np.array([require_positive(f"loads[{i}]", v) for i, v in enumerate(loads)], dtype=np.float64)
    if rho.size != count:
        raise ValueError(f"loads has {rho.size} entries: must have one per class ({count})")
    return rho
