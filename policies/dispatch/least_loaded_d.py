"""least-loaded-d: the least remaining work among d sampled servers (with per-server speeds: the least time to
drain it), d messages per arrival (Hellemans, Kielanski & Van Houdt §2).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.dispatch.contract import (
    D, F_SPEEDS, HKV, P_D, P_N, DispatchPolicy, count_messages, sample_servers)
from msjgym.systems.dispatch.state import V_HEAD, W_CT, W_PEND


@njit(inline="always")
def _least_loaded_of_sample(st, pr, b, n, d, now):
    """The server with the least remaining work among d sampled, in time units: the waiting work / the server's speed
    (1 unless per-server speeds are given: then the time its queue takes to drain) + the residual of the job in
    service."""
    sample_servers(st, b, n, d)
    best = -1
    wb = 0.0
    for j in range(d):
        i = st.perm[j]
        w = st.srvf[i, W_PEND] / pr.floats[F_SPEEDS + i]
        if st.srv[i, V_HEAD] >= 0:
            w += st.srvf[i, W_CT] - now
        if best < 0 or w < wb:
            best = i
            wb = w
    return best


@njit
def choose_least_loaded_d(st, pr, b, now):
    """The least remaining work among d sampled servers (d messages per arrival)."""
    d = pr.ints[P_D]
    count_messages(st, d)
    return _least_loaded_of_sample(st, pr, b, pr.ints[P_N], d, now)


LEAST_LOADED_D_POLICY = DispatchPolicy(
    name="least-loaded-d", summary="least remaining work among d sampled servers (d messages per arrival)",
    source=f"{HKV} §2", params=(D,), choose=choose_least_loaded_d, reads_sizes=True,
    not_expressible="needs the remaining work of the sampled servers; the observation shows queue lengths")
