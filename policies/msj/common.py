"""Helpers shared by the built-in policies: greedy admission and per-need-group packing (compiled), and the
divisibility check of the ServerFilling variants (:func:`require_divisible`).

Per-system scratch (``st.scratch[b]``, the kernels' working area, overwritten by any kernel during its call):
entries [0, K) hold per-class target counts (read by ``msjgym.systems.msj.state.apply_targets``), [K, 2K) per-class
walk pointers, [2K, 3K) a per-class flag. What a policy keeps between events is its own state
(``msjgym.systems.msj.contract``: ``st.own_i``, ``st.own_f`` and per-job entries). Kernels index the arrays directly:
they never make array views (msjgym's kernels run without numba's reference counting, see ``msjgym.core.jit``).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.errors import PolicyError
from msjgym.systems.msj.model import MSJModel
from msjgym.systems.msj.state import (
    C_BOUND, C_HEAD, C_N, C_TAIL, J_NEXT, J_SEQ, P_K, P_SERVERS, S_BUSY, start_next)

ORDER_ARRIVAL = 0  # oldest first
ORDER_LARGEST = 1  # largest need first, then oldest
ORDER_SMALLEST = 2  # smallest need first, then oldest


@njit(inline="always")
def _prefer(order, v, s, best_v, best_s):
    if order == ORDER_LARGEST and v != best_v:
        return v > best_v
    if order == ORDER_SMALLEST and v != best_v:
        return v < best_v
    return s < best_s


@njit(inline="always")
def admit(st, pr, b, order, stop_at_misfit):
    """Start waiting jobs, best first by ``order``, while they fit (non-preemptive).

    ``stop_at_misfit``: stop at the first job that does not fit (head-of-line blocking, FCFS) instead of
    skipping it. Cost O(K) per started job.
    """
    K = pr.ints[P_K]
    n = pr.ints[P_SERVERS]
    while True:
        free = n - st.sys_i[b, S_BUSY]
        best = -1
        best_s = 0
        for c in range(K):
            j = st.cls_i[b, c, C_BOUND]
            if j < 0:
                continue
            v = pr.need[c]
            if v > free and not stop_at_misfit:
                continue
            s = st.job_i[b, j, J_SEQ]
            if best < 0 or _prefer(order, v, s, pr.need[best], best_s):
                best = c
                best_s = s
        if best < 0 or pr.need[best] > free:
            return
        start_next(st, pr, b, best)


@njit(inline="always")
def group_count(st, pr, b, g):
    """Jobs in system whose need is that of group g."""
    total = 0
    for i in range(pr.grp_ptr[g], pr.grp_ptr[g + 1]):
        total += st.cls_i[b, pr.grp_cls[i], C_N]
    return total


@njit(inline="always")
def _start_walk(st, pr, b, g):
    """Point each class of need group g at its oldest job (walk pointers ``scratch[b, K + c]``)."""
    K = pr.ints[P_K]
    for i in range(pr.grp_ptr[g], pr.grp_ptr[g + 1]):
        c = pr.grp_cls[i]
        st.scratch[b, K + c] = st.cls_i[b, c, C_HEAD]


@njit(inline="always")
def _walk_oldest(st, pr, b, g):
    """The class of group g whose walk pointer holds the oldest job (the group must not be exhausted)."""
    K = pr.ints[P_K]
    sc = st.scratch
    best = -1
    for i in range(pr.grp_ptr[g], pr.grp_ptr[g + 1]):
        c = pr.grp_cls[i]
        j = sc[b, K + c]
        if j >= 0 and (best < 0 or st.job_i[b, j, J_SEQ] < st.job_i[b, sc[b, K + best], J_SEQ]):
            best = c
    return best


@njit(inline="always")
def split_group(st, pr, b, g, count):
    """Set the targets of group g's classes so that the ``count`` oldest jobs of the group are chosen."""
    lo = pr.grp_ptr[g]
    if pr.grp_ptr[g + 1] - lo == 1:
        st.scratch[b, pr.grp_cls[lo]] = count
        return
    K = pr.ints[P_K]
    _start_walk(st, pr, b, g)
    for i in range(lo, pr.grp_ptr[g + 1]):
        st.scratch[b, pr.grp_cls[i]] = 0
    for _ in range(count):
        c = _walk_oldest(st, pr, b, g)
        st.scratch[b, c] += 1
        st.scratch[b, K + c] = st.job_i[b, st.scratch[b, K + c], J_NEXT]


@njit
def kth_oldest_seq(st, pr, b, g, k):
    """Arrival sequence number of the k-th oldest job (k >= 1) of need group g; the group must hold >= k jobs."""
    K = pr.ints[P_K]
    _start_walk(st, pr, b, g)
    seq = -1
    for _ in range(k):
        c = _walk_oldest(st, pr, b, g)
        j = st.scratch[b, K + c]
        seq = st.job_i[b, j, J_SEQ]
        st.scratch[b, K + c] = st.job_i[b, j, J_NEXT]
    return seq


@njit
def newest_seq(st, pr, b, g):
    """Arrival sequence number of the youngest job of need group g (-1 if the group is empty)."""
    seq = -1
    for i in range(pr.grp_ptr[g], pr.grp_ptr[g + 1]):
        j = st.cls_i[b, pr.grp_cls[i], C_TAIL]
        if j >= 0 and st.job_i[b, j, J_SEQ] > seq:
            seq = st.job_i[b, j, J_SEQ]
    return seq


@njit(inline="always")
def clear_targets(st, pr, b):
    """Zero the per-class target counts ``st.scratch[b, 0:K]``."""
    for c in range(pr.ints[P_K]):
        st.scratch[b, c] = 0


def require_divisible(policy: str, model: MSJModel, chain: bool,
                      instead: str | None = "server-filling-divisible") -> None:
    """Check the divisibility setting a ServerFilling variant needs, or raise a ``PolicyError`` saying why.

    ``chain=False``: every need divides the number of servers (the divisible setting).
    ``chain=True``: additionally every need divides every larger need (the exponential setting, e.g. powers of 2);
    ``instead`` names a policy to suggest when only that fails (None: no suggestion).
    """
    n = model.servers
    needs = sorted(set(int(m) for m in model.needs))
    bad = [m for m in needs if n % m]
    if bad:
        raise PolicyError(
            f"policy {policy}: every need must divide servers={n}; needs {bad} do not (needs={needs})")
    if chain:
        for i, small in enumerate(needs):
            for large in needs[i + 1:]:
                if large % small:
                    raise PolicyError(
                        f"policy {policy}: every need must divide every larger need (the exponential setting); "
                        f"{small} does not divide {large} (needs={needs})" + (f"; use {instead}" if instead else ""))
