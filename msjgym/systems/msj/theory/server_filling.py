"""ServerFilling's work-conserving finite-skip (WCFS) bounds on a multiserver-job model: Cor. 3.8 with the generic
constants of the paper and with the exact constants of ServerFilling's definition.

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis": Corollary 3.8
and the ServerFilling instantiations of §7.2 (exponential setting) and App. B (B.1 exponential, B.2 divisible
setting; errata: docs/errata.md). Sizes are in system-capacity × time: a job of need v and duration X has size
S = vX/k on k servers, and ρ = λE[S] (:attr:`~msjgym.systems.msj.model.MSJModel.job_size_moments`).

    E[S] − w_nonfull <= E[T] − λE[S²]/(2(1 − ρ)) <= w_nonbusy + E[S]/r_min          [bound, every ρ < 1]

Generic constants (:func:`server_filling_bounds`): in the exponential setting, front size n <= k, w_nonfull =
w_nonbusy <= (k − 1)·rem_max and r_min >= 1/k; in the divisible setting, n = c(k, supp V) = Σ_v (k/v − 1) + 1
(corrected parenthesisation: docs/errata.md#finite-skip-c-k-supp-v), w <= (c − 1)·rem_max and r_min >= 1/Σ_v (k/v).
rem_max is the largest expected remaining size of a job given what a size-oblivious scheduler can see (its need and
its age): for class v, (v/k)·sup_a E[X − a | X > a] (docs/modelling-choices.md#finite-skip-rem-max). Exact constants
(:func:`server_filling_constants`, docs/modelling-choices.md#finite-skip-constants): integer programs over the
non-full front configurations, r_min over the reachable ones.
"""
from __future__ import annotations

from dataclasses import dataclass

from msjgym.systems.msj.model import MSJModel
from msjgym.theory.finite_skip import (
    WCFSBand, WCFSConstants, divisible_front_constants, mean_residual_sup, summed_front_constants, wcfs_band_of)


@dataclass(frozen=True)
class WCFSBounds:
    """Cor. 3.8 for one model: the interval for E[T] (time units), and the M/G/1 comparison value.

    Attributes:
        lower, upper: the bounds on the mean response time E[T] (``lower`` clamped to E[S] <= E[T]).
        mg1: E[T] of the resource-pooled M/G/1/FCFS with the same λ and sizes, λE[S²]/(2(1−ρ)) + E[S].
        front: the maximum front size n used; rem_max: the largest expected remaining size (size units).
    """

    lower: float
    upper: float
    mg1: float
    front: int
    rem_max: float


def server_filling_bounds(model: MSJModel, divisible: bool = False) -> WCFSBounds | None:
    """The WCFS bounds on ServerFilling's mean response time with generic constants. [bound, every ρ < 1]

    None when they do not apply: ρ >= 1, or a duration law whose rem_max msjgym does not know (heavy tails).
    ``divisible``: the divisible-setting variant (App. B.2) instead of the exponential setting (App. B.1).
    """
    k, lam = model.servers, model.arrival_rate
    mean_s, second_s = model.job_size_moments
    rho = model.load  # λ E[S] in system-capacity units, as the model states it (a load given as 1 stays 1)
    residuals = [mean_residual_sup(c.service) for c in model.classes]
    if rho >= 1 or any(r is None for r in residuals):
        return None
    rem_max = max(c.need / k * r for c, r in zip(model.classes, residuals))
    needs = sorted(set(int(c.need) for c in model.classes))
    if divisible:
        front = sum(k // v - 1 for v in needs) + 1
        inverse_r_min = sum(k // v for v in needs)
    else:
        front, inverse_r_min = k, k
    queueing = lam * second_s / (2 * (1 - rho))
    slack = (front - 1) * rem_max
    return WCFSBounds(lower=max(mean_s, queueing + mean_s - slack), upper=queueing + slack + inverse_r_min * mean_s,
                      mg1=queueing + mean_s, front=front, rem_max=rem_max)


def _sizes(model: MSJModel) -> tuple[list[int], list[float], list]:
    """Per class: its need v, its size scale v/k (S = (v/k)·X), and its duration law."""
    k = model.servers
    needs = [int(c.need) for c in model.classes]
    return needs, [v / k for v in needs], [c.service for c in model.classes]


def server_filling_constants(model: MSJModel, divisible: bool = False) -> WCFSConstants | None:
    """The exact constants of Cor. 3.8 for ServerFilling (``divisible``: the divisible-setting variant, App. B.2),
    from its definition (docs/modelling-choices.md#finite-skip-constants); None when rem_max is unknown or infinite.

    Exponential setting: the front is non-full ⇔ the needs of the jobs present sum to < k, all of them served: w =
    the largest Σ rem over such sets (an unbounded knapsack of capacity k − 1), n = 1 + ⌊(k − 1)/v_min⌋, r_min =
    min(v_min/k, 1/n). Divisible setting: non-full ⇔ fewer than k/v jobs of every need v: w = Σ_v (k/v − 1)·rem_v,
    n = Σ_v (k/v − 1) + 1, r_min over the non-full configurations (the class filling most servers is served).
    """
    k = model.servers
    needs, scales, laws = _sizes(model)
    residuals = [mean_residual_sup(law) for law in laws]
    if any(r is None for r in residuals):
        return None
    rems = [float(s * r) for s, r in zip(scales, residuals)]
    if not divisible:
        return summed_front_constants(needs, rems, k)
    return divisible_front_constants(needs, rems, k)


def server_filling_band(model: MSJModel, constants: WCFSConstants) -> WCFSBand:
    """Cor. 3.8 with ``constants`` on ``model`` (λ, and E[S], E[S²] of the size S = vX/k), :func:`wcfs_band_of`."""
    _, scales, laws = _sizes(model)
    probs = [c.probability for c in model.classes]
    m1 = sum(p * s * d.mean for p, s, d in zip(probs, scales, laws))
    m2 = sum(p * s * s * d.second_moment for p, s, d in zip(probs, scales, laws))
    return wcfs_band_of(model.arrival_rate, m1, m2, constants)
