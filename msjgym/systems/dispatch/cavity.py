"""Queue at the cavity (N → ∞) of four hyper-scalable load balancers with phase-type job sizes.

Source: T. Hellemans, G. Kielanski & B. Van Houdt, "Performance of Load Balancers with Bounded Maximum Queue Length in
case of Non-Exponential Job Sizes" (cited as "HKV", with equation/theorem numbers). Where HKV print a formula
wrongly, the corrected one is used and explained in docs/errata.md (cited as "docs/errata.md#<anchor>").

Model (HKV §2): N unit-rate FCFS servers (rate 1 − p under resource pooling), Poisson arrivals at rate λN, i.i.d.
PH(α, S) job sizes of mean 1 (time units), λ ∈ (0, 1) jobs per server per unit time. Policies:

* ``push``: the dispatcher probes each server at rate δ and sends each job to a server of least estimated length;
* ``pull``: a server reports its length at a completion with probability δ₁ and at rate δ₀ while idle
  (overall update rate δ = λδ₁ + (1 − λ)δ₀);
* ``water-filling``: batches of M tasks fill K = (δ/λ)M sampled servers, one task at a time, shortest first;
* ``resource-pooling``: random routing, plus a central server at rate pN that removes a job from a longest queue.

The cavity queue of each policy is a finite CTMC with one unknown integer m (the maximum queue length is m + 1; m
when push, pull or water filling sit exactly on a level boundary) and one unknown real (ν for push/pull, c for water
filling, ω for resource pooling), fixed by P[Q = 0] = 1 − λ (resource pooling: (1 − λ)/(1 − p), HKV eq. 32). HKV
show P[Q = 0] strictly monotone in the unknown (via their ref. [5]) and that the extreme values of the unknown at
neighbouring m give the same chain, so the fixed point is unique: the solvers below bracket the root on the
whole range of the unknown (mapped to [0, 1]) and find it with Brent's method, solving each chain by the GTH
(Grassmann–Taksar–Heyman) elimination, which is accurate for any rates. Every result reports its residual, its
balance-equation residual (HKV eq. 2, 26, Thm 5.2's job balance or eq. 33) and whether the solve converged.

All results concern the cavity queue [exact for the cavity]; that it is the exact N → ∞ limit is HKV's conjecture
(proved for exponential sizes under water filling and resource pooling), supported by their §8 simulations.

The closed forms and bounds live in :mod:`msjgym.systems.dispatch.cavity_formulas` and are re-exported here.

Contents:
    * fixed points: :func:`push_cavity`, :func:`pull_cavity` (:func:`pull_cavity_from_rate` from δ),
      :func:`water_filling_cavity`, :func:`pooling_cavity`, and :func:`cavity` by policy name, each returning a
      :class:`CavityFixedPoint`; :func:`stationary_distribution` (GTH) solves the chains.

Units: λ, δ, δ₀, ν, ω are rates per server per unit time; p, δ₁, c are probabilities; queue lengths count jobs;
response times are in units of the mean job size (E[R] = E[Q]/λ, Little's law).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from msjgym.systems.dispatch.params import pull_update_rates, require_load, require_pooled_fraction, require_rate
from msjgym.errors import ScenarioError
from msjgym.systems.dispatch.cavity_formulas import (  # noqa: F401  (re-exported: the closed forms belong to this API)
    SizeLaw, BOUNDARY_TOL, MAX_LEVEL, size_below_timer_probability, timer_phase_distribution, push_m_tilde,
    push_idle_cumulative, push_load_threshold, push_delta_threshold, erlang_m_tilde, deterministic_m_tilde,
    push_max_queue_bounds, push_mean_queue_bounds, push_mean_queue_upper_bound, push_heavy_traffic_slope,
    water_filling_exponential_c, water_filling_c, water_filling_queue_masses, pull_m_tilde, pull_idle_cumulative,
    pull_load_threshold, pull_mean_queue_at_level, pull_mean_queue_bounds, pooling_threshold,
    pooling_idle_probability, pooling_level, pooling_exponential_max_queue_length,
    pooling_deterministic_max_queue_length, pooling_insensitive_response_time, ph_law, pull_rates,
)

__all__ = [
    "POLICIES", "CavityFixedPoint", "stationary_distribution", "push_cavity", "pull_cavity", "pull_cavity_from_rate",
    "water_filling_cavity", "pooling_cavity", "cavity", "SizeLaw", "BOUNDARY_TOL", "MAX_LEVEL",
    "size_below_timer_probability", "timer_phase_distribution", "push_m_tilde", "push_idle_cumulative",
    "push_load_threshold", "push_delta_threshold", "erlang_m_tilde", "deterministic_m_tilde",
    "push_max_queue_bounds", "push_mean_queue_bounds", "push_mean_queue_upper_bound", "push_heavy_traffic_slope",
    "water_filling_exponential_c", "water_filling_c", "water_filling_queue_masses", "pull_m_tilde",
    "pull_idle_cumulative", "pull_load_threshold", "pull_mean_queue_at_level", "pull_mean_queue_bounds",
    "pooling_threshold", "pooling_idle_probability", "pooling_level", "pooling_exponential_max_queue_length",
    "pooling_deterministic_max_queue_length", "pooling_insensitive_response_time",
]

POLICIES = ("push", "pull", "water-filling", "resource-pooling")


# =====================================================================================================================
# Cavity chains


@dataclass(frozen=True)
class CavityFixedPoint:
    """The fixed point of a cavity queue and what it implies.

    Attributes:
        policy: one of :data:`POLICIES`.
        lam: λ, arrivals per server per unit time.
        params: the policy's other parameters (``delta``; ``delta0``, ``delta1``; ``p``).
        m: the integer unknown; the queue length never exceeds ``max_queue_length`` (m + 1, or m on a boundary).
        unknown: name of the real unknown: ``"nu"`` (push, pull; assignment rate to a server at estimate m),
            ``"c"`` (water filling; probability that a sampled server at level <= m ends at m + 1),
            ``"omega"`` (resource pooling; central-server rate at level m + 1). None when p >= λ.
        value: its fixed-point value.
        max_queue_length: the cavity queue's maximum length (jobs).
        queue_length_pmf: P[Q = q], q = 0..max_queue_length (time-stationary, per server).
        mean_queue_length: E[Q], jobs per server.
        mean_response_time: E[R] = E[Q]/λ, time units (mean job size 1).
        m_tilde: the paper's m̃ (push, water filling: eq. 8; pull: eq. 28), None for resource pooling.
        residual: |P[Q = 0] − target| at the solution (target 1 − λ, or (1 − λ)/(1 − p)).
        balance_residual: residual of the policy's rate balance (eq. 2, eq. 26, Thm 5.2's job balance, eq. 33).
        iterations: root-finder iterations. converged: the root finder converged and both residuals are < 1e-9.
    """

    policy: str
    lam: float
    params: dict[str, float]
    m: int
    unknown: str | None
    value: float
    max_queue_length: int
    queue_length_pmf: np.ndarray = field(repr=False)
    mean_queue_length: float
    mean_response_time: float
    m_tilde: float | None
    residual: float
    balance_residual: float
    iterations: int
    converged: bool

    def tail(self, i: int) -> float:
        """P[Q >= i]: the fraction of servers with at least i jobs (the occupancy histogram at N = ∞)."""
        return float(self.queue_length_pmf[max(i, 0):].sum())


class _ChainBuilder:
    """A generator Q(x) = A + x·B over named states, built transition by transition."""

    def __init__(self, states: list[tuple]) -> None:
        self.states = states
        self.index = {state: i for i, state in enumerate(states)}
        n = len(states)
        self.fixed = np.zeros((n, n))
        self.linear = np.zeros((n, n))

    def add(self, src: tuple, dst: tuple, rate: float = 0.0, per_unknown: float = 0.0) -> None:
        """Transition src → dst at rate ``rate + x·per_unknown``; self-loops are dropped."""
        if src == dst:
            return
        i, j = self.index[src], self.index[dst]
        self.fixed[i, j] += rate
        self.linear[i, j] += per_unknown

    def generator(self, x: float) -> np.ndarray:
        q = self.fixed + x * self.linear if x else self.fixed.copy()
        np.fill_diagonal(q, 0.0)
        np.fill_diagonal(q, -q.sum(axis=1))
        return q


def stationary_distribution(generator: np.ndarray) -> np.ndarray:
    """Stationary vector of a CTMC generator with a single closed class (zero on transient and isolated states).

    GTH elimination (Grassmann, Taksar & Heyman 1985) on the closed class: subtraction-free, so accurate for rates
    of any magnitude. O(n³) time.
    """
    rates = np.array(generator, dtype=np.float64)
    np.fill_diagonal(rates, 0.0)
    count, label = connected_components(csr_matrix(rates > 0.0), directed=True, connection="strong")
    src, dst = np.nonzero(rates > 0.0)
    leaves = label[src][label[src] != label[dst]]
    isolated = label[~((rates > 0.0).any(axis=0) | (rates > 0.0).any(axis=1))]   # unreachable, inert states
    closed = np.setdiff1d(np.arange(count), np.concatenate((leaves, isolated)))
    if closed.size != 1:
        raise ValueError(f"stationary_distribution: the chain has {closed.size} closed classes (needs exactly 1)")
    reach = np.flatnonzero(label == closed[0])
    a = rates[np.ix_(reach, reach)]
    n = a.shape[0]
    for k in range(n - 1, 0, -1):
        total = a[k, :k].sum()
        if total <= 0.0:
            raise ArithmeticError("stationary_distribution: GTH pivot is 0")
        a[:k, k] /= total
        a[:k, :k] += np.outer(a[:k, k], a[k, :k])
    pi = np.zeros(n)
    pi[0] = 1.0
    for j in range(1, n):
        pi[j] = pi[:j] @ a[:j, j]
    out = np.zeros(rates.shape[0])
    out[reach] = pi / pi.sum()
    return out


def _estimate_chain(m: int, alpha: np.ndarray, s: np.ndarray, *, delta: float = 0.0, delta0: float = 0.0,
                    delta1: float = 0.0, pull: bool = False) -> _ChainBuilder:
    """Push (HKV §4.1, eq. 3) or pull (§6, with the Q←_{m,m} erratum: docs/errata.md#cavity-pull-block) cavity
    chain; unknown ν.

    States (0, e, −1) and (q, e, j), e ∈ {m, m + 1}, 1 <= q <= e; built from the transition rules, which also covers
    m <= 2 where the printed blocks overlap (docs/modelling-choices.md#cavity-chains-from-rules).
    """
    n = alpha.size
    exits = -s.sum(axis=1)
    states: list[tuple] = [(0, m, -1), (0, m + 1, -1)]
    states += [(q, e, j) for e in (m, m + 1) for q in range(1, e + 1) for j in range(n)]
    chain = _ChainBuilder(states)

    def refill(src: tuple, rate: float, phase: int | None) -> None:
        """Estimate reset to the true length ≤ m: the dispatcher fills the queue to m at once (HKV §4.1)."""
        if m == 0:
            chain.add(src, (0, 0, -1), rate)
        elif phase is None:
            for jj in range(n):
                chain.add(src, (m, m, jj), rate * alpha[jj])
        else:
            chain.add(src, (m, m, phase), rate)

    for e in (m, m + 1):
        empty = (0, e, -1)
        refill(empty, delta0 if pull else delta, None)          # idle update / probe of an empty server
        if e == m:
            for jj in range(n):
                chain.add(empty, (1, m + 1, jj), 0.0, alpha[jj])   # assignment at rate ν
        for q in range(1, e + 1):
            for j in range(n):
                src = (q, e, j)
                for jj in range(n):
                    if jj != j and s[j, jj] > 0.0:
                        chain.add(src, (q, e, jj), s[j, jj])
                keep = (1.0 - delta1) if pull else 1.0
                if q == 1:
                    chain.add(src, (0, e, -1), keep * exits[j])
                else:
                    for jj in range(n):
                        chain.add(src, (q - 1, e, jj), keep * exits[j] * alpha[jj])
                if pull:
                    refill(src, delta1 * exits[j], None)         # completion with update: fresh phase, refill to m
                elif q < m:
                    refill(src, delta, j)                        # probe: refill to m, phase kept
                elif q == m and e == m + 1:
                    chain.add(src, (m, m, j), delta)             # probe lowers the estimate to m
                if e == m:
                    chain.add(src, (q + 1, m + 1, j), 0.0, 1.0)  # assignment at rate ν
    return chain


def _level_chain(m: int, alpha: np.ndarray, s: np.ndarray, *, delta: float = 0.0, lam: float = 0.0,
                 p: float = 0.0, pooling: bool = False) -> _ChainBuilder:
    """Water-filling chain Q^w(m, c) (HKV eq. 19; unknown c) or resource-pooling chain Q^r(m, ω) (eq. 34; unknown
    ω) on {0} ∪ {(q, j): 1 <= q <= m + 1}."""
    n = alpha.size
    exits = -s.sum(axis=1)
    speed = 1.0 - p if pooling else 1.0
    states = [(0, -1)] + [(q, j) for q in range(1, m + 2) for j in range(n)]
    chain = _ChainBuilder(states)

    def enter(src: tuple, level: int, phase: int | None, rate: float, per_unknown: float) -> None:
        if level == 0:
            chain.add(src, (0, -1), rate, per_unknown)
        elif phase is None:
            for jj in range(n):
                chain.add(src, (level, jj), rate * alpha[jj], per_unknown * alpha[jj])
        else:
            chain.add(src, (level, phase), rate, per_unknown)

    for q in range(0, m + 2):
        for j in ([None] if q == 0 else range(n)):
            src = (0, -1) if q == 0 else (q, j)
            if q >= 1:
                for jj in range(n):
                    if jj != j and s[j, jj] > 0.0:
                        chain.add(src, (q, jj), speed * s[j, jj])
                enter(src, q - 1, None, speed * exits[j], 0.0)
            if pooling:
                if q <= m:
                    enter(src, q + 1, j, lam, 0.0)
                else:
                    enter(src, m, j, 0.0, 1.0)                   # central server removes a job at rate ω
            elif q < m:
                enter(src, m, j, delta, -delta)                  # sampled: to m w.p. 1 − c ...
                enter(src, m + 1, j, 0.0, delta)                 # ... or to m + 1 w.p. c
            elif q == m:
                enter(src, m + 1, j, 0.0, delta)
    return chain


def _pmf(chain: _ChainBuilder, x: float) -> np.ndarray:
    """P[Q = q], q = 0..m+1, of the chain at unknown x."""
    pi = stationary_distribution(chain.generator(x))
    levels = np.array([state[0] for state in chain.states])
    return np.bincount(levels, weights=pi, minlength=levels.max() + 1)


@dataclass
class _Root:
    value: float
    iterations: int
    converged: bool


def _solve_unknown(idle: Callable[[float], float], idle_at_infinity: float, target: float) -> _Root:
    """The x >= 0 with idle(x) = target, idle monotone in x, by Brent's method on t = x/(1 + x) ∈ [0, 1]."""
    def gap(t: float) -> float:
        return (idle_at_infinity if t >= 1.0 else idle(t / (1.0 - t))) - target

    at_zero = gap(0.0)
    if abs(at_zero) <= BOUNDARY_TOL:
        return _Root(0.0, 0, True)
    at_one = gap(1.0)
    if at_zero * at_one > 0.0:
        raise ArithmeticError(f"cavity fixed point not bracketed: P[Q = 0] - target is {at_zero:.3g} at 0 and "
                              f"{at_one:.3g} at infinity")
    t, info = optimize.brentq(gap, 0.0, 1.0, xtol=1e-16, rtol=4 * np.finfo(float).eps, maxiter=300,
                              full_output=True, disp=False)
    if t >= 1.0:
        raise ArithmeticError("cavity fixed point at an infinite unknown: the level m is off by one")
    return _Root(t / (1.0 - t), info.iterations, info.converged)


def _level_search(idle_at_zero: Callable[[int], float], guess: int, target: float) -> int:
    """The m >= 0 with idle(m, 0) >= target > idle(m + 1, 0) (idle decreasing in m), starting from ``guess``."""
    m = max(0, guess)
    while m > 0 and idle_at_zero(m) < target - BOUNDARY_TOL:
        m -= 1
    while idle_at_zero(m + 1) >= target - BOUNDARY_TOL:
        if abs(idle_at_zero(m + 1) - target) <= BOUNDARY_TOL:
            return m + 1
        m += 1
        if m > MAX_LEVEL:
            raise ArithmeticError(f"cavity level search: m > {MAX_LEVEL}")
    return m


def _result(policy: str, lam: float, params: dict[str, float], m: int, unknown: str, root: _Root,
            pmf: np.ndarray, m_tilde: float | None, target: float, balance: float) -> CavityFixedPoint:
    """Package a solved chain; level m + 1 is empty exactly when the unknown is 0 (push, pull, water filling)."""
    max_q = m + 1 if (root.value > 0.0 or unknown == "omega") else m
    pmf = np.asarray(pmf[: max_q + 1], dtype=np.float64)
    mean_q = float(np.arange(pmf.size) @ pmf)
    residual = abs(float(pmf[0]) - target)
    return CavityFixedPoint(
        policy=policy, lam=lam, params=params, m=m, unknown=unknown, value=root.value, max_queue_length=max_q,
        queue_length_pmf=pmf, mean_queue_length=mean_q, mean_response_time=mean_q / lam, m_tilde=m_tilde,
        residual=residual, balance_residual=abs(balance), iterations=root.iterations,
        converged=bool(root.converged and residual < 1e-9 and abs(balance) < 1e-9))


def push_cavity(lam: float, delta: float, size: SizeLaw) -> CavityFixedPoint:
    """Fixed point (m, ν) of the push cavity queue (hyper-scalable JSQ with probes), HKV §4.1–4.2. [exact for the
    cavity]

    Chain Q→(m, ν) of eq. (3) (built from the transition rules of §4.1), m = ⌊m̃⌋ (Thm 4.3, eq. 8; checked against
    the chain), ν >= 0 the unique root of π₀(m, ν) = 1 − λ (bisection in HKV; Brent here). ν = 0 when m̃ is an
    integer (then the max queue length is m). Reports the residual of eq. (2),
    νπ^e_m = λ − δΣ_{q<=m}(m − q)π_q (Prop 4.6).

    Just below a threshold λ_{m+1} (eq. 12) ν is large and π₀ depends on ν only through a high power of 1/ν, while
    E[Q] moves like 1/ν: E[Q] reaches Thm 4.9's value at λ_{m+1} with a vertical tangent (e.g. Exp(1), δ = 0.5:
    2e-3 below it at λ = λ_5 − 1e-12). That sensitivity to λ is the model's (HKV §4.5: kinks at integer m̃), not
    the solver's. Cost: O(n³) per chain solve with n = 2(m + 2)n_s states, about 40 solves.

    Args:
        lam: λ in (0, 1). delta: probe rate per server δ > 0. size: mean-1 PH job-size law (:data:`SizeLaw`).
    """
    lam, delta = require_load(lam), require_rate("delta", delta)
    alpha, s = ph_law(size)
    y = size_below_timer_probability((alpha, s), delta)
    mt = push_m_tilde(lam, delta, y)
    return _estimate_fixed_point("push", lam, {"delta": delta}, mt, alpha, s, delta=delta)


def pull_cavity(lam: float, delta0: float, delta1: float, size: SizeLaw) -> CavityFixedPoint:
    """Fixed point (m, ν) of the pull cavity queue (servers report at completions w.p. δ₁, at rate δ₀ while idle),
    HKV §6. [exact for the cavity]

    Chain Q←(m, ν) with the corrected block Q←_{m,m} top-left S + δ₁s*α − νI (erratum,
    docs/errata.md#cavity-pull-block), m = ⌊m̃⌋ from eq. (28), ν from π₀(m, ν) = 1 − λ. Reports the residual of
    eq. (26). The paper's Table 3 uses δ₁ = 0, δ₀ = δ/(1 − λ) (docs/modelling-choices.md#lb-table-3-pull-rates):
    see :func:`pull_cavity_from_rate`.

    Args:
        lam: λ in (0, 1). delta0: idle update rate δ₀ > 0 (or 0 with δ₁ = 1). delta1: update probability at
            completions, [0, 1].
        size: mean-1 PH job-size law.
    """
    lam = require_load(lam)
    delta0, delta1 = pull_rates(delta0, delta1)
    alpha, s = ph_law(size)
    mt = pull_m_tilde(lam, delta0, delta1)
    return _estimate_fixed_point("pull", lam, {"delta0": delta0, "delta1": delta1}, mt, alpha, s,
                                 delta0=delta0, delta1=delta1, pull=True)


def pull_cavity_from_rate(lam: float, delta: float, size: SizeLaw, delta1: float = 0.0) -> CavityFixedPoint:
    """:func:`pull_cavity` at overall update rate δ = λδ₁ + (1 − λ)δ₀ per server (default δ₁ = 0, δ₀ = δ/(1 − λ),
    the paper's Table 3 setting)."""
    delta0, delta1 = pull_update_rates(lam, delta, delta1)
    return pull_cavity(lam, delta0, delta1, size)


def _estimate_fixed_point(policy: str, lam: float, params: dict[str, float], m_tilde: float, alpha: np.ndarray,
                          s: np.ndarray, **rates: Any) -> CavityFixedPoint:
    target = 1.0 - lam
    chains: dict[int, _ChainBuilder] = {}

    def chain(m: int) -> _ChainBuilder:
        if m not in chains:
            chains[m] = _estimate_chain(m, alpha, s, **rates)
        return chains[m]

    def idle(m: int, nu: float) -> float:
        return float(_pmf(chain(m), nu)[0])

    if rates.get("delta1") == 1.0:   # JIQ: every completion reports, m = 0 and π₀(1, 0) = 1 − λ←_1 = 0 (eq. 30)
        m, idle_at_infinity = 0, 0.0
    else:
        m = _level_search(lambda k: idle(k, 0.0), math.floor(max(m_tilde, 0.0) + 1e-12), target)
        idle_at_infinity = idle(m + 1, 0.0)
    root = _solve_unknown(lambda nu: idle(m, nu), idle_at_infinity, target)
    builder = chain(m)
    pi = stationary_distribution(builder.generator(root.value))
    q = np.array([st[0] for st in builder.states])
    e = np.array([st[1] for st in builder.states])
    pmf = np.bincount(q, weights=pi, minlength=m + 2)
    at_m = float(pi[e == m].sum())
    if policy == "push":
        assigned = rates["delta"] * sum((m - k) * pmf[k] for k in range(m + 1))
    else:
        exits = -s.sum(axis=1)
        phase = np.array([st[2] for st in builder.states])
        busy = q >= 1
        completing = np.zeros_like(pi)
        completing[busy] = pi[busy] * exits[phase[busy]]
        assigned = (rates["delta0"] * m * pmf[0]
                    + rates["delta1"] * float(((m - q[busy] + 1) * completing[busy]).sum()))
    balance = root.value * at_m - (lam - assigned)
    return _result(policy, lam, params, m, "nu", root, pmf, m_tilde, target, balance)


def water_filling_cavity(lam: float, delta: float, size: SizeLaw) -> CavityFixedPoint:
    """Fixed point (m, c) of the water-filling cavity queue (batches of M tasks fill K = (δ/λ)M sampled servers,
    M → ∞), HKV §5. [exact for the cavity]

    Chain Q^w(m, c) of eq. (19), m = ⌊m̃⌋ with m̃ of eq. (8) (same as push), c ∈ [0, 1) the root of
    π₀(m, c) = 1 − λ (Thm 5.1). Reports the residual of the job balance λ = δ(Σ_{i<=m}(m − i)π_i + (1 − π_{m+1})c)
    (proof of Thm 5.2). The batch size M does not enter the N → ∞ limit.

    Args:
        lam: λ in (0, 1). delta: probes per server per unit time δ > 0. size: mean-1 PH job-size law.
    """
    lam, delta = require_load(lam), require_rate("delta", delta)
    alpha, s = ph_law(size)
    y = size_below_timer_probability((alpha, s), delta)
    mt = push_m_tilde(lam, delta, y)
    target = 1.0 - lam
    chains: dict[int, _ChainBuilder] = {}

    def chain(m: int) -> _ChainBuilder:
        if m not in chains:
            chains[m] = _level_chain(m, alpha, s, delta=delta)
        return chains[m]

    m = _level_search(lambda k: float(_pmf(chain(k), 0.0)[0]), math.floor(max(mt, 0.0) + 1e-12), target)
    # c ∈ [0, 1] enters _solve_unknown as x = c/(1 − c) ∈ [0, ∞]; c = 1 is the (m + 1, 0) chain
    root = _solve_unknown(lambda x: float(_pmf(chain(m), x / (1.0 + x))[0]), float(_pmf(chain(m), 1.0)[0]),
                          target)
    c = root.value / (1.0 + root.value)
    pmf = _pmf(chain(m), c)
    balance = lam - delta * (sum((m - i) * pmf[i] for i in range(m + 1)) + (1.0 - pmf[m + 1]) * c)
    return _result("water-filling", lam, {"delta": delta}, m, "c", _Root(c, root.iterations, root.converged), pmf,
                   mt, target, balance)


def pooling_cavity(lam: float, p: float, size: SizeLaw) -> CavityFixedPoint:
    """Fixed point (m, ω) of the resource-pooling cavity queue (random routing, servers at rate 1 − p, a central
    server at rate pN serving a longest queue), HKV §7. [exact for the cavity]

    Chain Q^r(m, ω) of eq. (34), m from eq. (37) (:func:`pooling_level`; checked against the chain), ω the root of
    π₀(m, ω) = (1 − λ)/(1 − p) (eq. 32); reports the residual of eq. (33), ω = (p − λπ_{m+1})/π_{m+1}.
    m = 0: the removal at level 1 takes the job in service (HKV §2: a pending job, unless there are none).
    p >= λ: every queue is empty.

    Args:
        lam: λ in (0, 1). p: the central server's share of the capacity, [0, 1). size: mean-1 PH job-size law.
    """
    lam, p = require_load(lam), require_pooled_fraction(p)
    alpha, s = ph_law(size)
    if p >= lam:
        return CavityFixedPoint("resource-pooling", lam, {"p": p}, 0, None, 0.0, 0, np.array([1.0]), 0.0, 0.0,
                                None, 0.0, 0.0, 0, True)
    if p == 0.0:
        raise ValueError("p = 0: no central server; the cavity queue is an unbounded M/PH/1 queue (needs p > 0)")
    target = (1.0 - lam) / (1.0 - p)
    m = pooling_level(lam, p, (alpha, s))
    chain = _level_chain(m, alpha, s, lam=lam, p=p, pooling=True)
    idle_at_infinity = 1.0 if m == 0 else float(_pmf(_level_chain(m - 1, alpha, s, lam=lam, p=p, pooling=True),
                                                     0.0)[0])
    root = _solve_unknown(lambda w: float(_pmf(chain, w)[0]), idle_at_infinity, target)
    pmf = _pmf(chain, root.value)
    top = float(pmf[m + 1])
    balance = root.value * top - (p - lam * top)
    return _result("resource-pooling", lam, {"p": p}, m, "omega", root, pmf, None, target, balance)


def cavity(policy: str, lam: float, size: SizeLaw, **params: float) -> CavityFixedPoint:
    """The cavity fixed point of ``policy`` (one of :data:`POLICIES`) with its parameters by keyword:
    push / water-filling: ``delta``; pull: ``delta`` (and optional ``delta1``, default 0) or ``delta0`` and
    ``delta1``; resource-pooling: ``p``."""
    expected = {"push": ({"delta"},), "water-filling": ({"delta"},), "resource-pooling": ({"p"},),
                "pull": ({"delta"}, {"delta", "delta1"}, {"delta0", "delta1"})}
    if policy not in expected:
        raise ScenarioError(f"policy = {policy!r}: unknown; valid: {', '.join(POLICIES)}")
    if set(params) not in expected[policy]:
        options = " or ".join("(" + ", ".join(sorted(k)) + ")" for k in expected[policy])
        raise ScenarioError(f"policy {policy!r}: parameters {sorted(params)}; expected {options}")
    if policy == "push":
        return push_cavity(lam, params["delta"], size)
    if policy == "water-filling":
        return water_filling_cavity(lam, params["delta"], size)
    if policy == "resource-pooling":
        return pooling_cavity(lam, params["p"], size)
    if "delta0" in params:
        return pull_cavity(lam, params["delta0"], params["delta1"], size)
    return pull_cavity_from_rate(lam, params["delta"], size, params.get("delta1", 0.0))
