"""``fixed-width``: exactly d servers or block (a rigid multiserver job; for comparison, not in GMGM)."""
from __future__ import annotations

from typing import Any

from msjgym.core.jit import njit
from msjgym.systems.loss.contract import LossPolicy, width_d_if_d_idle


@njit
def width_fixed(m, d, s, b, pmf):
    return d if m == d else 0


@njit
def block_if_fewer_than_d(pmf, b, d):
    """Blocked unless the sample shows d idle servers: 1 − P(m = d)."""
    return 1.0 - pmf[b, d]


def _fixed_width(m: int, d: int, rng: Any) -> int:
    return d if m == d else 0


FIXED_WIDTH = LossPolicy(name="fixed-width",
                         summary="loss systems: exactly d servers or block (rigid jobs; comparison)",
                         source="msjgym (comparison baseline)", rule=_fixed_width, width_kernel=width_fixed,
                         block_probability=block_if_fewer_than_d, full_width_probability=width_d_if_d_idle)
