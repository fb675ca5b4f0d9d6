"""Closed forms and bounds of the queue at the cavity for push, water filling, pull and resource pooling.

Source: T. Hellemans, G. Kielanski & B. Van Houdt, "Performance of Load Balancers with Bounded Maximum Queue Length in
case of Non-Exponential Job Sizes" (cited as "HKV", with equation/theorem numbers). Where HKV print a formula
wrongly, the corrected one is used and explained in docs/errata.md (cited as "docs/errata.md#<anchor>"). The
models and the numerical fixed points are in :mod:`msjgym.systems.dispatch.cavity`, which re-exports everything public here.

Contents (kind in brackets):
    * :func:`size_below_timer_probability` y = P[Z < X] (eq. 1, 6) and :func:`timer_phase_distribution` α'.
    * push / water filling: :func:`push_m_tilde` (eq. 8), :func:`push_idle_cumulative` (Prop 4.1, eq. 5),
      :func:`push_load_threshold` (eq. 12), :func:`push_delta_threshold` (eq. 13), :func:`erlang_m_tilde` (eq. 10),
      :func:`deterministic_m_tilde` (eq. 11) [exact]; :func:`push_max_queue_bounds` (Thm 4.7, eq. 16, erratum),
      :func:`push_mean_queue_bounds` (Thm 4.9), :func:`push_mean_queue_upper_bound` [bound];
      :func:`push_heavy_traffic_slope` (Cor 4.10, eq. 17) [asymptotic]; :func:`water_filling_c` (Thm 5.1, eq. 20),
      :func:`water_filling_queue_masses` (Thm 5.2, eq. 21–23), :func:`water_filling_exponential_c` [exact].
    * pull: :func:`pull_m_tilde` (eq. 28), :func:`pull_idle_cumulative` (eq. 27), :func:`pull_load_threshold`
      (eq. 30), :func:`pull_mean_queue_at_level` (eq. 31) [exact]; :func:`pull_mean_queue_bounds` (Thm 6.4) [bound].
    * resource pooling: :func:`pooling_threshold` p*(λ) (Prop 7.2), :func:`pooling_idle_probability` (eq. 37),
      :func:`pooling_level` (§7.2), :func:`pooling_exponential_max_queue_length`,
      :func:`pooling_insensitive_response_time` [exact]; :func:`pooling_deterministic_max_queue_length`
      (Prop 7.3) [bound: minimum over all laws].

Units: λ, δ, δ₀ are rates per server per unit time; p, δ₁, c are probabilities; queue lengths count jobs; the job
size has mean 1 (time unit).
"""
from __future__ import annotations

import decimal
import math
from collections.abc import Mapping
from typing import Any, Union

import numpy as np
from scipy import optimize

from msjgym.core.distributions import Deterministic, Distribution
from msjgym.systems.dispatch.distributions import paper_law, ph_arrays
from msjgym.systems.dispatch.params import require_load, require_pooled_fraction, require_probability, require_rate
from msjgym.errors import ScenarioError

SizeLaw = Union[str, Mapping[str, Any], Distribution, tuple]
"""A job-size law: a paper name (``"hyperexp(f=1/2, scv=15)"``, see :mod:`msjgym.systems.dispatch.distributions`), a
mapping, a :class:`~msjgym.core.distributions.Distribution`, or a pair (alpha, S). Mean 1 is required."""

BOUNDARY_TOL = 1e-12
"""|P[Q = 0] − target| below which the fixed point is taken to sit exactly on a level boundary (unknown = 0)."""

MAX_LEVEL = 100_000
"""Largest m searched for (a larger one means λ is within rounding of 1 or the law is extreme)."""


# =====================================================================================================================
# Job sizes and the common quantities y, α'


def ph_law(size: SizeLaw) -> tuple[np.ndarray, np.ndarray]:
    """(α, S) of a mean-1 PH law; rejects non-PH laws and means other than 1."""
    alpha, s = ph_arrays(size)
    mean = float(alpha @ np.linalg.solve(-s, np.ones(alpha.size)))
    if abs(mean - 1.0) > 1e-9:
        raise ScenarioError(f"job-size mean = {mean:.12g}: the paper's model needs mean-1 job sizes "
                            "(unit-rate servers; rescale time)")
    return alpha, s


def size_below_timer_probability(size: SizeLaw, delta: float) -> float:
    """y = P[Z < X], X ~ Exp(δ) independent of the job size Z (HKV eq. 1 and 6). [exact]

    y = α(δI − S)⁻¹s* = E[e^{−δZ}]; for a deterministic size z: e^{−δz}. For mean-1 sizes y ∈ [e^{−δ}, 1).

    Args:
        size: the job-size law (any mean for this function).
        delta: δ > 0, the timer rate per unit time.
    """
    delta = require_rate("delta", delta)
    dist = paper_law(size) if isinstance(size, (str, Mapping)) else size
    if isinstance(dist, Deterministic):
        return math.exp(-delta * dist.value)
    alpha, s = ph_arrays(dist)
    exits = -s.sum(axis=1)
    return float(alpha @ np.linalg.solve(delta * np.eye(alpha.size) - s, exits))


def timer_phase_distribution(size: SizeLaw, delta: float) -> np.ndarray:
    """α' = α(δI − S)⁻¹ / α(δI − S)⁻¹1: the service phase when an Exp(δ) timer expires before the job ends
    (HKV Prop 4.1). [exact]"""
    delta = require_rate("delta", delta)
    alpha, s = ph_arrays(size)
    row = np.linalg.solve((delta * np.eye(alpha.size) - s).T, alpha)
    return row / row.sum()


def _y(y: float) -> float:
    if not (0.0 < y < 1.0):
        raise ValueError(f"y = {y!r}: must be in (0, 1) (y = P[Z < X] of a positive job size)")
    return float(y)


# =====================================================================================================================
# Push (HKV §4) — also water filling (§5: same m, same bounds)


def push_m_tilde(lam: float, delta: float, y: float) -> float:
    """m̃ of HKV Theorem 4.3, eq. (8): the maximum queue length of the push (and water-filling) cavity queue is ⌈m̃⌉.
    [exact]

    m̃ = log(1/y + (λ/(δ(1 − λ)) − 1)(1 − y)/y) / log(1/y). Depends on the job-size law only through y (any law,
    HKV Remark after Thm 4.3). Exponential sizes: −log(1 − λ)/log(1 + δ). m̃ <= 1 iff λ/(1 − λ) <= δ (vanishing wait).

    Args:
        lam: λ in (0, 1). delta: probe rate δ > 0. y: P[Z < X] in (0, 1) (:func:`size_below_timer_probability`).
    """
    lam, delta, y = require_load(lam), require_rate("delta", delta), _y(y)
    return math.log(1.0 / y + (lam / (delta * (1.0 - lam)) - 1.0) * (1.0 - y) / y) / math.log(1.0 / y)


def push_idle_cumulative(i: int, m: int, delta: float, size: SizeLaw) -> float:
    """Σ_{q<i} π_q of the push chain at ν = 0 with level m (HKV Prop 4.1, eq. 5), i = 1..m. [exact]

    = (y^{m−i}/δ) / (1/δ + y^{m−1} + (1 − y^{m−1})α'(−S)⁻¹1). (i = 1: the idle probability π₀(m).)
    """
    if not (isinstance(m, (int, np.integer)) and m >= 1 and isinstance(i, (int, np.integer)) and 1 <= i <= m):
        raise ValueError(f"(i, m) = ({i!r}, {m!r}): need integers 1 <= i <= m")
    alpha, s = ph_law(size)
    y = size_below_timer_probability((alpha, s), delta)
    residual_mean = float(timer_phase_distribution((alpha, s), delta) @ np.linalg.solve(-s, np.ones(alpha.size)))
    return (y ** (m - i) / delta) / (1.0 / delta + y ** (m - 1) + (1.0 - y ** (m - 1)) * residual_mean)


def push_load_threshold(m: int, delta: float, y: float) -> float:
    """λ→_m of HKV Corollary 4.5, eq. (12): the maximum queue length is m for λ ∈ (λ_{m−1}, λ_m]. [exact]

    λ_m = δy(1 − y^m) / (δy(1 − y^m) + y^m(1 − y)) = 1 − π₀(m) (ν = 0); λ_0 = 0. Exponential: 1 − (1 + δ)^{−m}.
    """
    if not (isinstance(m, (int, np.integer)) and m >= 0):
        raise ValueError(f"m = {m!r}: must be an integer >= 0")
    delta, y = require_rate("delta", delta), _y(y)
    a = delta * y * (1.0 - y**m)
    return a / (a + y**m * (1.0 - y))


def push_delta_threshold(m: int, lam: float, y: float) -> float:
    """δ→_m of HKV Corollary 4.5, eq. (13): max queue m for δ ∈ [δ_m, δ_{m−1}) at fixed λ. [exact]

    δ_m = y^{m−1}(1 − y)/(1 − y^m) · λ/(1 − λ). Implicit in δ when y depends on δ (y must be evaluated at δ_m);
    exponential sizes: (1 − λ)^{−1/m} − 1.
    """
    if not (isinstance(m, (int, np.integer)) and m >= 1):
        raise ValueError(f"m = {m!r}: must be an integer >= 1")
    lam, y = require_load(lam), _y(y)
    return y ** (m - 1) * (1.0 - y) / (1.0 - y**m) * lam / (1.0 - lam)


def erlang_m_tilde(lam: float, delta: float, k: int) -> float:
    """m̃ for Erlang-k job sizes of mean 1, HKV Example 4.4, eq. (10). [exact]

    m_Erl(k) = 1 − log(1 + (1/δ)(λ/(1 − λ) − δ)(1 − (k/(k + δ))^k)) / (k log(k/(k + δ))). Smallest m̃ over all
    order-k PH laws (Prop 4.8), decreasing in k.
    """
    lam, delta = require_load(lam), require_rate("delta", delta)
    if not (isinstance(k, (int, np.integer)) and k >= 1):
        raise ValueError(f"k = {k!r}: must be an integer >= 1")
    y = (k / (k + delta)) ** k
    return 1.0 - math.log(1.0 + (lam / (1.0 - lam) - delta) * (1.0 - y) / delta) / (k * math.log(k / (k + delta)))


def deterministic_m_tilde(lam: float, delta: float) -> float:
    """m̃ for deterministic unit sizes = lim_{k→∞} m_Erl(k), HKV eq. (11). [exact; the minimum over all laws]

    (1/δ) log(1 + (λ/δ)(e^δ − 1)/(1 − λ)).
    """
    lam, delta = require_load(lam), require_rate("delta", delta)
    return math.log(1.0 + lam / delta / (1.0 - lam) * math.expm1(delta)) / delta


def push_max_queue_bounds(lam: float, delta: float) -> tuple[int, int]:
    """Distribution-free bounds on the push/water-filling maximum queue length ⌈m̃⌉, HKV Theorem 4.7, eq. (16).
    [bound; both tight]

    ⌈(1/δ) log(1 + (1/δ)(λ/(1 − λ))(e^δ − 1))⌉ <= ⌈m̃⌉ <= ⌈λ/((1 − λ)δ)⌉. Erratum (docs/errata.md#cavity-thm-4-7):
    Thm 4.7 prints the upper bound with a floor; the ceiling (as in HKV §3) is correct — Z(ε) with small ε exceeds
    the floor. The lower bound is attained by deterministic sizes, the upper one approached by Z(ε), ε → 0.
    """
    lam, delta = require_load(lam), require_rate("delta", delta)
    return math.ceil(deterministic_m_tilde(lam, delta)), math.ceil(lam / ((1.0 - lam) * delta))


def push_mean_queue_bounds(lam: float, delta: float, y: float) -> tuple[float, float]:
    """Bounds on the mean cavity queue length E[Q] of push (and water filling), HKV Theorem 4.9. [bound]

    ⌊m̃⌋ − λ_{⌊m̃⌋}/δ <= E[Q] <= ⌈m̃⌉ − λ_{⌈m̃⌉}/δ, λ_m from eq. (12) (λ_0 = 0); equalities at λ = λ_m. Erratum
    (docs/errata.md#cavity-thm-4-9): HKV §3 prints ceilings on both sides; the lower side has a floor (Thm 4.9 and
    its proof). Divide by λ for E[R].
    """
    mt = max(push_m_tilde(lam, delta, y), 0.0)
    lo, hi = math.floor(mt), math.ceil(mt)
    return lo - push_load_threshold(lo, delta, y) / delta, hi - push_load_threshold(hi, delta, y) / delta


def push_mean_queue_upper_bound(lam: float, delta: float) -> float:
    """Distribution-free upper bound on the push/water-filling E[Q], HKV §4.3 observation (4). [bound]

    δu²/(1 + δu) with u = ⌈λ/((1 − λ)δ)⌉ (the y → 1 limit of Thm 4.9's upper bound; the ceiling is needed:
    docs/errata.md#cavity-observation-4).
    """
    lam, delta = require_load(lam), require_rate("delta", delta)
    u = math.ceil(lam / ((1.0 - lam) * delta))
    return delta * u * u / (1.0 + delta * u)


def push_heavy_traffic_slope(y: float) -> float:
    """lim_{λ→1} E[R]/log(1/(1 − λ)) = lim m̃/log(1/(1 − λ)) = 1/log(1/y) for push and water filling,
    HKV Corollary 4.10, eq. (17) (the corollary says "pull": a typo, docs/errata.md#cavity-cor-4-10).
    [asymptotic: λ → 1]"""
    return 1.0 / math.log(1.0 / _y(y))


# =====================================================================================================================
# Water filling (HKV §5) closed forms


def water_filling_exponential_c(lam: float, delta: float) -> float:
    """c of the water-filling fixed point for Exp(1) sizes, HKV §5 Remark ([27] Thm 3). [exact]

    c = 1/(δ(1 − λ)(1 + δ)^m) − 1/δ, m = ⌊−log(1 − λ)/log(1 + δ)⌋.
    """
    lam, delta = require_load(lam), require_rate("delta", delta)
    m = math.floor(-math.log1p(-lam) / math.log1p(delta))
    return 1.0 / (delta * (1.0 - lam) * (1.0 + delta) ** m) - 1.0 / delta


def water_filling_c(lam: float, delta: float, size: SizeLaw) -> float:
    """c of the water-filling fixed point from HKV Theorem 5.1, eq. (20), by 1-D root finding. [exact]

    1 − λ = (y^{m−1}/δ) / (1/δ + κ(−K)⁻¹1), κ = (1 − c, c) ⊗ (y^{m−1}α + (1 − y^{m−1})α'),
    K = [[S − δcI, δcI], [s*α, S]] (the paper prints μ*α for s*α, docs/errata.md#cavity-thm-5-1), m = ⌊m̃⌋ (eq. 8).
    The right side is decreasing in c; c = 0 on a level boundary. Requires m >= 1.
    """
    lam, delta = require_load(lam), require_rate("delta", delta)
    alpha, s = ph_law(size)
    y = size_below_timer_probability((alpha, s), delta)
    m = math.floor(push_m_tilde(lam, delta, y) + 1e-12)
    if m < 1:
        raise ValueError(f"lam = {lam!r}, delta = {delta!r}: m = {m} < 1; eq. (20) needs m >= 1 "
                         "(use water_filling_cavity)")
    n = alpha.size
    ap = timer_phase_distribution((alpha, s), delta)
    entry = y ** (m - 1) * alpha + (1.0 - y ** (m - 1)) * ap
    exits = -s.sum(axis=1)
    eye = np.eye(n)

    def gap(c: float) -> float:
        k = np.block([[s - delta * c * eye, delta * c * eye], [np.outer(exits, alpha), s]])
        kappa = np.concatenate(((1.0 - c) * entry, c * entry))
        sojourn = float(kappa @ np.linalg.solve(-k, np.ones(2 * n)))
        return (y ** (m - 1) / delta) / (1.0 / delta + sojourn) - (1.0 - lam)

    if gap(0.0) <= BOUNDARY_TOL:
        return 0.0
    return float(optimize.brentq(gap, 0.0, 1.0, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200))


def water_filling_queue_masses(lam: float, delta: float, c: float, m: int, y: float) -> np.ndarray:
    """P[Q = q], q = 0..m+1, of the water-filling fixed point (m, c), HKV Theorem 5.2, eq. (21)–(23). [exact]

    π₀ = 1 − λ; π_q1 = (1 − λ)(1/y − 1)/y^{q−1} (q = 1..m−1, eq. 21);
    π_{m+1}1 = 1 − (λ/δ − Σ_{q<m}(m − q)π_q1)/c (eq. 22; π_{m+1} = 0 if c = 0);
    π_m1 = 1 − (1 − λ)y^{1−m} − π_{m+1}1 (eq. 23).
    """
    lam, y = require_load(lam), _y(y)
    out = np.zeros(m + 2)
    out[0] = 1.0 - lam
    for q in range(1, m):
        out[q] = (1.0 - lam) * (1.0 / y - 1.0) / y ** (q - 1)
    if c > 0.0:
        out[m + 1] = 1.0 - (lam / delta - sum((m - q) * out[q] for q in range(m))) / c
    out[m] = 1.0 - (1.0 - lam) * y ** (1 - m) - out[m + 1]
    return out


# =====================================================================================================================
# Pull (HKV §6) closed forms; all insensitive to the job-size law


def pull_rates(delta0: float, delta1: float) -> tuple[float, float]:
    """δ₁ in [0, 1]; δ₀ > 0, or δ₀ = 0 with δ₁ = 1 (JIQ: every completion reports, HKV §6)."""
    delta1 = require_probability("delta1", delta1)
    if delta1 == 1.0 and delta0 == 0.0:
        return 0.0, 1.0
    try:
        return require_rate("delta0", delta0), delta1
    except ScenarioError as error:
        raise ScenarioError(f"{error} (delta0 = 0 only with delta1 = 1)") from None


def pull_m_tilde(lam: float, delta0: float, delta1: float) -> float:
    """m̃ of HKV Theorem 6.2, eq. (28): the pull cavity queue's maximum length is ⌈m̃⌉. [exact; insensitive]

    m̃ = log(1 − λδ₁/δ)/log(1 − δ₁), δ = λδ₁ + (1 − λ)δ₀; δ₁ → 0: m̃ = λ/δ = λ/((1 − λ)δ₀) (HKV §6.1).
    Equivalently the real m solving λ = 1 − δ₁/(δ₀/(1 − δ₁)^m + δ₁ − δ₀) (eq. 29).

    Args:
        lam: λ in (0, 1). delta0: idle update rate δ₀ > 0. delta1: completion update probability δ₁ in [0, 1]
            (δ₁ = 1, JIQ: δ₀ may be 0 and m̃ = 0).
    """
    lam = require_load(lam)
    delta0, delta1 = pull_rates(delta0, delta1)
    delta = lam * delta1 + (1.0 - lam) * delta0
    if delta1 == 0.0:
        return lam / delta
    if delta1 == 1.0:       # every completion reports: λ_m = 1 for all m >= 1 (eq. 30), so the max length is 1
        return 0.0
    return math.log1p(-lam * delta1 / delta) / math.log1p(-delta1)


def pull_idle_cumulative(i: int, m: int, delta0: float, delta1: float) -> float:
    """Σ_{q<i} π_q of the pull chain at ν = 0 with level m, HKV Proposition 6.1, eq. (27), i = 1..m+1. [exact;
    insensitive]

    = [δ₀(1 − δ₁)^{m−i+1} + (1 − δ₁)^m(δ₁ − δ₀)] / [δ₀ + (1 − δ₁)^m(δ₁ − δ₀)];
    δ₁ = 0: (i − 1 + 1/δ₀)/(m + 1/δ₀).
    """
    delta0, delta1 = pull_rates(delta0, delta1)
    if not (isinstance(m, (int, np.integer)) and m >= 0 and isinstance(i, (int, np.integer)) and 1 <= i <= m + 1):
        raise ValueError(f"(i, m) = ({i!r}, {m!r}): need integers 1 <= i <= m + 1")
    if delta1 == 0.0:
        return (i - 1 + 1.0 / delta0) / (m + 1.0 / delta0)
    b = 1.0 - delta1
    return (delta0 * b ** (m - i + 1) + b**m * (delta1 - delta0)) / (delta0 + b**m * (delta1 - delta0))


def pull_load_threshold(m: int, delta0: float, delta1: float) -> float:
    """λ←_m of HKV Corollary 6.3, eq. (30): the pull max queue length is m for λ ∈ (λ_{m−1}, λ_m] at fixed δ₀, δ₁.
    [exact; insensitive]

    λ_m = (δ₀ − δ₀(1 − δ₁)^m) / (δ₀ − δ₀(1 − δ₁)^m + δ₁(1 − δ₁)^m); δ₁ = 0: 1 − 1/(δ₀m + 1).
    """
    delta0, delta1 = pull_rates(delta0, delta1)
    if not (isinstance(m, (int, np.integer)) and m >= 0):
        raise ValueError(f"m = {m!r}: must be an integer >= 0")
    if delta1 == 0.0:
        return 1.0 - 1.0 / (delta0 * m + 1.0)
    b = (1.0 - delta1) ** m
    return (delta0 - delta0 * b) / (delta0 - delta0 * b + delta1 * b)


def pull_mean_queue_at_level(m: int, delta0: float, delta1: float) -> float:
    """q←(m) of HKV Theorem 6.4, eq. (31): E[Q] of the pull chain at ν = 0 with level m. [exact; insensitive]

    q←(m) = [δ₀(m + 1) − δ₀(1 − (1 − δ₁)^{m+1})/δ₁] / [δ₀ + (1 − δ₁)^m(δ₁ − δ₀)];
    δ₁ = 0: m(m + 1)δ₀/(2(δ₀m + 1)).
    """
    delta0, delta1 = pull_rates(delta0, delta1)
    if not (isinstance(m, (int, np.integer)) and m >= 0):
        raise ValueError(f"m = {m!r}: must be an integer >= 0")
    if delta1 == 0.0:
        return m * (m + 1) * delta0 / (2.0 * (delta0 * m + 1.0))
    b = 1.0 - delta1
    return (delta0 * (m + 1) + delta0 * math.expm1((m + 1) * math.log1p(-delta1)) / delta1) / (
        delta0 + b**m * (delta1 - delta0))


def pull_mean_queue_bounds(lam: float, delta0: float, delta1: float) -> tuple[float, float]:
    """q←(⌊m̃⌋) <= E[Q] <= q←(⌈m̃⌉) for the pull cavity queue, HKV Theorem 6.4. [bound; exact at integer m̃]"""
    mt = max(pull_m_tilde(lam, delta0, delta1), 0.0)
    return (pull_mean_queue_at_level(math.floor(mt), delta0, delta1),
            pull_mean_queue_at_level(math.ceil(mt), delta0, delta1))


# =====================================================================================================================
# Resource pooling (HKV §7) closed forms


def pooling_threshold(lam: float) -> float:
    """p*(λ) = ½(1 + λ − √(1 + 2λ − 3λ²)), HKV Proposition 7.2. [exact]

    For p* <= p < λ the resource-pooling cavity queue has maximum length 1 for every job-size law (insensitive);
    for p < p* its maximum length is unbounded over laws (Z(ε), ε → 0). p* solves 1/(1 + λ/(1 − p)) = (1 − λ)/(1 − p).
    (The proof of Prop 7.2 states the inequality reversed; the statement is right: docs/errata.md#cavity-prop-7-2.)
    """
    lam = require_load(lam)
    return 0.5 * (1.0 + lam - math.sqrt((1.0 - lam) * (1.0 + 3.0 * lam)))


def pooling_idle_probability(n: int, lam: float, p: float, size: SizeLaw) -> float:
    """π₀(n, ∞): idle probability of the M/PH/1/n queue with arrival rate λ and service PH(α, (1 − p)S),
    HKV eq. (37) (n = 0: 1). [exact]

    π₀ = (α[Σ_{i<n} R^i + λR^{n−1}(−(1 − p)S)⁻¹]1)⁻¹, R = λ(λI − (1 − p)S − λ1α)⁻¹.
    """
    lam, p = require_load(lam), require_pooled_fraction(p)
    if not (isinstance(n, (int, np.integer)) and n >= 0):
        raise ValueError(f"n = {n!r}: must be an integer >= 0")
    if n == 0:
        return 1.0
    alpha, s = ph_law(size)
    return 1.0 / _mph1n_inverse_idle(n, lam, p, alpha, s)[-1]


def _mph1n_inverse_idle(n_max: int, lam: float, p: float, alpha: np.ndarray, s: np.ndarray) -> list[float]:
    """[1/π₀(n, ∞) for n = 1..n_max] by eq. (37), sharing the powers αR^i."""
    k = alpha.size
    ones = np.ones(k)
    svc = (1.0 - p) * s
    r = lam * np.linalg.inv(lam * np.eye(k) - svc - lam * np.outer(ones, alpha))
    tail = lam * np.linalg.solve(-svc, ones)
    out, row, partial = [], alpha.copy(), 0.0
    for _ in range(n_max):                       # row = αR^{n−1}, partial = α[Σ_{i<n} R^i]1
        partial += float(row.sum())
        out.append(partial + float(row @ tail))
        row = row @ r
    return out


def pooling_level(lam: float, p: float, size: SizeLaw) -> int:
    """m of the resource-pooling fixed point: the largest m with π₀(m, ∞) > (1 − λ)/(1 − p) (HKV §7.2, eq. 37);
    the maximum queue length is m + 1 (0 if p >= λ). [exact]"""
    lam, p = require_load(lam), require_pooled_fraction(p)
    if p >= lam:
        return 0
    alpha, s = ph_law(size)
    target = (1.0 - lam) / (1.0 - p)
    n_max = 64
    while True:
        inv = _mph1n_inverse_idle(n_max, lam, p, alpha, s)
        for n, value in enumerate(inv, start=1):
            if 1.0 / value <= target + BOUNDARY_TOL:     # on the boundary: (n − 1, ω = 0) ≡ (n, ω = ∞)
                return n - 1
        if n_max >= MAX_LEVEL:
            raise ValueError(f"pooling_level(lam={lam!r}, p={p!r}): m > {MAX_LEVEL}; λ too close to 1")
        n_max *= 4


def pooling_exponential_max_queue_length(lam: float, p: float) -> int:
    """Maximum cavity queue length under resource pooling for Exp(1) sizes, HKV §7.2 and [22]. [exact]

    ⌈x⌉ − 1 with x = log(p/(1 − λ))/log(λ/(1 − p)) the real-valued capacity solving π₀(x, ∞) = (1 − λ)/(1 − p)
    (the paper writes "m + 1 = x"; erratum docs/errata.md#cavity-pooling-exponential-max: the integer max length is
    ⌈x⌉ − 1, also at integer x, where ω = 0). ρ = λ/(1 − p) = 1: x = (1 − p)/(1 − λ). 0 if p >= λ.
    """
    lam, p = require_load(lam), require_pooled_fraction(p)
    if p >= lam:
        return 0
    if p == 0.0:
        raise ValueError("p = 0: no central server; the cavity queue is an M/M/1 queue with unbounded length")
    log_rho = math.log(lam / (1.0 - p))
    x = (1.0 - p) / (1.0 - lam) if abs(log_rho) < 1e-12 else math.log(p / (1.0 - lam)) / log_rho   # ρ = 1: limit
    return max(1, math.ceil(x - 1e-9) - 1)


def pooling_deterministic_max_queue_length(lam: float, p: float) -> int:
    """Maximum cavity queue length under resource pooling for deterministic unit sizes, HKV Proposition 7.3.
    [bound: the minimum over all job-size laws]

    The smallest n >= 1 with 1/(1 + ρ Σ_{k<n} ((−1)^k/k!)(n − 1 − k)^k e^{(n−1−k)ρ} ρ^k) <= (1 − λ)/(1 − p),
    ρ = λ/(1 − p) (the M/D/1/n idle probability, [4]; 0⁰ = 1; HKV print "<", equality is the boundary case m + 1).
    The alternating sum cancels catastrophically in floating point beyond n ≈ 30, so it is summed in decimal
    arithmetic with 40 + n(1 + ρ) significant digits.
    """
    lam, p = require_load(lam), require_pooled_fraction(p)
    if p >= lam:
        return 0
    target = (1.0 - lam) / (1.0 - p)
    for n in range(1, 2001):
        if _md1n_idle_probability(n, lam / (1.0 - p)) <= target * (1.0 + 1e-12):
            return n
    raise ValueError(f"pooling_deterministic_max_queue_length(lam={lam!r}, p={p!r}): no n <= 2000")


def _md1n_idle_probability(n: int, rho: float) -> float:
    """Idle probability of the M/D/1/n queue at load ρ (HKV Prop 7.3, their ref. [4]), in exact-enough decimals."""
    with decimal.localcontext() as ctx:
        ctx.prec = 40 + int(n * (1.0 + rho))        # the terms grow like e^{n(1 + ρ)}
        r = decimal.Decimal(rho)
        total = decimal.Decimal(0)
        term_factorial = decimal.Decimal(1)
        for k in range(n):
            if k:
                term_factorial *= k
            j = n - 1 - k
            term = (decimal.Decimal(j) ** k if (j or k) else decimal.Decimal(1)) * (j * r).exp() * r**k
            total += -term / term_factorial if k % 2 else term / term_factorial
        return float(1 / (1 + r * total))


def pooling_insensitive_response_time(lam: float, p: float) -> float:
    """E[R] under resource pooling when p*(λ) <= p < λ (max queue length 1 for every law), HKV Prop 7.2: π₀ =
    (1 − λ)/(1 − p), π₁ = (λ − p)/(1 − p), E[R] = π₁/λ = (λ − p)/(λ(1 − p)) (0 if p >= λ). [exact]"""
    lam, p = require_load(lam), require_pooled_fraction(p)
    if p >= lam:
        return 0.0
    if p < pooling_threshold(lam):
        raise ValueError(f"p = {p!r}: below p*(lam) = {pooling_threshold(lam):.6g}; the response time depends on "
                         "the job-size law (use pooling_cavity)")
    return (lam - p) / (lam * (1.0 - p))
