"""``greedy``: width min(d, l) = m, the paper's scheme (GMGM §2); blocked only when no sampled server is idle."""
from __future__ import annotations

from typing import Any

from msjgym.core.jit import njit
from msjgym.systems.loss.contract import GMGM, LossPolicy, block_if_none_idle, width_d_if_d_idle


@njit
def width_greedy(m, d, s, b, pmf):
    return m


def _greedy(m: int, d: int, rng: Any) -> int:
    return m


GREEDY = LossPolicy(name="greedy", summary="loss systems: use min(d, idle sampled) servers, block if none (GMGM §2)",
                    source=f"{GMGM} §2", rule=_greedy, width_kernel=width_greedy,
                    block_probability=block_if_none_idle, full_width_probability=width_d_if_d_idle)
