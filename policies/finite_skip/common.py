"""Kernels and agent-form helpers several finite-skip policy files share (threshold parallelism, ServerFilling, the
multiserver-job packings): a greedy allocation in a given order."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from msjgym.core.jit import njit


@njit
def greedy_allocation(n, cls, prm, k, order_sign, rates, partial):
    """Visit jobs by (order_sign·param, arrival) and give each min(param, free) servers (``partial``) or its whole
    param when it fits (not ``partial``: MSJ jobs need exactly their servers; a misfit is skipped)."""
    free = k
    # distinct parameter values in visiting order: repeated scans of the (short) job list
    last = -1 if order_sign > 0 else 1 << 40
    while free > 0:
        best = 1 << 40 if order_sign > 0 else -1
        for j in range(n):  # next parameter value after `last` in the visiting order
            v = prm[cls[j]]
            if order_sign > 0 and last < v < best:
                best = v
            if order_sign < 0 and best < v < last:
                best = v
        if best == 1 << 40 or best == -1:
            break
        for j in range(n):
            v = prm[cls[j]]
            if v != best or free == 0:
                continue
            if partial:
                q = min(v, free)
            elif v <= free:
                q = v
            else:
                continue
            rates[j] = q / k
            free -= q
        last = best


def partial(k: int, p: list[int], order: Iterable[int]) -> np.ndarray:
    """Agent form, threshold parallelism: in ``order``, each job gets min(P, free servers)."""
    rates, free = np.zeros(len(p)), k
    for j in order:
        q = min(p[j], free)
        rates[j], free = q / k, free - q
    return rates


def pack(k: int, p: list[int], order: Iterable[int], n: int) -> np.ndarray:
    """Agent form, multiserver jobs: in ``order``, serve each job whose need fits in the free servers (skip the
    others)."""
    rates, free = np.zeros(n), k
    for j in order:
        if p[j] <= free:
            rates[j], free = p[j] / k, free - p[j]
    return rates
