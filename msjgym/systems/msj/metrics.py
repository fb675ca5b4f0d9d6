"""The metrics of a multiserver-job replication (or measurement batch), from its accumulators.

Each is a ratio of sums over the measured jobs or time (e.g. mean response time = Σ response times / jobs
completed); :mod:`msjgym.core.estimates` turns the values of replications or batches into 95 % CIs.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from msjgym.api import Invariant
from msjgym.core import histogram
from msjgym.systems.msj.state import (
    B_AREA_DEF, B_AREA_N, B_AREA_X, B_NARR, B_NCOMP, B_NDONE, B_NQUEUED, B_SUM_BSLD, B_SUM_T, B_SUM_W, BS_AREA_HIGH,
    BS_TIME)

WINDOW_ALLOWANCE = 0.01
"""Relative slack of the checks that compare time averages with per-job means over a finite window (utilization
against the load, Little's law): the jobs in system at the window's two edges, O(E[N] / measured jobs)."""

if TYPE_CHECKING:
    from msjgym.systems.msj.model import MSJModel

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
    measured arrivals that did not start service at once; ``bounded_slowdown`` is the mean of max(1, T / max(S, τ))
    over the measured jobs (T response time, S duration, τ the run's threshold; Feitelson, Rudolph, Schwiegelshohn,
    Sevcik & Wong, "Theory and practice in parallel job scheduling", JSSPP 1997). Two diagnostics of the
    zero-queueing analysis (Wang, Xie & Harchol-Balter) are included: ``high_occupancy_probability`` = P(Σ_i m_i X_i > n − m_max), the
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
        out["bounded_slowdown" + suffix] = _ratio(s[B_SUM_BSLD], s[B_NDONE])
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


def sampled_load(bstat: np.ndarray, model: "MSJModel") -> float:
    """λ · mean(m · S) / n over the measured jobs that completed: the load their sampled durations S carry (the
    work that arrived, per server and unit time), from ``bstat`` (``float[K, NBS]``): Σ S = Σ response − Σ waiting."""
    done = float(bstat[:, B_NDONE].sum())
    work = float(np.sum(model.needs * (bstat[:, B_SUM_T] - bstat[:, B_SUM_W])))
    return model.arrival_rate * work / (done * model.servers) if done > 0 else math.nan


def _little(suffix: str):
    return lambda u: u["throughput" + suffix] * u["response_time" + suffix]


def invariants(model: "MSJModel") -> list[Invariant]:
    """The run-time checks of an open multiserver-job run (:mod:`msjgym.evaluate.checks`): the sampled work
    against the declared load, the utilization against it, each class's mean response time against its declared
    mean service time, and Little's law (L = X·W) for the system and each class. A replayed trace declares no law:
    only Little's law."""
    out = []
    names = [c.name for c in model.classes]
    if model.trace is None:
        rho = model.load
        out.append(Invariant("work_arrived", "load the sampled jobs carry, λ·mean(m·S)/n over the measured jobs, "
                             f"= the declared ρ = λ Σ p_i m_i E[S_i] / n = {rho:.4g}", "sampled_load", rho))
        out.append(Invariant("utilization", "busy servers / n = the declared load ρ (in a stable run the work "
                             "served is the work that arrived)", "utilization", rho, allowance=WINDOW_ALLOWANCE))
        for c, name in zip(model.classes, names):
            out.append(Invariant(f"response>=service[{name}]", f"mean response time of class {name} >= its "
                                 f"declared mean service time E[S] = {c.service.mean:.4g}",
                                 f"response_time[{name}]", c.service.mean, ">="))
    out.append(Invariant("little", "Little's law: time-average number in system = throughput × mean response "
                         "time", "number_in_system", _little(""), allowance=WINDOW_ALLOWANCE))
    for name in names if len(names) > 1 else ():
        out.append(Invariant(f"little[{name}]", f"Little's law for class {name}", f"number_in_system[{name}]",
                             _little(f"[{name}]"), allowance=WINDOW_ALLOWANCE))
    return out
