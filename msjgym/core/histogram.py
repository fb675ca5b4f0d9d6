"""A log-spaced histogram for streaming percentiles of positive values (response times).

Bin 0 holds values below ``LOW``, bin ``NBINS - 1`` values at or above ``HIGH``; the bins between are
``BINS_PER_DECADE`` per decade, so a percentile read from the histogram is within a relative error of
10**(1/BINS_PER_DECADE) - 1 (about 2.3 %) of the exact sample percentile.
"""
from __future__ import annotations

import math

import numpy as np

from msjgym.core.jit import njit

LOW = 1e-6
HIGH = 1e10
BINS_PER_DECADE = 100
NBINS = int(round(math.log10(HIGH / LOW) * BINS_PER_DECADE)) + 2
RELATIVE_RESOLUTION = 10 ** (1 / BINS_PER_DECADE) - 1


@njit(inline="always")
def bin_index(x):
    """The bin of value ``x`` (any float; values <= LOW go to bin 0)."""
    if x <= LOW:
        return 0
    i = 1 + int(math.log10(x / LOW) * BINS_PER_DECADE)
    return i if i < NBINS - 1 else NBINS - 1


def bin_edges() -> np.ndarray:
    """Lower edges of bins 1 .. NBINS-1 (bin i covers [edges[i-1], edges[i]))."""
    return LOW * 10.0 ** (np.arange(NBINS - 1) / BINS_PER_DECADE)


def quantile(counts: np.ndarray, q: float) -> float:
    """The q-quantile (0 < q < 1) of the values counted in ``counts`` (NaN if empty).

    Interpolates geometrically inside the bin that holds the quantile. Returns ``-inf``/``inf`` when the quantile
    falls in the underflow/overflow bin, so a value outside [LOW, HIGH) is never reported as if it were measured.
    """
    if not 0 < q < 1:
        raise ValueError(f"q = {q}: must be in (0, 1)")
    total = counts.sum()
    if total == 0:
        return float("nan")
    target = q * total
    cum = np.cumsum(counts)
    i = int(np.searchsorted(cum, target, side="left"))
    if i == 0:
        return float("-inf")
    if i == NBINS - 1:
        return float("inf")
    below = cum[i - 1]
    frac = (target - below) / counts[i]
    lo = LOW * 10.0 ** ((i - 1) / BINS_PER_DECADE)
    return float(lo * 10.0 ** (frac / BINS_PER_DECADE))


def range_warning(value: float) -> str | None:
    """Why a percentile read from the histogram is not a measurement: ``inf`` (it fell in the overflow bin, at or
    above ``HIGH``) or ``-inf`` (in the underflow bin, below ``LOW``); None for a value inside the range."""
    if value == math.inf:
        return (f"above the percentile histogram's range [{LOW:g}, {HIGH:g}) time units: at least {HIGH:g}; "
                "rescale the time unit")
    if value == -math.inf:
        return (f"below the percentile histogram's range [{LOW:g}, {HIGH:g}) time units: at most {LOW:g}; "
                "rescale the time unit")
    return None
