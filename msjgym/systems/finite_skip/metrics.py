"""The metrics of one finite-skip replication (:class:`msjgym.systems.finite_skip.simulation.Replication`), and its
pathwise diagnostics; :func:`msjgym.evaluate` turns them into estimates with CIs.

Metrics: response_time, queueing_time (T_Q: arrival to front entry), front_time, number_in_system, number_in_front,
work (E[W]), work_nonbusy (E[W(1−B)]), utilization (E[B]), work_identity_residual (E[W] − E[W(1−B)]/(1−ρ) −
λE[S²]/(2(1−ρ)), with the model's exact λ, ρ, E[S²]). Diagnostics (over all replications): the largest |T_Q − (W^A −
W_F^F)| over measured jobs that entered the front, the largest front size, the largest 1 − B seen while the queue was
non-empty, and the number of events at which a job outside the front was served (all zero, up to rounding, for a WCFS
policy).
"""
from __future__ import annotations

import numpy as np

from msjgym.systems.finite_skip import simulation as fs


FRONT_METRICS = ("queueing_time", "front_time")
"""The metrics defined only when every measured job went through the front (a WCFS policy's jobs always do)."""


def through_front(r: fs.Replication) -> bool:
    """Whether every measured job of replication ``r`` entered the front before it was served."""
    return not np.isnan(r.rec[:, fs.R_FRONT]).any()


def replication_metrics(model: fs.FiniteSkipModel, r: fs.Replication) -> dict[str, float]:
    """One stable replication's metric values (module docstring); ``queueing_time`` and ``front_time`` only when
    every measured job went through the front (with several replications: in none unless in all, see
    :class:`msjgym.systems.finite_skip.family.FiniteSkipRuns`: averaging them over the replications where it
    happened would select replications by their outcome)."""
    lam = model.arrival_rate
    m1, m2 = model.size_moments
    rho = lam * m1
    a, rec = r.acc, r.rec
    time = a[fs.A_TIME]
    out = {"response_time": float(np.mean(rec[:, fs.R_DONE] - rec[:, fs.R_ARR]))}
    if through_front(r):
        out["queueing_time"] = float(np.mean(rec[:, fs.R_FRONT] - rec[:, fs.R_ARR]))
        out["front_time"] = float(np.mean(rec[:, fs.R_DONE] - rec[:, fs.R_FRONT]))
    out["number_in_system"] = a[fs.A_N] / time
    out["number_in_front"] = a[fs.A_NF] / time
    out["work"] = a[fs.A_W] / time
    out["work_nonbusy"] = a[fs.A_W1B] / time
    out["utilization"] = a[fs.A_B] / time
    if rho < 1:
        out["work_identity_residual"] = a[fs.A_W] / time - a[fs.A_W1B] / time / (1 - rho) - lam * m2 / (2 * (1 - rho))
    return out


def pathwise_invariants(reps: list[fs.Replication]) -> dict[str, float]:
    """Over all replications: the largest |T_Q − (W^A − W_F^F)| over measured jobs that entered the front (stable
    replications), the largest front size, the largest 1 − B seen while the queue was non-empty, and the number of
    events at which a job outside the front was served (all zero, up to rounding, for a WCFS policy)."""
    inv = {"identity_error": 0.0, "max_front": 0.0, "max_rate_gap": 0.0, "served_outside_front": 0.0}
    for r in reps:
        inv["max_front"] = max(inv["max_front"], float(r.acc[fs.A_MAXNF]))
        inv["max_rate_gap"] = max(inv["max_rate_gap"], float(r.acc[fs.A_GAP]))
        inv["served_outside_front"] += float(r.acc[fs.A_OUTSIDE])
        if r.stable:
            tq = r.rec[:, fs.R_FRONT] - r.rec[:, fs.R_ARR]
            err = np.abs(tq - (r.rec[:, fs.R_WA] - r.rec[:, fs.R_WFF]))
            err = err[np.isfinite(err)]  # jobs served outside the front never entered it: no identity for them
            inv["identity_error"] = max(inv["identity_error"], float(err.max()) if err.size else 0.0)
    return inv


def growth_rate(r: fs.Replication) -> float:
    """An unstable replication's growth rate of the number in system: the capacity reached over the time it took
    (jobs per unit time)."""
    return float(r.acc[fs.A_NEND] / r.acc[fs.A_END])
