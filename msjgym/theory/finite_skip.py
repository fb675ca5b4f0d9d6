"""Work-conserving finite-skip (WCFS) bounds for multiserver-job ServerFilling, with the paper's generic constants.

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis": Corollary 3.8
and the ServerFilling instantiations of §7.2 / App. B (reference note §3.4–3.5). Sizes are in system-capacity × time:
a job of need v and duration X has size S = vX/k on k servers, and ρ = λE[S].

    E[S] − w_nonfull <= E[T] − λE[S²]/(2(1 − ρ)) <= w_nonbusy + E[S]/r_min          [bound, every ρ < 1]

with, for ServerFilling in the exponential setting, front size n <= k, w_nonfull = w_nonbusy <= (k − 1)·rem_max and
r_min >= 1/k; in the divisible setting, n = c(k, supp V) = Σ_v (k/v − 1) + 1 (the note's corrected
parenthesisation), w <= (c − 1)·rem_max and r_min >= 1/Σ_v (k/v). rem_max is the largest expected remaining size of a
job given what a size-oblivious scheduler can see (its need and its age): for class v, (v/k)·sup_a E[X − a | X > a].
This module uses the generic constants only; the exact constants of note §3.8 are left to the finite-skip issue.
"""
from __future__ import annotations

from dataclasses import dataclass

from msjgym.core.distributions import (Deterministic, Distribution, Erlang, Exponential, HyperExponential,
                                       Uniform)
from msjgym.systems.msj_model import MSJModel


def mean_residual_sup(service: Distribution) -> float | None:
    """sup over ages a of E[X − a | X > a] (time units), or None when msjgym does not know it (or it is infinite).

    Exponential: the mean. NBUE laws (Erlang, deterministic, uniform): the mean, at age 0. Hyperexponential: the
    mean of its slowest phase, approached as the age grows (reference note §3.8 item 1).
    """
    if isinstance(service, (Exponential, Erlang, Deterministic, Uniform)):
        return service.mean
    if isinstance(service, HyperExponential):
        return 1.0 / min(service.rates)
    return None


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
    rho = lam * mean_s
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
