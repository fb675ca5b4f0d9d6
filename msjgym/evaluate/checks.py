"""Run-time invariants: checks every result carries that need no theory and hold for any policy.

A family declares, for one run, its :class:`~msjgym.api.Invariant`\\ s (:meth:`msjgym.api.Simulation.invariants`):
work conservation of the input (the work that arrived against the work the scenario declares), response time >= the
mean service time of each class, Little's law between time-average counts and per-job times. This module judges them
all the same way, over the run's measurement units (the replications, or the batches of a single replication, the
units the metrics' CIs come from):

* in each unit u, the difference d_u = measured_u − expected_u;
* the mean d̄ and the half-width h of its Student-t interval at level :data:`LEVEL` (99.9 %) over the units;
* the allowance a = ``allowance`` × |mean expected| (edge effects of a finite window; 0 where none exist;
  ``allowance`` may depend on the unit, e.g. on the window's length);
* relation "=": **INCONSISTENT** when |d̄| > h + a; relation ">=": **INCONSISTENT** when d̄ + h < −a (the whole
  interval below); **consistent** otherwise;
* with a single unit (one replication without batches) there is no interval: "not judged"; except for an exact run
  (one replay of a trace: no sampling error), judged against the allowance alone.

A correct run is flagged with probability about 0.1 % per check (when the unit values are near normal); a wrong
input or a broken sampler that moves a quantity by more than the interval is flagged. ``docs/statistics.md`` says what
each check can and cannot catch. Heavy tails get notes (:func:`tail_notes`): a law of infinite variance makes the
replications' intervals converge slowly and often too narrow.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from msjgym.api import Invariant, Side
from msjgym.core.estimates import json_float
from msjgym.evaluate.intervals import t_interval

LEVEL = 0.999
"""Confidence level of the difference's interval: a correct run fails a check with probability about 1 - LEVEL."""


@dataclass(frozen=True)
class Check:
    """The verdict of one :class:`~msjgym.api.Invariant` on a run.

    Attributes:
        name, description, relation: the invariant's.
        measured, expected: the means of both sides over the units.
        difference: mean of measured − expected per unit; half_width: its :data:`LEVEL` t-interval half-width
            (NaN with one unit); allowance: the absolute slack for edge effects.
        verdict: "consistent", "INCONSISTENT" or "not judged (...)"; agrees: True, False or None (not judged).
    """

    name: str
    description: str
    relation: str
    measured: float
    expected: float
    difference: float
    half_width: float
    allowance: float
    verdict: str
    agrees: bool | None

    def to_dict(self) -> dict[str, Any]:
        return {k: (json_float(v) if isinstance(v, float) else v) for k, v in asdict(self).items()}

    def summary(self) -> str:
        """``measured vs expected (difference ± bound)``, in 4 significant digits."""
        bound = self.half_width + self.allowance if math.isfinite(self.half_width) else math.nan
        gap = f"{self.difference:+.3g}" + (f", allowed ±{bound:.2g}" if math.isfinite(bound) else "")
        return f"{self.measured:.4g} vs {'>= ' if self.relation == '>=' else ''}{self.expected:.4g} ({gap})"


def _side(side: Side, unit: Mapping[str, float]) -> float:
    if callable(side):
        return float(side(unit))
    if isinstance(side, str):
        return float(unit.get(side, math.nan))
    return float(side)


def judge(invariant: Invariant, units: Sequence[Mapping[str, float]], exact: bool = False) -> Check | None:
    """The verdict of ``invariant`` over ``units`` (None when some unit lacks one of its values: nothing to judge).
    ``exact``: the units have no sampling error (one replay of a fixed input): the difference is judged against the
    allowance alone."""
    measured = np.array([_side(invariant.measured, u) for u in units])
    expected = np.array([_side(invariant.expected, u) for u in units])
    if measured.size == 0 or not (np.isfinite(measured).all() and np.isfinite(expected).all()):
        return None
    diff = t_interval(measured - expected, LEVEL)
    fraction = (float(np.mean([invariant.allowance(u) for u in units])) if callable(invariant.allowance)
                else invariant.allowance)
    allowance = fraction * abs(float(expected.mean()))
    half = 0.0 if exact else diff.ci95
    if not math.isfinite(half):
        verdict, agrees = "not judged (one unit: no interval; use --reps 2 or more)", None
    elif invariant.relation == ">=":
        agrees = bool(diff.mean + half >= -allowance)
    else:
        agrees = bool(abs(diff.mean) <= half + allowance)
    if math.isfinite(half):
        verdict = "consistent" if agrees else "INCONSISTENT"
    return Check(invariant.name, invariant.description, invariant.relation, float(measured.mean()),
                 float(expected.mean()), diff.mean, half, allowance, verdict, agrees)


def run_checks(invariants: Sequence[Invariant], units: Sequence[Mapping[str, float]], exact: bool = False
               ) -> list[Check]:
    """The verdicts of every invariant that ``units`` carry the values of (``exact``: see :func:`judge`)."""
    return [c for c in (judge(inv, units, exact) for inv in invariants) if c is not None]


RARE_MASS_NOTE = 0.05
"""A law gets a note when up to this fraction of its mean may be carried by jobs the run is unlikely to draw."""


def tail_notes(laws: Sequence[tuple[str, Any]], reps: int, draws: int = 0) -> list[str]:
    """Notes on the service laws a run samples (``draws`` jobs over its ``reps`` replications):

    * a heavy tail: infinite variance (E[S²] = inf), or a power tail of index α <= 2 (its ``tail_index``; a bounded
      Pareto's variance is finite but carried by its rare longest jobs). The CIs from replications then converge
      slowly (the sample mean's error shrinks like r^(1/α − 1), not r^(−1/2)) and are often too narrow;
    * a mean the run may not reach: by Cauchy–Schwarz the rarest fraction q of the jobs carries at most
      √((1 + SCV)·q) of the mean; with q = 1/draws, a bound above :data:`RARE_MASS_NOTE` means part of the mean may
      sit in jobs the run never draws (an H2 of SCV 10⁸ puts half of it in jobs of probability 5·10⁻⁹).
    """
    notes = []
    for label, law in laws:
        alpha = getattr(law, "tail_index", None)
        try:
            second = float(law.second_moment)
            scv = float(law.scv) if math.isfinite(second) else math.inf
        except (OverflowError, ZeroDivisionError):
            second = scv = math.inf
        infinite = not math.isfinite(second)
        if infinite or (alpha is not None and alpha <= 2.0):
            index = f"tail index α = {alpha:g}" if alpha is not None else "E[S²] = inf"
            what = "infinite variance" if infinite else "a variance carried by its rarest, longest jobs"
            notes.append(f"{label}: {law} has {what} ({index}): the CIs over the {reps} replication(s) converge "
                         "slowly and may be too narrow (read them as lower bounds on the uncertainty); the "
                         "work_arrived check flags a run that drew too few long jobs")
        elif draws > 0 and math.isfinite(scv) and math.sqrt((1.0 + scv) / draws) > RARE_MASS_NOTE:
            share = min(1.0, math.sqrt((1.0 + scv) / draws))
            notes.append(f"{label}: {law} (SCV {scv:.3g}): up to {share:.0%} of its mean may be carried by jobs "
                         f"rarer than 1 in the run's {draws:,} draws, which it may never sample; the work_arrived "
                         "check tells whether it did (docs/statistics.md#checks)")
    return notes


RELAXATION_METRICS = ("number_in_system", "mean_queue_length", "response_time")
"""The metric whose batch means show the run's relaxation (the first one a family reports)."""

RELAXATION_LAG1 = 0.5
"""Batch means whose lag-1 autocorrelation (pooled over replications) exceeds this are not near-independent: the
batches are shorter than the system's relaxation time, and a t-interval over them (or over replications as short)
is too narrow. An AR(1) with this lag-1 correlation has an integrated autocorrelation time of 3 batches."""

RELAXATION_LEVEL = 0.999
"""The level of the test of a drift between the halves of the replications (few false alarms on a converged run)."""


def relaxation_note(batches: Sequence[Sequence[dict[str, float]]], jobs: int, unit: str = "job") -> str | None:
    """A note when the run is short against the system's relaxation time (None when it is not, or when it cannot
    tell), from each replication's batch means (``batches[r]``, in time order; ``jobs`` measured per replication):

    * drift: the mean over replications of (second-half mean − first-half mean) of the batch means differs from 0
      at level :data:`RELAXATION_LEVEL` (Student t over >= 3 replications): the run has not forgotten its start
      (empty), so every estimate is biased however tight its CI (heavy load, one server, slow transients);
    * correlation: the batch means' lag-1 autocorrelation, pooled over replications, exceeds
      :data:`RELAXATION_LAG1`; the relaxation time is then estimated as the AR(1) integrated autocorrelation time
      (1 + r₁)/(1 − r₁) batches (Law, *Simulation Modeling and Analysis*, §9.5.3: batch means must be nearly
      uncorrelated).
    """
    metric = next((m for m in RELAXATION_METRICS if all(b and m in b[0] for b in batches) and batches), None)
    if metric is None:
        return None
    series = [np.array([u.get(metric, math.nan) for u in rep], dtype=np.float64) for rep in batches]
    series = [s for s in series if s.size >= 4 and np.all(np.isfinite(s))]
    if not series:
        return None
    size = min(s.size for s in series)
    half = size // 2
    drifts = np.array([s[size - half:size].mean() - s[:half].mean() for s in series])
    centred = [s[:size] - s[:size].mean() for s in series]
    den = sum(float(c @ c) for c in centred)
    r1 = sum(float(c[1:] @ c[:-1]) for c in centred) / den if den > 0 else 0.0
    per_batch = jobs / size
    why = []
    if len(drifts) >= 3:
        from scipy import stats

        spread = drifts.std(ddof=1) / math.sqrt(len(drifts))
        t = stats.t.ppf(0.5 + RELAXATION_LEVEL / 2, len(drifts) - 1)
        if spread == 0 and drifts.mean() != 0 or abs(drifts.mean()) > t * spread:
            why.append(f"{metric} drifts between the halves of the replications by {drifts.mean():+.4g} "
                       f"(±{t * spread:.2g} at {RELAXATION_LEVEL:.1%})")
    if r1 > RELAXATION_LAG1:
        why.append(f"its batch means have lag-1 autocorrelation {r1:.2f} > {RELAXATION_LAG1}: relaxation time "
                   f"≈ {(1 + r1) / (1 - r1) * per_batch:,.0f} {unit}s (AR(1) estimate)")
    if not why:
        return None
    return (f"NOT CONVERGED: the run ({jobs:,} {unit}s per replication) is short against the system's relaxation "
            f"time: {'; '.join(why)}; the estimates are biased and their CIs too narrow: run longer (--jobs, "
            "--warmup)")
