"""``random-width``: a width uniform on {1..m} (for comparison, not in GMGM; draws from the replication's stream)."""
from __future__ import annotations

import numpy as np

from msjgym.core import rng as streams
from msjgym.core.jit import njit
from msjgym.errors import PolicyError
from msjgym.systems.loss.contract import LossPolicy, block_if_none_idle


@njit
def width_uniform(m, d, s, b, pmf):
    if m == 0:
        return 0
    return 1 + streams.below(s, b, m)


@njit
def width_d_uniform(pmf, b, d):
    """A uniform width on 1..m is d only when m = d, with probability 1/d: P(m = d)/d."""
    return pmf[b, d] / d


def _random_width(m: int, d: int, rng: np.random.Generator | None) -> int:
    if m == 0:
        return 0
    if rng is None:
        raise PolicyError("random-width: needs a random generator outside the compiled kernel")
    return int(rng.integers(1, m + 1))


RANDOM_WIDTH = LossPolicy(name="random-width",
                          summary="loss systems: a width uniform on 1..min(d, idle sampled) (comparison)",
                          source="msjgym (comparison baseline)", rule=_random_width, width_kernel=width_uniform,
                          block_probability=block_if_none_idle, full_width_probability=width_d_uniform,
                          deterministic=False)
