"""Student-t confidence intervals: the output analysis of :func:`msjgym.evaluate.evaluate`, sweeps' summaries and
the run-time checks, and nowhere else (``tests/test_layers.py`` checks that no module outside ``msjgym/evaluate/``
imports this one or Student's t).

Each replication (or, with a single replication, each measurement batch) yields one value per metric; the reported
mean is the mean of those values and the CI half-width is t_{0.975, r-1} · s / √r over the r values (independent
replications, or batch means within one replication; Law, *Simulation Modeling and Analysis*, §9.4–9.5).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from msjgym.core.estimates import Estimate


def t_interval(values: np.ndarray, level: float = 0.95) -> Estimate:
    """Mean and Student-t CI half-width of i.i.d. ``values`` (NaN entries are an error, not dropped)."""
    values = np.asarray(values, dtype=np.float64)
    r = values.size
    if r == 0:
        return Estimate(math.nan, math.nan)
    if np.isnan(values).any():
        return Estimate(math.nan, math.nan)
    mean = float(values.mean())
    if r < 2:
        return Estimate(mean, math.nan)
    if np.isinf(values).any():
        return Estimate(mean, math.nan)
    from scipy import stats  # imported here: scipy.stats takes a third of a second to import

    half = float(stats.t.ppf(0.5 + level / 2, r - 1) * values.std(ddof=1) / math.sqrt(r))
    return Estimate(mean, half)


def interval(values: np.ndarray) -> Estimate:
    """:func:`t_interval`, except that a metric identical in every unit is that value with a zero half-width (the
    mean of equal floats can differ from them in the last bit; e.g. E[D] = 1/d when every job gets d servers)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size > 1 and np.all(values == values[0]):
        return Estimate(float(values[0]), 0.0)
    return t_interval(values)


def estimates(units: Sequence[dict[str, float]]) -> dict[str, Estimate]:
    """One :func:`interval` per metric over ``units`` (replications, or batches of one replication), in the order
    the metrics first appear; a metric missing from some units is estimated over the units that have it."""
    names = list(dict.fromkeys(name for unit in units for name in unit))
    return {name: interval(np.array([u[name] for u in units if name in u])) for name in names}


def widening(verdicts: int, units: int, false_alarm: float = 0.05) -> tuple[float, float]:
    """(factor, level): the factor turning 95 % half-widths over ``units`` values into (1 − false_alarm/verdicts)
    half-widths (Bonferroni: ``verdicts`` interval verdicts of one scorecard then raise a false alarm together in at
    most ``false_alarm`` of the runs), and that level. (1, 0.95) with fewer than 2 verdicts or units."""
    if verdicts < 2 or units < 2:
        return 1.0, 0.95
    from scipy import stats

    level = 1.0 - false_alarm / verdicts
    return float(stats.t.ppf(0.5 + level / 2, units - 1) / stats.t.ppf(0.975, units - 1)), level
