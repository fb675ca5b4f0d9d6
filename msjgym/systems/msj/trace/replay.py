"""Trace replays: their exact metrics, the size bands of the per-class table, and the replay's run-time checks.

A replay of a trace is deterministic: the same jobs arrive at the same times whatever the seed, so one replay has
no sampling error and its metrics are the exact per-job averages of the replay, with no confidence interval
(:func:`replay_metrics`). Uncertainty about how a policy does on *such* a workload comes from replications over
windows of the trace, as the HPC scheduling literature does: each window is a run of consecutive jobs replayed from an
empty machine, and the CIs are across windows (:mod:`msjgym.systems.msj.trace.windows`).

The HPC metrics (Feitelson, Rudolph, Schwiegelshohn, Sevcik & Wong, "Theory and practice in parallel job scheduling",
JSSPP 1997): the bounded slowdown max(1, T / max(S, τ)) of a job of response time T and run time S, with a
threshold τ (10 s in the literature) so that very short jobs do not dominate the mean; the makespan, from the first
arrival to the last completion of the replayed jobs; the utilization over the makespan, Σ need·S / (servers ·
makespan).
"""
from __future__ import annotations

import math

import numpy as np

MAX_CLASS_COLUMNS = 8
"""A trace with more distinct processor counts than this gets its per-class table in power-of-two size bands."""

PERCENTILES = (95, 99)
"""Percentiles reported for the waiting time, the response time and the bounded slowdown (numpy's default linear
interpolation between order statistics)."""


def size_bands(needs: np.ndarray, banded: bool | None = None) -> tuple[list[str], np.ndarray]:
    """The per-class columns of a replay: (labels, the column of each job).

    At most :data:`MAX_CLASS_COLUMNS` distinct needs: one column per need, ``needM``. More: power-of-two bands
    ``need1``, ``need2``, ``need3-4``, ``need5-8``, ``need9-16``, ... (band k >= 1 holds the needs in
    (2^(k-1), 2^k]); only the columns that hold a job. ``banded`` imposes the choice (the replications of one
    trace, its windows, must share their columns: the whole trace decides, :func:`uses_bands`).
    """
    needs = np.asarray(needs, dtype=np.int64)
    distinct = np.unique(needs)
    if not (uses_bands(needs) if banded is None else banded):
        return [f"need{m}" for m in distinct], np.searchsorted(distinct, needs)
    band = np.ceil(np.log2(needs)).astype(np.int64)  # exact for the integers of a trace (< 2**52)
    present = np.unique(band)
    labels = [f"need{1 << k}" if k <= 1 else f"need{(1 << (k - 1)) + 1}-{1 << k}" for k in present]
    return labels, np.searchsorted(present, band)


def uses_bands(needs: np.ndarray) -> bool:
    """Whether a trace with these needs gets power-of-two size bands (more than :data:`MAX_CLASS_COLUMNS` sizes)."""
    return int(np.unique(np.asarray(needs)).size) > MAX_CLASS_COLUMNS


def replay_metrics(arrival: np.ndarray, need: np.ndarray, duration: np.ndarray, completion: np.ndarray,
                   servers: int, warmup: int, tau: float, banded: bool | None = None,
                   wait: np.ndarray | None = None) -> dict[str, float]:
    """The exact metrics of one replay (module docstring).

    Args:
        arrival: every replayed job's arrival time (trace time units), in arrival order.
        need: the servers each job holds.
        duration: each job's run time (trace time units).
        completion: each job's completion time (trace time units).
        servers: the simulated machine's servers.
        warmup: the first ``warmup`` jobs are replayed but not measured (per-job averages are over the others).
        tau: the bounded slowdown's threshold (trace time units).
        banded: whether the per-class columns are size bands (None: decided by these jobs; :func:`size_bands`).
        wait: each job's waiting time as the event loop accumulated it (exactly 0 for a job that started on
            arrival); the response time is then wait + duration. None: wait = completion − arrival − duration, a
            difference of clock values that is off by rounding (±1e-13) for a job that never waited.

    Per-job values (``waiting_time``, ``response_time``, ``bounded_slowdown``, their percentiles, and
    ``queueing_probability``, the fraction that waited) are over the measured jobs; ``makespan``, ``utilization``
    (over the makespan), ``throughput`` and the time averages ``number_in_system`` / ``number_in_queue`` are over
    the whole replay, from its first arrival to its last completion. Per-class values ``NAME[BAND]`` use the columns
    of :func:`size_bands`.
    """
    if wait is None:
        response = completion - arrival
        wait = response - duration
    else:
        response = wait + duration
    bsld = np.maximum(1.0, response / np.maximum(duration, tau))
    start = float(arrival.min()) if arrival.size else math.nan
    makespan = float(np.max(completion)) - start if arrival.size else math.nan
    work = need * duration
    out: dict[str, float] = {}
    labels, column = size_bands(need, banded)

    def put(rows: np.ndarray, suffix: str) -> None:
        m = rows.copy()
        m[:warmup] = False
        r, w, s = response[m], wait[m], bsld[m]
        out["response_time" + suffix] = _mean(r)
        out["waiting_time" + suffix] = _mean(w)
        out["bounded_slowdown" + suffix] = _mean(s)
        out["number_in_system" + suffix] = _per(response[rows].sum(), makespan)
        out["number_in_queue" + suffix] = _per(wait[rows].sum(), makespan)
        out["utilization" + suffix] = _per(work[rows].sum(), makespan * servers)
        out["queueing_probability" + suffix] = _mean((w > 0).astype(np.float64))
        out["throughput" + suffix] = _per(float(rows.sum()), makespan)
        for q in PERCENTILES:
            for name, values in (("waiting_time", w), ("response_time", r), ("bounded_slowdown", s)):
                out[f"{name}_p{q}{suffix}"] = float(np.percentile(values, q)) if values.size else math.nan

    put(np.ones(arrival.size, dtype=bool), "")
    out["makespan"] = makespan
    for k, label in enumerate(labels):
        put(column == k, f"[{label}]")
        for q in PERCENTILES:  # the per-class table shows means; the percentiles stay whole-trace
            for name in ("waiting_time", "response_time", "bounded_slowdown"):
                del out[f"{name}_p{q}[{label}]"]
    return out


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else math.nan


def _per(total: float, span: float) -> float:
    return float(total) / span if span > 0 else math.nan


def loop_integrals(state, b: int, needs: np.ndarray, servers: int) -> dict[str, float]:
    """The event loop's own time integrals of system ``b`` of a finished replay without warm-up (its measurement then
    runs from the first arrival to the last completion), as time averages: the values :func:`replay_invariants`
    compares with the per-job ones."""
    from msjgym.systems.msj.state import B_AREA_N, B_AREA_X, BS_TIME

    bstat, time = state.bstat[b].sum(axis=0), float(state.bsys[b, :, BS_TIME].sum())
    busy = float(np.sum(bstat[:, B_AREA_X] * needs))
    return {"servers": float(servers), "loop_time": time, "loop_busy_servers": _per(busy, time),
            "loop_number_in_system": _per(float(bstat[:, B_AREA_N].sum()), time)}


REPLAY_ALLOWANCE = 1e-9
"""Relative slack of the replay checks: the same sums taken in two orders (float64 rounding only)."""


def replay_invariants() -> list:
    """The checks of a replay without warm-up: the compiled event loop's time integrals against the per-job
    completion times (two independent computations of the same quantities; a replay has no sampling error, so any
    difference beyond rounding is a bug)."""
    from msjgym.api import Invariant

    return [
        Invariant("replay_span", "the event loop's measured time = the makespan (first arrival to last completion)",
                  "loop_time", "makespan", allowance=REPLAY_ALLOWANCE),
        Invariant("replay_work", "the event loop's time-average busy servers = Σ need × run time / makespan",
                  "loop_busy_servers", lambda u: u["utilization"] * u["servers"], allowance=REPLAY_ALLOWANCE),
        Invariant("replay_little", "the event loop's time-average number in system = Σ response times / makespan "
                  "(Little's law over a replay from empty to empty)", "loop_number_in_system", "number_in_system",
                  allowance=REPLAY_ALLOWANCE),
    ]
