"""Work-conserving finite-skip (WCFS) bounds: Cor. 3.8, its constants and the comparison systems.

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis": Corollary 3.8
and the ServerFilling instantiations of §7.2 / App. B (errata: docs/errata.md). Sizes are in system-capacity × time:
a job of need v and duration X has size S = vX/k on k servers, and ρ = λE[S].

    E[S] − w_nonfull <= E[T] − λE[S²]/(2(1 − ρ)) <= w_nonbusy + E[S]/r_min          [bound, every ρ < 1]

with, for ServerFilling in the exponential setting, front size n <= k, w_nonfull = w_nonbusy <= (k − 1)·rem_max and
r_min >= 1/k; in the divisible setting, n = c(k, supp V) = Σ_v (k/v − 1) + 1 (corrected parenthesisation:
docs/errata.md#finite-skip-c-k-supp-v), w <= (c − 1)·rem_max and r_min >= 1/Σ_v (k/v). rem_max is the largest expected
remaining size of a job given what a size-oblivious scheduler can see (its need and its age): for class v, (v/k)·sup_a
E[X − a | X > a] (:func:`mean_residual_sup`). ServerFilling on a multiserver-job model, with generic and exact
constants, is :mod:`msjgym.systems.msj.theory.server_filling` (it uses :func:`mean_residual_sup`,
:func:`unbounded_knapsack`, :class:`WCFSConstants` and :func:`wcfs_band_of` from here); here, every finite-skip
system of the paper (:mod:`msjgym.systems.finite_skip.model`) with generic and exact constants
(docs/modelling-choices.md#finite-skip-constants), the resource-pooled M/G/1, Zhang–Zwart's LPS approximation and the
heterogeneous M/M/k chain.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product
from typing import Any

from msjgym.core.distributions import (Deterministic, Distribution, Erlang, Exponential, HyperExponential,
                                       Uniform)

# What this module reads of a finite-skip system (passed in by the system, so theory imports none): the model's
# ``kind`` (one of these), and a policy's ``name`` (the paper's policies it treats apart) and ``wcfs``.
HETEROGENEOUS, LPS, THRESHOLD, MSJ = "heterogeneous", "lps", "threshold", "msj"  # the values of ``model.kind``
FSF, FSF_MINMIG, SF_EXP, SF_DIV = "fsf", "fsf-minmig", "server-filling", "server-filling-divisible"


def mean_residual_sup(service: Distribution) -> float | None:
    """sup over ages a of E[X − a | X > a] (time units), or None when msjgym does not know it (or it is infinite).

    Exponential: the mean. NBUE laws (Erlang, deterministic, uniform): the mean, at age 0. Hyperexponential: the
    mean of its slowest phase, approached as the age grows (docs/modelling-choices.md#finite-skip-rem-max).
    """
    if isinstance(service, (Exponential, Erlang, Deterministic, Uniform)):
        return service.mean
    if isinstance(service, HyperExponential):
        return 1.0 / min(service.rates)
    return None


# =====================================================================================================================
# Every finite-skip system of the paper (msjgym.systems.finite_skip.model): constants from the system's definition.


@dataclass(frozen=True)
class WCFSConstants:
    """The constants of Defs. 3.1, 3.2 and 3.6 used in Cor. 3.8 (sizes in capacity × time).

    Attributes:
        label: ``generic`` (the paper's (n − 1)·rem_max and its per-model r_min) or ``exact`` (computed from the
            system's definition, docs/modelling-choices.md#finite-skip-constants: integer programs over non-full /
            non-busy front configurations, r_min enumerated over reachable front configurations).
        front: n, the largest front size. rem_max: the largest expected remaining size over observable job states.
        w_nonfull, w_nonbusy: suprema of the expected work over non-full / non-busy states. r_min: inf of B/N_F.
    """

    label: str
    front: int
    rem_max: float
    w_nonfull: float
    w_nonbusy: float
    r_min: float


@dataclass(frozen=True)
class WCFSBand:
    """Cor. 3.8 and its components (Thm 3.3, Thm 3.7, work bound) for one model and one set of constants.

    All in time units except ``work_*`` (capacity × time). ``response_lower`` is clamped to E[S] (E[T] >= E[S]) and
    ``queueing_lower`` to 0 (docs/modelling-choices.md#finite-skip-clamps). ``mg1`` is the resource-pooled
    M/G/1/FCFS E[T] = λE[S²]/(2(1−ρ)) + E[S].
    """

    constants: WCFSConstants
    response_lower: float
    response_upper: float
    queueing_lower: float
    queueing_upper: float
    front_lower: float
    front_upper: float
    work_lower: float
    work_upper: float
    mg1: float


def class_rem_max(model) -> list[float | None]:
    """Per class, sup over ages of the expected remaining size (capacity × time); None if unknown or infinite.

    The scheduler sees a job's class parameter (threshold / need) and its age, not its size
    (docs/modelling-choices.md#finite-skip-rem-max).
    """
    scales = model.size_scales
    return [None if (r := mean_residual_sup(d)) is None else float(s * r) for s, d in zip(scales, model.laws)]


def unbounded_knapsack(weights: list[int], values: list[float], capacity: int) -> float:
    """max Σ n_c·values[c] subject to Σ n_c·weights[c] <= capacity, integers n_c >= 0 (unbounded knapsack)."""
    best = [0.0] * (capacity + 1)
    for cap in range(1, capacity + 1):
        for w, v in zip(weights, values):
            if w <= cap:
                best[cap] = max(best[cap], best[cap - w] + v)
    return best[capacity]


def _generic_front(model, policy: Any) -> int:
    k = model.servers
    if policy.name == SF_DIV:
        return sum(k // v - 1 for v in set(model.params)) + 1  # c(k, supp V), docs/errata.md#finite-skip-c-k-supp-v
    return k


def _generic_r_min(model, policy: Any) -> float:
    """The paper's per-model r_min: het M/G/k min_i v_i (docs/errata.md#finite-skip-het-r-min: the paper writes v_k,
    the fastest), else 1/k, and
    1/Σ_v (k/v) for ServerFilling in the divisible setting."""
    k = model.servers
    if model.kind == HETEROGENEOUS:
        return min(model.speeds)
    if policy.name == SF_DIV:
        return 1.0 / sum(k // v for v in set(model.params))
    return 1.0 / k


def wcfs_constants(model, policy: Any, exact: bool) -> WCFSConstants | None:
    """The constants of Cor. 3.8 for a WCFS policy on a finite-skip model; None if rem_max is unknown or infinite.

    [bound inputs] Grosof, Harchol-Balter & Scheller-Wolf, Defs. 3.1, 3.2, 3.6; §4.4 (het, with the r_min erratum:
    docs/errata.md#finite-skip-het-r-min), §5.2 (LPS), §6.2 (threshold parallelism), §7.2 / App. B (ServerFilling);
    exact constants: docs/modelling-choices.md#finite-skip-constants.
    """
    if not policy.wcfs:
        raise ValueError(f"policy {policy.name} is not work-conserving finite-skip: Cor. 3.8 does not apply")
    rems = class_rem_max(model)
    if any(r is None for r in rems):
        return None
    rem_max = max(rems)
    k = model.servers
    if not exact:
        n = _generic_front(model, policy)
        w = (n - 1) * rem_max
        return WCFSConstants("generic", n, rem_max, w, w, _generic_r_min(model, policy))
    params = list(model.params)
    if model.kind == HETEROGENEOUS:
        # non-full = non-busy = fewer than k jobs (all in service): (k − 1)·rem_max; r_min from the assignment rule
        w = (k - 1) * rem_max
        if policy.name in (FSF, FSF_MINMIG):  # busy servers are the j fastest: min_j (Σ j fastest)/j = 1/k
            speeds = sorted(model.speeds, reverse=True)
            r_min = min(sum(speeds[:j]) / j for j in range(1, k + 1))
        else:  # a lone job can sit on the slowest server
            r_min = min(model.speeds)
        return WCFSConstants("exact", k, rem_max, w, w, r_min)
    if model.kind == LPS:  # full ⇔ k present; busy ⇔ N >= 1; R = 1/min(N, k)
        return WCFSConstants("exact", k, rem_max, (k - 1) * rem_max, 0.0, 1.0 / k)
    if model.kind == THRESHOLD or policy.name == SF_EXP:
        return summed_front_constants(params, rems, k)
    if policy.name == SF_DIV:
        return divisible_front_constants(params, rems, k)
    raise ValueError(f"no constants for policy {policy.name}")


def summed_front_constants(params: list[int], rems: list[float], k: int) -> WCFSConstants:
    """Exact constants of Cor. 3.8 when the front is non-full ⇔ the parameters (thresholds, or needs under
    ServerFilling in the exponential setting) of the jobs present sum to < k, all of them served: w = the largest
    Σ rem over such sets (an unbounded knapsack of capacity k − 1), n = 1 + ⌊(k − 1)/p_min⌋, r_min = min(p_min/k, 1/n).

    [bound inputs] Grosof, Harchol-Balter & Scheller-Wolf, §6.2 (threshold parallelism), §7.2 (ServerFilling); per
    class: ``params`` p and ``rems`` its rem (time units); ``k`` servers.
    """
    pmin = min(params)
    w = unbounded_knapsack(params, rems, k - 1)
    n = 1 + (k - 1) // pmin  # a full front: jobs summing to <= k − 1, plus the newest served one
    r_nonfull = pmin / k if pmin < k else math.inf  # all jobs served at p/k; the mean is smallest with p = pmin
    return WCFSConstants("exact", n, max(rems), w, w, min(r_nonfull, 1.0 / n))


def divisible_front_constants(needs: list[int], rems: list[float], k: int) -> WCFSConstants:
    """Exact constants of Cor. 3.8 for ServerFilling in the divisible setting (every need divides k): non-full ⇔ fewer
    than k/v jobs of every need v: w = Σ_v (k/v − 1)·rem_v, n = Σ_v (k/v − 1) + 1, r_min over the non-full
    configurations (the class filling most servers is served).

    [bound inputs] Grosof, Harchol-Balter & Scheller-Wolf, App. B.2; per class: ``needs`` v and ``rems`` its rem.
    """
    distinct = sorted(set(needs))
    per_need = {v: max(r for p, r in zip(needs, rems) if p == v) for v in distinct}
    w = sum((k // v - 1) * per_need[v] for v in distinct)  # non-full ⇔ fewer than k/v jobs of every need v
    n = sum(k // v - 1 for v in distinct) + 1
    r_min = 1.0 / n  # full with the largest front
    for counts in product(*[range(k // v) for v in distinct]):  # non-full: serve the class filling most servers
        jobs = sum(counts)
        if jobs:
            r_min = min(r_min, max(v * c for v, c in zip(distinct, counts)) / k / jobs)
    return WCFSConstants("exact", n, max(rems), w, w, r_min)


def wcfs_band(model, constants: WCFSConstants) -> WCFSBand:
    """Cor. 3.8 [bound, every ρ < 1] for a finite-skip model (its ``arrival_rate`` and ``size_moments``):
    :func:`wcfs_band_of`."""
    return wcfs_band_of(model.arrival_rate, *model.size_moments, constants)


def wcfs_band_of(lam: float, m1: float, m2: float, constants: WCFSConstants) -> WCFSBand:
    """Cor. 3.8 [bound, every ρ < 1]: E[S] − w_nonfull <= E[T] − λE[S²]/(2(1−ρ)) <= w_nonbusy + E[S]/r_min,
    with Thm 3.3 (E[T_Q]), Thm 3.7 (E[T_F] ∈ [E[S], E[S]/r_min]) and the work bound
    λE[S²]/(2(1−ρ)) <= E[W] <= λE[S²]/(2(1−ρ)) + w_nonbusy (§3.2). Grosof, Harchol-Balter & Scheller-Wolf.
    ``lam``: the arrival rate (per time unit); ``m1``, ``m2``: E[S], E[S²] of the size (capacity × time)."""
    rho = lam * m1
    if rho >= 1:
        raise ValueError(f"load ρ = {rho:.4g} >= 1: the bounds need ρ < 1")
    pk = lam * m2 / (2 * (1 - rho))
    c = constants
    return WCFSBand(c, response_lower=max(m1, pk + m1 - c.w_nonfull), response_upper=pk + c.w_nonbusy + m1 / c.r_min,
                    queueing_lower=max(0.0, pk - c.w_nonfull), queueing_upper=pk + c.w_nonbusy,
                    front_lower=m1, front_upper=m1 / c.r_min, work_lower=pk, work_upper=pk + c.w_nonbusy,
                    mg1=pk + m1)


def resource_pooled_mg1(model) -> float:
    """E[T] of the resource-pooled M/G/1/FCFS (one rate-1 server, same λ and sizes): λE[S²]/(2(1−ρ)) + E[S].
    [exact, for that comparison system] (Grosof, Harchol-Balter & Scheller-Wolf §3, after Cor. 3.8)."""
    lam = model.arrival_rate
    m1, m2 = model.size_moments
    return lam * m2 / (2 * (1 - lam * m1)) + m1


def zhang_zwart_lps(model) -> float:
    """Zhang & Zwart's LPS(k) mean response time, ``E[S](1−ρ^k)/(1−ρ) + (E[S²]/(2E[S]))·ρ^k/(1−ρ)``.
    [approximation] (exact as ρ → 1; no error bound). Finite-skip paper §5.3.1, ref. [49]."""
    m1, m2 = model.size_moments
    rho = model.arrival_rate * m1
    k = model.servers
    return m1 * (1 - rho**k) / (1 - rho) + m2 / (2 * m1) * rho**k / (1 - rho)


def heterogeneous_mmk(model, fastest_first: bool) -> float:
    """E[T] of the heterogeneous M/M/k under preemptive FSF (or SSF): a birth–death chain with death rate μB(j),
    B(j) = sum of the min(j, k) fastest (slowest) speeds; E[T] = E[N]/λ. [exact] (Grosof,
    Harchol-Balter & Scheller-Wolf §4.3.1, their ref. [1]; Exp sizes only)."""
    lam = model.arrival_rate
    mu = 1.0 / model.laws[0].mean
    k = model.servers
    speeds = sorted(model.speeds, reverse=fastest_first)
    rho = lam / mu
    weights = [1.0]
    for j in range(1, k + 1):
        weights.append(weights[-1] * lam / (mu * sum(speeds[:j])))
    head_mass = sum(weights[:k])
    head_n = sum(j * w for j, w in enumerate(weights[:k]))
    wk = weights[k]  # π_j = π_k ρ^{j − k} for j >= k
    tail_mass = wk / (1 - rho)
    tail_n = wk * (k / (1 - rho) + rho / (1 - rho) ** 2)
    return (head_n + tail_n) / (head_mass + tail_mass) / lam
