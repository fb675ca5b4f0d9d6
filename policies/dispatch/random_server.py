"""random: a uniformly random server (Hellemans, Kielanski & Van Houdt §2).
"""
from __future__ import annotations

from msjgym.systems.dispatch.contract import HKV, DispatchPolicy

from .common import choose_uniform


RANDOM_POLICY = DispatchPolicy(
    name="random", summary="a uniformly random server", source=f"{HKV} §2", choose=choose_uniform,
    not_expressible="a uniformly random server needs a draw the environment does not make (a level weighted by its "
                    "count)")
