"""round-robin: servers 0, 1, ..., N-1, 0, ... in turn (a comparison baseline).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.dispatch.state import P_N, S_RR

from .base import DispatchPolicy


@njit
def choose_round_robin(st, pr, b, now):
    """Servers 0, 1, ..., N-1, 0, ... in turn."""
    n = pr.ints[P_N]
    i = st.si[S_RR]
    st.si[S_RR] = i + 1 if i + 1 < n else 0
    return i


ROUND_ROBIN_POLICY = DispatchPolicy(
    name="round-robin", summary="servers 0, 1, ..., N-1, 0, ... in turn", source="msjgym (comparison baseline)",
    choose=choose_round_robin, not_expressible="needs server identities; the observations are exchangeable summaries")
