"""The metrics of a loss-system replication (or batch), from its statistics row.

Metrics (per replication, then mean ± CI): ``blocking_probability`` (blocked/arrivals), ``response_time`` (mean of
1/width over accepted jobs = E[D], conditioning on the width), ``number_in_system``, ``utilization`` (busy fraction
q_1), ``throughput`` (accepted jobs per unit time), ``width_probability[wi]`` (fraction of arrivals given i servers;
w0 = blocked), ``number_in_system[wi]`` (E[X_i]), ``sqrt_n_blocking`` (√n P_b), ``stein_lhs`` (E[(λ − d x_d)²]) and
the residuals of GMGM's identities, each zero in steady state: ``residual_work`` (E[q_1] − λ(1 − P_b), eq. (1)),
``residual_little`` (λ(1 − P_b)E[D] − E[Σ x_i], eq. (2)), ``residual_width[wi]`` (E[i x_i] − λE[A_i]),
``residual_pasta`` (P_b − time average of P(block | x)), ``residual_stein`` (Lemma 1 eq. (9), with A_d the
policy's P(width d | x)).
"""
from __future__ import annotations

import math

import numpy as np

from msjgym.systems.loss import state as ls
from msjgym.systems.loss.model import LossModel


def loss_metrics(stats: np.ndarray, model: LossModel) -> dict[str, float]:
    """Metric values from one replication's (or batch's) summed statistics row (``msjgym.systems.loss.state`` layout)."""
    n, d, lam = model.servers, model.d, model.lam
    T, arr, blocked = stats[ls.S_TIME], stats[ls.S_ARR], stats[ls.S_BLOCK]
    accepted = arr - blocked
    nan = math.nan
    pb = blocked / arr if arr > 0 else nan
    # Σ_i (c_i/accepted)/i: exactly 1/d (in floating point) when every accepted job got d servers
    ed = sum((stats[ls.S_WIDTH + i] / accepted) / i for i in range(1, d + 1)) if accepted > 0 else nan
    jobs = stats[ls.S_JOBS] / T if T > 0 else nan
    q1 = stats[ls.S_BUSY] / (n * T) if T > 0 else nan
    ad = stats[ls.S_AD] / T
    dev2 = stats[ls.S_DEV2] / T
    out = {
        "blocking_probability": pb, "response_time": ed, "number_in_system": jobs, "utilization": q1,
        "throughput": accepted / T, "sqrt_n_blocking": math.sqrt(n) * pb, "stein_lhs": dev2,
        "residual_work": q1 - lam * (1 - pb), "residual_little": lam * (1 - pb) * ed - jobs / n,
        "residual_pasta": pb - stats[ls.S_PBLOCK] / T,
        "residual_stein": dev2 - (d / n) * lam * ad - lam * stats[ls.S_STEIN] / T,
    }
    if model.service is not None:  # Lemma 1 uses the Markov generator: no identity for other size laws
        del out["residual_stein"]
    ax = ls.s_area_x(d)
    for i in range(d + 1):
        out[f"width_probability[w{i}]"] = stats[ls.S_WIDTH + i] / arr
    for i in range(1, d + 1):
        out[f"number_in_system[w{i}]"] = stats[ax + i] / T
        out[f"residual_width[w{i}]"] = i * stats[ax + i] / (n * T) - lam * stats[ls.S_WIDTH + i] / arr
    return out


def default_warmup(model: LossModel, jobs: int) -> int:
    """max(jobs/10, 20n) arrivals (module docstring)."""
    return max(jobs // 10, 20 * model.servers)
