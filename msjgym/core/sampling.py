"""The compiled service-time sampler: one draw of an encoded law per call, inside the event loops.

A law is encoded by :meth:`msjgym.core.distributions.Distribution.encode` as an integer kind code (below) and a
float64 parameter block ``data[start:]``; :func:`msjgym.core.distributions.encode_all` packs several laws into one
array. All randomness comes from :mod:`msjgym.core.rng`, so draws are reproducible per stream.

Parameter blocks (``n`` = number of branches, phases or values, stored as a float; ``cum`` = cumulative
probabilities whose last positive entry is exactly 1.0):

=============  ================================================================
kind           block
=============  ================================================================
EXP            mean
ERLANG         k, phase mean (1 / per-phase rate)
DET            value
UNIFORM        low, high - low
HYPEREXP       n, cum[n], branch mean[n]
HYPERERLANG    n, cum[n], k[n], phase mean[n]
PH             n, initial cum[n], mean holding time[n], jump cum[n, n + 1] row-major (column n = absorption)
LOGNORMAL      mu, sigma
BPARETO        low, 1 - (low / high)^alpha, -1 / alpha
EMPIRICAL      n, values[n]
=============  ================================================================
"""
from __future__ import annotations

import math

from msjgym.core.jit import njit
from msjgym.core.rng import below, exponential, normal, uniform

EXP = 0
ERLANG = 1
DET = 2
UNIFORM = 3
HYPEREXP = 4
HYPERERLANG = 5
PH = 6
LOGNORMAL = 7
BPARETO = 8
EMPIRICAL = 9

_ERLANG_CHUNK = 16  # product of <= 16 uniforms in (0, 1] is >= 2^-848: no underflow before the log


@njit(inline="always")
def pick(data, off, n, s, b):
    """Index j of the first ``data[off + j] > U`` among the ``n`` cumulative probabilities at ``data[off:]``."""
    u = uniform(s, b)
    for j in range(n - 1):
        if u < data[off + j]:
            return j
    return n - 1


@njit(inline="always")
def erlang(k, scale, s, b):
    """Sum of ``k`` exponentials of mean ``scale``: -log of products of uniforms, one log per 16 phases."""
    total = 0.0
    prod = 1.0
    for i in range(k):
        prod *= 1.0 - uniform(s, b)
        if i % _ERLANG_CHUNK == _ERLANG_CHUNK - 1:
            total -= math.log(prod)
            prod = 1.0
    return scale * (total - math.log(prod))


@njit(inline="always")
def _phase_type(data, start, s, b):
    n = int(data[start])
    hold = start + 1 + n
    jumps = hold + n
    i = pick(data, start + 1, n, s, b)
    t = 0.0
    while True:
        t += data[hold + i] * exponential(s, b)
        i = pick(data, jumps + i * (n + 1), n + 1, s, b)
        if i == n:
            return t


@njit(inline="always")
def sample(kind, data, start, s, b):
    """One draw of the law of kind ``kind`` encoded at ``data[start:]``, from stream ``b`` of state ``s``.

    Returns NaN for an unknown kind (never happens for blocks made by ``encode``).
    """
    if kind == EXP:
        return data[start] * exponential(s, b)
    if kind == ERLANG:
        return erlang(int(data[start]), data[start + 1], s, b)
    if kind == DET:
        return data[start]
    if kind == UNIFORM:
        return data[start] + data[start + 1] * uniform(s, b)
    if kind == HYPEREXP:
        n = int(data[start])
        j = pick(data, start + 1, n, s, b)
        return data[start + 1 + n + j] * exponential(s, b)
    if kind == HYPERERLANG:
        n = int(data[start])
        j = pick(data, start + 1, n, s, b)
        return erlang(int(data[start + 1 + n + j]), data[start + 1 + 2 * n + j], s, b)
    if kind == PH:
        return _phase_type(data, start, s, b)
    if kind == LOGNORMAL:
        return math.exp(data[start] + data[start + 1] * normal(s, b))
    if kind == BPARETO:
        return data[start] * (1.0 - uniform(s, b) * data[start + 1]) ** data[start + 2]
    if kind == EMPIRICAL:
        return data[start + 1 + below(s, b, int(data[start]))]
    return math.nan
