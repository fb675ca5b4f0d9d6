"""Users' runtime estimates for a trace that has none: the model of Tsafrir, Etsion & Feitelson.

Source: D. Tsafrir, Y. Etsion and D. G. Feitelson, "Modeling user runtime estimates", JSSPP 2005 (LNCS 3834),
§4–5, with the parameters of the authors' reference generator (``est_model``, as distributed with the model). What
the paper found in four logs (SDSC SP2, CTC SP2, KTH SP2, SDSC Blue Horizon) and what the model reproduces:

* **modality**: users pick their estimate from a few round values; the 20 most popular estimates (the *head*) hold
  ``HEAD_PERCENT`` = 89 % of the jobs, and the number of distinct estimates grows with the number of jobs
  (:data:`BIN_COUNT_POINTS`, interpolated linearly);
* **the maximum is the most popular**: the queue's limit (``max_estimate``) is the estimate of the largest share of
  the jobs (popularity rank 1);
* **head sizes**: the popularity-rank-r estimate of the head (r = 2..20) holds a·e^(b·r) + c percent of the jobs
  (:data:`HEAD_SIZE`); rank 1 holds what is left of the head's 89 %;
* **head values**: the maximum, the 15 values common to the four logs that lie below it (:data:`JOINT_VALUES`:
  5, 10, 15, 20, 30 min, 1, 2, 3, 4, 5, 6, 8, 10, 12, 18 h), completed to 20 with round multiples counted down from
  the maximum (:data:`ROUND_STEPS`: 200 h, 100 h, 50 h, 10 h, 5 h, 2 h, 1 h, 20 min, 10 min, 5 min);
* **which value gets which popularity**: the four logs' table of popularity rank by time rank
  (:data:`TIME_RANK_TO_POPULARITY`); the model draws a mapping from it (the maximum gets rank 1; a popularity rank
  is forced once the time rank passes the last row at which any log used it; otherwise the lower of two ranks drawn
  from the ranks the logs used up to this time rank);
* **tail**: the other estimates (popularity rank 21, 22, ...) hold a·r^b percent (:data:`TAIL_SIZE`), normalised
  to the remaining 11 %; their values follow y = (α−1)x/(α−x) (x the time rank over the tail's size, y the estimate
  over the maximum, α = 1 + 12.1039·K^−0.6026 for K estimates), rounded to whole minutes (shifted by ±30, ±20, ±10 s
  when that value is taken); sizes and values are matched at random;
* **estimates never undershoot**: jobs, longest first, each take an estimate drawn uniformly from the remaining
  estimates that are at least their run time.

Simplifications (docs/modelling-choices.md#user-estimates): the model's user-supplied bins are reduced to one
optional parameter, the fraction of jobs at the maximum (``max_fraction``; the other head sizes are rescaled so the
head keeps its 89 %); the percentages become job counts by largest remainders (the reference generator rounds with a
floor of one job per estimate, then evens the total out biggest bins first); when the head has fewer than 20 values
(a maximum below about 2 h) the popularity ranks drawn are those of the values present; with no tail (fewer than
about 200 jobs) the head's percentages are scaled to 100 %; a job longer than every remaining estimate gets the
maximum (the reference generator stops with an error). Jobs drawing from the same set of eligible estimates take
them as one multivariate hypergeometric draw, in random order, which is the same law as one at a time.

Everything is in seconds (SWF time). The draws use their own generator, seeded by the caller: the job stream (arrival
times, sizes, run times) is the same with or without estimates.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MINUTE = 60
HOUR = 3600
HEAD = 20
"""The head: the 20 most popular estimates."""
HEAD_PERCENT = 89.0
"""Percent of the jobs whose estimate is one of the head's 20 values."""
HEAD_SIZE = (14.0491, -0.177531, 0.462513)
"""Percent of jobs of the head's popularity rank r = 2..20: a·e^(b·r) + c."""
TAIL_SIZE = (795.6, -2.267)
"""Percent of jobs of the tail's popularity rank r >= 21: a·r^b (then normalised to 100 − HEAD_PERCENT)."""
TAIL_SHAPE = (12.1039, -0.6026)
"""α = 1 + p·K^q of the tail's values y = (α−1)x/(α−x), K the number of estimates."""
TAIL_SHIFTS = (0, 30, -30, 20, -20, 10, -10)
"""Seconds added, in this order, to a tail value that collides with one already chosen."""
BIN_COUNT_POINTS = ((0, 0), (20, 10), (200, 20), (1000, 35), (10_000, 90), (70_000, 340), (250_000, 565))
"""(jobs, distinct estimates): the number of estimates, interpolated linearly (565 beyond 250,000 jobs)."""
JOINT_VALUES = tuple(m * MINUTE for m in (5, 15, 10, 20, 30)) + tuple(h * HOUR for h in (1, 2, 3, 4, 5, 6, 8, 10, 12,
                                                                                         18))
"""The 15 head values common to the four logs (seconds)."""
ROUND_STEPS = tuple(h * HOUR for h in (200, 100, 50, 10, 5, 2, 1)) + tuple(m * MINUTE for m in (20, 10, 5))
"""Multiples of these, counted down from the maximum, complete the head to 20 values (seconds)."""
TIME_RANK_TO_POPULARITY = (
    (3, 1, 1, 1), (1, 3, 4, 6), (4, 4, 10, 5), (17, 2, 14, 3), (13, 12, 20, 7), (7, 9, 2, 2), (8, 8, 3, 18),
    (18, 18, 7, 19), (2, 6, 12, 4), (6, 7, 6, 11), (16, 11, 19, 20), (10, 20, 5, 9), (5, 16, 18, 10),
    (15, 5, 16, 14), (14, 14, 9, 13), (19, 13, 17, 16), (11, 10, 15, 15), (12, 15, 13, 17), (9, 17, 8, 8),
    (20, 19, 11, 12))
"""Row t: the popularity rank of the head's time-rank-t value (t = 0 the maximum, then the others in increasing
order) in SDSC SP2, CTC SP2, KTH SP2 and SDSC Blue Horizon (the paper's table of the four logs)."""
MIN_MAX_ESTIMATE = HOUR
"""The model's maximum estimate is at least an hour (as in the reference generator)."""


@dataclass(frozen=True)
class TsafrirModel:
    """The estimate model's parameters (module docstring).

    Attributes:
        seed: seed of the model's own random generator.
        max_estimate: the queue's limit in seconds, the largest (and most popular) estimate; None: the longest run
            time rounded up to a whole hour (at least an hour).
        max_fraction: the fraction of jobs whose estimate is the maximum, in (0, 0.89); None: the model's
            (:func:`default_max_fraction`).
    """

    seed: int = 1
    max_estimate: float | None = None
    max_fraction: float | None = None

    def __str__(self) -> str:
        parts = [f"seed {self.seed}"]
        if self.max_estimate is not None:
            parts.append(f"max {self.max_estimate:g} s")
        if self.max_fraction is not None:
            parts.append(f"{self.max_fraction:g} of jobs at the max")
        return f"Tsafrir-Etsion-Feitelson model ({', '.join(parts)})"


def default_max_fraction() -> float:
    """The model's fraction of jobs at the maximum: HEAD_PERCENT − Σ_{r=2..20} (a·e^(b·r) + c), over 100."""
    a, b, c = HEAD_SIZE
    return (HEAD_PERCENT - sum(a * math.exp(b * r) + c for r in range(2, HEAD + 1))) / 100.0


def bin_count(jobs: int) -> int:
    """The number of distinct estimates for ``jobs`` jobs (:data:`BIN_COUNT_POINTS`)."""
    xs, ys = zip(*BIN_COUNT_POINTS)
    return int(round(float(np.interp(jobs, xs, ys))))


def head_values(max_estimate: int) -> list[int]:
    """The head's values in seconds: the maximum first, then the others in increasing order (module docstring)."""
    values = [max_estimate] + [v for v in JOINT_VALUES if v < max_estimate]
    for step in ROUND_STEPS:
        v = (max_estimate // step) * step
        while v > 0 and len(values) < HEAD:
            if v not in values:
                values.append(v)
            v -= step
    return values[:1] + sorted(values[1:])


def head_percents(count: int, max_fraction: float | None) -> np.ndarray:
    """Percent of jobs by popularity rank 1..count of the head (module docstring)."""
    a, b, c = HEAD_SIZE
    rest = np.array([a * math.exp(b * r) + c for r in range(2, count + 1)])
    if max_fraction is None:
        top = HEAD_PERCENT - rest.sum()
    else:
        top = 100.0 * max_fraction
        rest = rest * (HEAD_PERCENT - top) / rest.sum() if rest.size else rest
    return np.concatenate(([top], np.sort(rest)[::-1]))


def popularity_ranks(count: int, rng: np.random.Generator) -> list[int]:
    """A popularity rank (1-based) for each of the head's ``count`` values in time-rank order (module docstring)."""
    table = [[r for r in row if r <= count] for row in TIME_RANK_TO_POPULARITY]
    last_row = {}
    for t, row in enumerate(table):
        for r in row:
            last_row[r] = t
    chosen: set[int] = set()
    pool: list[int] = []
    ranks = []
    for t in range(count):
        pool.extend(r for r in table[t] if r not in chosen)
        if t == 0:
            rank = 1
        else:
            due = [r for r in range(1, count + 1) if r not in chosen and last_row.get(r, count) <= t]
            if due:
                rank = due[0]
            else:
                free = [r for r in pool if r not in chosen] or [r for r in range(1, count + 1) if r not in chosen]
                rank = min(free[rng.integers(len(free))], free[rng.integers(len(free))])
        ranks.append(rank)
        chosen.add(rank)
        pool = [r for r in pool if r != rank]
    return ranks


def tail_values(count: int, bins: int, max_estimate: int, taken: set[int]) -> list[int]:
    """Up to ``count`` tail values in seconds, increasing (module docstring), none of them in ``taken``."""
    p, q = TAIL_SHAPE
    alpha = 1.0 + p * bins ** q
    out: list[int] = []
    used = set(taken)
    for i in range(1, count + 1):
        x = i / count
        sec = int(round(((alpha - 1.0) * x / (alpha - x)) * max_estimate / MINUTE) * MINUTE)
        for shift in TAIL_SHIFTS:
            s = sec + shift
            if s not in used and 0 < s < max_estimate:
                out.append(s)
                used.add(s)
                break
    return sorted(out)


def distribution(jobs: int, max_estimate: int, max_fraction: float | None, rng: np.random.Generator
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The estimates' histogram: (values in seconds, increasing; number of jobs of each), summing to ``jobs``."""
    head = head_values(max_estimate)
    sizes = head_percents(len(head), max_fraction)
    ranks = popularity_ranks(len(head), rng)
    percent = {v: sizes[r - 1] for v, r in zip(head, ranks)}
    bins = bin_count(jobs)
    tail = tail_values(max(0, bins - len(head)), bins, max_estimate, set(head))
    if tail:
        a, b = TAIL_SIZE
        share = a * np.arange(HEAD + 1, HEAD + 1 + len(tail), dtype=np.float64) ** b
        share *= (100.0 - HEAD_PERCENT) / share.sum()
        percent.update(zip(rng.permutation(tail).tolist(), rng.permutation(share).tolist()))
    values = np.array(sorted(percent), dtype=np.int64)
    weight = np.array([percent[v] for v in values])
    exact = weight / weight.sum() * jobs
    counts = np.floor(exact).astype(np.int64)
    short = jobs - int(counts.sum())
    counts[np.argsort(-(exact - counts), kind="stable")[:short]] += 1  # largest remainders
    return values, counts


def draw_estimates(runtime: np.ndarray, model: TsafrirModel, rng: np.random.Generator | None = None,
                   what: str = "estimate") -> np.ndarray:
    """Each job's estimate in seconds (>= its run time), drawn from the model for these run times (seconds).

    ``rng`` (default: ``numpy.random.default_rng(model.seed)``) is the model's own generator. Raises ValueError
    (naming ``what``) if ``max_estimate`` is below an hour or below the longest run time.
    """
    runtime = np.asarray(runtime, dtype=np.float64)
    rng = np.random.default_rng(model.seed) if rng is None else rng
    longest = float(runtime.max()) if runtime.size else 0.0
    if model.max_estimate is None:
        top = max(MIN_MAX_ESTIMATE, int(math.ceil(longest / HOUR)) * HOUR)
    else:
        top = model.max_estimate
        if not (math.isfinite(top) and top >= MIN_MAX_ESTIMATE and float(top).is_integer()):
            raise ValueError(f"{what}.max = {top!r}: must be a whole number of seconds >= {MIN_MAX_ESTIMATE}")
        if top < longest:
            raise ValueError(f"{what}.max = {top:g}: below the longest run time, {longest:g} s (an estimate is never "
                             "below the run time)")
        top = int(top)
    values, counts = distribution(int(runtime.size), top, model.max_fraction, rng)
    out = np.full(runtime.size, float(top))
    order = np.argsort(-runtime, kind="stable")  # longest first
    eligible = np.searchsorted(values, runtime[order], side="left")  # first value >= the run time
    remaining = counts.copy()
    cuts = np.flatnonzero(np.diff(eligible)) + 1  # eligible is non-increasing: jobs with the same one draw together
    for group, first in zip(np.split(order, cuts), eligible[np.r_[0, cuts]] if order.size else []):
        pool = remaining[first:]
        take = min(group.size, int(pool.sum()))
        if take:
            drawn = rng.multivariate_hypergeometric(pool, take)
            remaining[first:] -= drawn
            out[group[:take]] = rng.permutation(np.repeat(values[first:], drawn).astype(np.float64))
    return out
