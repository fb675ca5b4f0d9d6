"""The metrics of a multiserver-job replication (or measurement batch), from its accumulators.

Each is a ratio of sums over the measured jobs or time (e.g. mean response time = Σ response times / jobs
completed); :mod:`msjgym.core.estimates` turns the values of replications or batches into 95 % CIs.
"""
from __future__ import annotations

import math

import numpy as np

from msjgym.core import histogram
from msjgym.systems.msj.state import (
    B_AREA_DEF, B_AREA_N, B_AREA_X, B_NARR, B_NCOMP, B_NDONE, B_NQUEUED, B_SUM_T, B_SUM_W, BS_AREA_HIGH, BS_TIME)

PERCENTILES = {"response_time_p95": 0.95, "response_time_p99": 0.99}


def _ratio(num: float, den: float) -> float:
    return num / den if den > 0 else math.nan


def open_metrics(bstat: np.ndarray, bsys: np.ndarray, hist: np.ndarray, needs: np.ndarray, servers: int,
                 class_names: list[str]) -> dict[str, float]:
    """Metrics of an open system from accumulators summed over a set of batches.

    Args:
        bstat: ``float[K, NBS]`` per-class sums (see ``msjgym.systems.msj.state`` B_* fields).
        bsys: ``float[NBSYS]`` whole-system sums (BS_* fields: measured time, ...).
        hist: ``int[K, NBINS]`` response-time histograms.
        needs: servers held by a job of each class.
        servers: n.
        class_names: names for the per-class metrics ``NAME[CLASS]``.

    Times are in the scenario's time unit; counts are time averages; ``queueing_probability`` is the fraction of
    measured arrivals that did not start service at once. Two diagnostics of the zero-queueing analysis
    (Wang, Xie & Harchol-Balter) are included: ``high_occupancy_probability`` = P(Σ_i m_i X_i > n − m_max), the
    event of their eq. (3), and ``server_deficit[CLASS]`` = E[(λ_i m_i E[S_i] − m_i X_i)^+] of their Lemma 5.4
    (X_i = class-i jobs in system).
    """
    out: dict[str, float] = {}
    time = bsys[BS_TIME]

    def put(name: str, rows: np.ndarray | slice, suffix: str = "") -> None:
        s = bstat[rows].reshape(-1, bstat.shape[-1]).sum(axis=0)
        h = hist[rows].reshape(-1, hist.shape[-1]).sum(axis=0)
        busy = float(np.sum(bstat[rows, B_AREA_X] * needs[rows]))
        out["response_time" + suffix] = _ratio(s[B_SUM_T], s[B_NDONE])
        out["waiting_time" + suffix] = _ratio(s[B_SUM_W], s[B_NDONE])
        out["number_in_system" + suffix] = _ratio(s[B_AREA_N], time)
        out["number_in_queue" + suffix] = _ratio(s[B_AREA_N] - s[B_AREA_X], time)
        out["utilization" + suffix] = _ratio(busy, time * servers)
        out["queueing_probability" + suffix] = _ratio(s[B_NQUEUED], s[B_NARR])
        out["throughput" + suffix] = _ratio(s[B_NCOMP], time)
        for pname, q in PERCENTILES.items():
            out[pname + suffix] = histogram.quantile(h, q) if h.sum() else math.nan

    put("", slice(None))
    out["high_occupancy_probability"] = _ratio(bsys[BS_AREA_HIGH], time)
    for c, name in enumerate(class_names):
        put(name, np.array([c]), f"[{name}]")
        out[f"server_deficit[{name}]"] = _ratio(bstat[c, B_AREA_DEF], time)
    return out


def saturated_metrics(bstat: np.ndarray, bsys: np.ndarray, needs: np.ndarray, servers: int,
                      class_names: list[str]) -> dict[str, float]:
    """Metrics of a saturated (closed) system: throughput (jobs per unit time), per class, and utilization."""
    time = bsys[BS_TIME]
    out = {
        "throughput": _ratio(bstat[:, B_NCOMP].sum(), time),
        "utilization": _ratio(float(np.sum(bstat[:, B_AREA_X] * needs)), time * servers),
    }
    for c, name in enumerate(class_names):
        out[f"throughput[{name}]"] = _ratio(bstat[c, B_NCOMP], time)
    return out
