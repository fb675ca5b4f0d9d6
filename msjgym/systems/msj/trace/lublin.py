"""The Lublin–Feitelson workload model of rigid parallel jobs: a synthetic HPC trace with no data file.

Source: U. Lublin and D. G. Feitelson, "The workload on parallel supercomputers: modeling the characteristics of
rigid jobs", Journal of Parallel and Distributed Computing 63(11):1105–1122, 2003. The model has two job types,
interactive and batch, each with its own parameters (the values fitted in the paper to the logs of the Parallel
Workloads Archive, as distributed with the authors' reference implementation of the model, ``m_lublin99.c``; the
section numbers of the paper are not cited here: it was not at hand); every job gets:

* **a size**: serial with probability ``serial_prob``; otherwise log2(size) is drawn from a *two-stage uniform*
  law (uniform on [u_low, u_med] with probability u_prob, else on [u_med, u_hi]), rounded to an integer (a
  power-of-two size) with probability ``pow2_prob`` / (1 − serial_prob) of the parallel jobs; size = round(2^x);
* **a run time**: ln(run time / s) follows a *hyper-gamma* law, Gamma(a1, b1) with probability p = pa·size + pb
  (clipped to [0, 1]), else Gamma(a2, b2) (shape, scale): the larger the job, the longer it tends to run; draws of
  ln(run time) above 12 (run times over e^12 s ≈ 45 h) are redrawn;
* **an arrival time**: ln(inter-arrival time / s) at the rush hours is Gamma(aarr·arar, barr) (redrawn above 13);
  a daily cycle of 48 half-hour buckets stretches it: bucket i (hours counted from 11:00) carries the weight
  P(i − ½ < X < i + ½) for X ~ Gamma(anum, bnum), normalised to mean 1, and an inter-arrival of T seconds spends
  T/1800 "points", each bucket costing its weight (a quiet bucket is crossed quickly). The run starts at midnight.
  Interactive and batch jobs arrive as two such streams, merged in time order.

The published parameters describe a 128-processor machine (u_hi = 7 = log2 128 for batch jobs). For a machine of P
processors the size law is shifted by log2(P / 128) (u_low stays, u_med and u_hi move), as the authors' notes on
the model advise ("set the number-of-nodes' parameters to fit your system": u_hi = log2 P, u_med about u_hi − 2.5);
a job larger than P is clipped to P (docs/modelling-choices.md#lublin-machine-size). The model gives no requested
run times (SWF field 9 is -1: estimates are the run times, unless a scenario draws them: ``estimate = "tsafrir"``,
:mod:`msjgym.systems.msj.trace.user_estimates`). Run times and arrival times are whole seconds, as in the
archive's logs (rounded down; at least 1 s).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

PUBLISHED_PROCESSORS = 128
"""The machine size the published size parameters describe."""
MAX_LOG_RUNTIME = 12.0
"""Draws of ln(run time / s) above this are redrawn (run times up to e^12 s ≈ 45 h)."""
MAX_LOG_INTERARRIVAL = 13.0
"""Draws of ln(inter-arrival time / s) above this are redrawn (≈ 5 days)."""
BUCKETS = 48
BUCKET_SECONDS = 1800.0
DAY_SHIFT = 11
"""The daily-cycle law counts hours from 11:00 (its bucket i is the half hour i − 1 after 11:00, cyclically)."""


@dataclass(frozen=True)
class JobType:
    """The model's parameters for one job type (Lublin & Feitelson 2003; the reference implementation's values).

    Size: serial_prob, pow2_prob, u_low, u_med, u_hi (log2 sizes on the 128-processor machine), u_prob.
    Run time (ln seconds, hyper-gamma): a1, b1, a2, b2 (shape, scale), pa, pb (p = pa·size + pb).
    Arrivals (ln seconds, gamma; daily cycle gamma over buckets): aarr, barr, anum, bnum, arar.
    """

    name: str
    serial_prob: float
    pow2_prob: float
    u_low: float
    u_med: float
    u_hi: float
    u_prob: float
    a1: float
    b1: float
    a2: float
    b2: float
    pa: float
    pb: float
    aarr: float
    barr: float
    anum: float
    bnum: float
    arar: float


INTERACTIVE = JobType("interactive", serial_prob=0.1541, pow2_prob=0.625, u_low=1.0, u_med=3.0, u_hi=5.5,
                      u_prob=0.705, a1=3.8351, b1=0.6605, a2=7.073, b2=0.6856, pa=-0.0118, pb=0.9156,
                      aarr=6.5510, barr=0.6621, anum=8.9186, bnum=3.6680, arar=0.9797)
BATCH = JobType("batch", serial_prob=0.2927, pow2_prob=0.6686, u_low=1.2, u_med=5.0, u_hi=7.0, u_prob=0.875,
                a1=6.57, b1=0.823, a2=639.1, b2=0.0156, pa=-0.003, pb=0.6986,
                aarr=6.0415, barr=0.8531, anum=6.1271, bnum=5.2740, arar=1.0519)
TYPES = (INTERACTIVE, BATCH)
"""Type 0 (interactive: SWF queue 0) and type 1 (batch: SWF queue 1)."""


def _bucket_weights(t: JobType) -> np.ndarray:
    """The daily cycle's 48 half-hour weights of a type, normalised to mean 1 (bucket 0: 00:00–00:30)."""
    from scipy.special import gammainc

    i = np.arange(DAY_SHIFT, DAY_SHIFT + BUCKETS, dtype=np.float64)
    mass = gammainc(t.anum, (i + 0.5) / t.bnum) - gammainc(t.anum, (i - 0.5) / t.bnum)
    weights = np.empty(BUCKETS)
    weights[(i.astype(np.int64) - 1) % BUCKETS] = mass
    return weights / weights.mean()


def _truncated_gamma(rng: np.random.Generator, shape: float, scale: float, limit: float) -> float:
    while True:
        g = rng.gamma(shape, scale)
        if g <= limit:
            return float(g)


class _Arrivals:
    """One type's arrival stream: the rush-hour inter-arrival law stretched by the daily cycle (module docstring)."""

    def __init__(self, t: JobType, rng: np.random.Generator) -> None:
        self.t, self.rng, self.weights = t, rng, _bucket_weights(t)
        self.bucket, self.points, self.remainder, self.time = 0, 0.0, 0.0, 0.0
        self.advance()

    def advance(self) -> None:
        """Move ``time`` to this stream's next arrival."""
        g = _truncated_gamma(self.rng, self.t.aarr * self.t.arar, self.t.barr, MAX_LOG_INTERARRIVAL)
        self.points += math.exp(g) / BUCKET_SECONDS
        step = 0.0
        while self.points > self.weights[self.bucket]:
            self.points -= self.weights[self.bucket]
            self.bucket = (self.bucket + 1) % BUCKETS
            step += BUCKET_SECONDS
        remainder = self.points / self.weights[self.bucket]  # the fraction of the current bucket used
        self.time += step + BUCKET_SECONDS * (remainder - self.remainder)
        self.remainder = remainder


def _size(t: JobType, rng: np.random.Generator, shift: float, processors: int) -> int:
    u = rng.random()
    if u <= t.serial_prob:
        return 1
    low = t.u_low  # on a machine below 32 processors the shift takes u_med (and u_hi) below u_low: kept at u_low
    med = max(t.u_med + shift, low)  # (docs/modelling-choices.md#lublin-machine-size)
    hi = max(t.u_hi + shift, med)
    x = rng.uniform(low, med) if rng.random() <= t.u_prob else rng.uniform(med, hi)
    if u <= t.serial_prob + t.pow2_prob:
        x = math.floor(x + 0.5)
    return int(min(max(math.floor(2.0 ** x + 0.5), 1), processors))


def _runtime(t: JobType, rng: np.random.Generator, size: int) -> int:
    p = min(max(t.pa * size + t.pb, 0.0), 1.0)
    shape, scale = (t.a1, t.b1) if rng.random() <= p else (t.a2, t.b2)
    return max(1, int(math.exp(_truncated_gamma(rng, shape, scale, MAX_LOG_RUNTIME))))


def generate(jobs: int, processors: int = 256, seed: int | np.random.SeedSequence = 1
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``jobs`` jobs of the model on a machine of ``processors`` processors, from ``seed``.

    Returns (submit times in s from the first job, sizes in processors, run times in s, types: 0 interactive,
    1 batch), in submit order. The same seed gives the same jobs on every machine (numpy's PCG64 and its gamma
    sampler).
    """
    if not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ValueError(f"jobs = {jobs!r}: must be an integer >= 1")
    if not isinstance(processors, (int, np.integer)) or processors < 1:
        raise ValueError(f"processors = {processors!r}: must be an integer >= 1")
    rng = np.random.default_rng(seed)
    shift = math.log2(processors / PUBLISHED_PROCESSORS)
    streams = [_Arrivals(t, rng) for t in TYPES]
    submit = np.empty(jobs)
    size = np.empty(jobs, dtype=np.int64)
    run = np.empty(jobs, dtype=np.int64)
    kind = np.empty(jobs, dtype=np.int64)
    for i in range(jobs):
        k = 1 if streams[1].time < streams[0].time else 0  # the type whose next job comes first
        submit[i] = streams[k].time
        streams[k].advance()
        size[i] = _size(TYPES[k], rng, shift, processors)
        run[i] = _runtime(TYPES[k], rng, int(size[i]))
        kind[i] = k
    submit = np.floor(submit - submit[0])
    return submit, size, run, kind


def swf_lines(submit: np.ndarray, size: np.ndarray, run: np.ndarray, kind: np.ndarray, processors: int,
              note: str, requested: np.ndarray | None = None) -> list[str]:
    """The jobs as Standard Workload Format lines, header first (``MaxProcs``; queue 0 interactive, 1 batch);
    ``requested``: each job's requested time in s (field 9; None: -1, unknown)."""
    lines = ["; Version: 2.2", "; Computer: synthetic (Lublin & Feitelson 2003 workload model)",
             f"; MaxJobs: {len(submit)}", f"; MaxRecords: {len(submit)}", f"; MaxProcs: {processors}",
             f"; MaxNodes: {processors}", "; Queues: 0 interactive, 1 batch", f"; Note: {note}"]
    for i in range(len(submit)):
        req = -1 if requested is None else int(requested[i])
        lines.append(f"{i + 1} {int(submit[i])} -1 {int(run[i])} {int(size[i])} -1 -1 {int(size[i])} {req} -1 1 -1 "
                     f"-1 -1 {int(kind[i])} -1 -1 -1")
    return lines
