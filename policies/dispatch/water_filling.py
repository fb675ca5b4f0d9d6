"""water-filling: batches of M tasks fill the shortest of K = (δ/λ)M sampled queues, one task at a time
(Hellemans, Kielanski & Van Houdt §2, §8 Table 2; docs/modelling-choices.md#lb-water-filling). Its level histogram
is its own area (``st.own``, :func:`scratch_size` cells); the batch it places goes to the loop as ``batch[j]`` jobs on
server ``perm[j]`` (``BATCH``).
"""
from __future__ import annotations

from msjgym.core.policy_registry import Param
from msjgym.core.jit import njit
from msjgym.core.rng import below
from msjgym.systems.dispatch.contract import (
    BATCH, DELTA, HKV, P_BATCH, P_K, P_N, DispatchPolicy, count_messages, sample_servers)
from msjgym.systems.dispatch.state import V_Q


def scratch_size(model) -> int:
    """The cells of its own area: a histogram of M + 1 levels, then the indices of the K sampled servers at the
    final level."""
    return max((model.batch_size or 0) + 1, model.sample_size) + 1


@njit(inline="always")
def water_fill(st, pr, b):
    """Place a batch of M tasks on K sampled servers, one task at a time on a shortest sampled queue.

    Afterwards ``perm[0:K]`` are the sampled servers and ``batch[j]`` the tasks that ``perm[j]`` receives. Computed
    in O(K + M): the tasks raise every sampled queue at or below a final level L to L, and the r remaining tasks go
    to r distinct servers drawn uniformly among those at L — exactly the law of the one-task-at-a-time process with
    uniform tie-breaking (all tasks of a batch arrive at one instant, so their order within a server is immaterial).
    """
    n = pr.ints[P_N]
    m = pr.ints[P_BATCH]
    kk = pr.ints[P_K]
    sample_servers(st, b, n, kk)
    perm = st.perm
    h = st.own
    qmin = st.srv[perm[0], V_Q]
    for j in range(1, kk):
        q = st.srv[perm[j], V_Q]
        if q < qmin:
            qmin = q
    for x in range(m + 1):
        h[x] = 0
    for j in range(kk):
        rel = st.srv[perm[j], V_Q] - qmin
        if rel <= m:
            h[rel] += 1
    c = 0
    used = 0
    level = 0
    while True:
        c += h[level]
        if used + c > m:
            break
        used += c
        level += 1
    r = m - used  # 0 <= r < c: tasks left after raising everything at or below ``level`` to it
    nc = 0
    for j in range(kk):
        rel = st.srv[perm[j], V_Q] - qmin
        if rel <= level:
            st.batch[j] = level - rel
            h[nc] = j  # h now lists the sampled servers at the final level
            nc += 1
        else:
            st.batch[j] = 0
    for x in range(r):
        y = x + below(st.rng, b, nc - x)
        j = h[y]
        h[y] = h[x]
        h[x] = j
        st.batch[j] += 1
    count_messages(st, kk)


@njit
def choose_water_fill(st, pr, b, now):
    """Water filling: a batch of M tasks placed by :func:`water_fill` (the loop then places ``batch[j]`` jobs on
    ``perm[j]``, j < K)."""
    water_fill(st, pr, b)
    return BATCH


WATER_FILLING_POLICY = DispatchPolicy(
    name="water-filling", summary="batches of M tasks fill the shortest of K = (delta/lam)·M sampled queues",
    source=f"{HKV} §2, §8 Table 2", choose=choose_water_fill, own_ints=scratch_size, params=(
        DELTA,
        Param("batch_size", None, "tasks per batch M (the scenarios also take C: M = C·log10 N), with "
              "K = (delta/lam)·M an integer", low=1, integer=True)),
    not_expressible="places batches of M jobs at once; an environment step dispatches one job")
