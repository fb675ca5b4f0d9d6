"""jiq: an idle server if there is one (from the exact idle set), else a uniformly random server (Hellemans,
Kielanski & Van Houdt §2).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.core.rng import below
from msjgym.systems.dispatch.contract import HKV, P_N, DispatchPolicy
from msjgym.systems.dispatch.state import S_NIDLE


@njit
def choose_jiq(st, pr, b, now):
    """An idle server if there is one (uniformly from the idle set), else a uniformly random server."""
    m = st.si[S_NIDLE]
    if m > 0:
        return st.idl[below(st.rng, b, m)]
    return below(st.rng, b, pr.ints[P_N])


JIQ_POLICY = DispatchPolicy(
    name="jiq", summary="an idle server if there is one, else a random server", source=f"{HKV} §2", choose=choose_jiq,
    information="idle-queue",
    not_expressible="falls back to a uniformly random server (see random) and draws idle servers from the idle set")
