"""round-robin: servers 0, 1, ..., N-1, 0, ... in turn (a comparison baseline). Its pointer is the one cell of its
own area, ``st.own[0]`` (zeroed at every reset).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.dispatch.contract import P_N, DispatchPolicy

POINTER = 0
"""``st.own[POINTER]``: the next server."""


@njit
def choose_round_robin(st, pr, b, now):
    """Servers 0, 1, ..., N-1, 0, ... in turn."""
    n = pr.ints[P_N]
    i = st.own[POINTER]
    st.own[POINTER] = i + 1 if i + 1 < n else 0
    return i


ROUND_ROBIN_POLICY = DispatchPolicy(
    name="round-robin", summary="servers 0, 1, ..., N-1, 0, ... in turn", source="msjgym (comparison baseline)",
    choose=choose_round_robin, own_ints=1, not_expressible="needs server identities; the observations are exchangeable summaries")
