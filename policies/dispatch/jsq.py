"""jsq: a shortest queue, from exact queue lengths kept in level buckets (O(1); Hellemans, Kielanski & Van Houdt
§2). Its agent form is :class:`~msjgym.policies.dispatch.common.LowestLevel` on the histogram observation.
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.core.rng import uniform
from msjgym.systems.dispatch.contract import HKV, DispatchPolicy
from msjgym.systems.dispatch.state import V_Q, bucket_pick_min

from .common import LowestLevel


@njit
def choose_jsq(st, pr, b, now):
    """A shortest queue, uniformly among the tied (the lowest queue-length bucket)."""
    return bucket_pick_min(st.srv, V_Q, st.qord, st.qstart, uniform(st.rng, b))


JSQ_POLICY = DispatchPolicy(name="jsq", summary="a shortest queue (exact queue lengths)", source=f"{HKV} §2",
                            choose=choose_jsq, information="queue-order", agent_class=LowestLevel,
                            agent_observation="histogram")
