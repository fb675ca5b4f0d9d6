"""Seeded random streams for compiled kernels: xoshiro256** with one independent stream per system.

A stream is a row of a ``uint64[B, 4]`` state array, so B systems that advance together (replications, or the
environments of a vector env) each own an independent stream. Streams are seeded from
``numpy.random.SeedSequence``: replication ``r`` of a run with seed ``s`` uses
``SeedSequence(s).spawn(R)[r]``, so no two replications share a seed and replication ``r``'s numbers do not depend
on how many replications were run.

Reference: D. Blackman and S. Vigna, "Scrambled linear pseudorandom number generators", ACM TOMS 47(4), 2021.
"""
from __future__ import annotations

import math

import numpy as np

from msjgym.core.jit import njit

_U64 = np.uint64


def seed_states(seeds: list[np.random.SeedSequence]) -> np.ndarray:
    """Return a ``uint64[len(seeds), 4]`` state array, one xoshiro256** stream per seed sequence."""
    state = np.empty((len(seeds), 4), dtype=np.uint64)
    for i, ss in enumerate(seeds):
        words = ss.generate_state(4, np.uint64)
        if not words.any():  # the all-zero state is the one invalid state of xoshiro
            words[0] = 1
        state[i] = words
    return state


def spawn_states(seed: int | None, n: int) -> tuple[np.ndarray, int]:
    """``n`` independent streams from ``SeedSequence(seed).spawn(n)``; returns (states, the entropy used)."""
    root = np.random.SeedSequence(seed)
    return seed_states(root.spawn(n)), int(root.entropy)


@njit(inline="always")
def _rotl(x, k):
    return (x << _U64(k)) | (x >> _U64(64 - k))


@njit(inline="always")
def next_u64(s, b):
    """Next 64 random bits of stream ``b`` of state array ``s`` (advances the stream)."""
    s0 = s[b, 0]
    s1 = s[b, 1]
    s2 = s[b, 2]
    s3 = s[b, 3]
    result = _rotl(s1 * _U64(5), 7) * _U64(9)
    t = s1 << _U64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    s[b, 0] = s0
    s[b, 1] = s1
    s[b, 2] = s2
    s[b, 3] = s3
    return result


@njit(inline="always")
def uniform(s, b):
    """A uniform draw on [0, 1) with 53 random bits."""
    return float(next_u64(s, b) >> _U64(11)) * (1.0 / 9007199254740992.0)


@njit(inline="always")
def exponential(s, b):
    """A standard exponential draw (mean 1), by inversion: -log(1 - U), never infinite."""
    return -math.log(1.0 - uniform(s, b))


@njit(inline="always")
def normal(s, b):
    """A standard normal draw (Marsaglia's polar method)."""
    while True:
        u = 2.0 * uniform(s, b) - 1.0
        v = 2.0 * uniform(s, b) - 1.0
        r = u * u + v * v
        if 0.0 < r < 1.0:
            return u * math.sqrt(-2.0 * math.log(r) / r)


@njit(inline="always")
def below(s, b, n):
    """A uniform integer in {0, ..., n-1} (n >= 1), as floor(U * n) with a 53-bit U (bias below n * 2^-53)."""
    return int(uniform(s, b) * n)
