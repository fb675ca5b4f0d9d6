"""ServerFilling in the multiserver-job rate model (finite-skip Figs. 6–7; Grosof, Harchol-Balter & Scheller-Wolf
§7.2.3, App. B): the exponential setting and the divisible setting, side by side
(docs/modelling-choices.md#finite-skip-server-filling)."""
from __future__ import annotations

import numpy as np

from msjgym.core.jit import njit

from msjgym.systems.finite_skip.contract import GHS as _GHS
from msjgym.systems.finite_skip.contract import MSJ, FiniteSkipAgent, FiniteSkipPolicy

from .common import greedy_allocation, pack


@njit
def _server_filling(n, cls, prm, k, rates):
    """ServerFilling, exponential setting: among the m oldest jobs (minimal m with needs summing to >= k), place the
    largest needs first (ties by arrival)."""
    total = 0
    m = n
    for j in range(n):
        total += prm[cls[j]]
        if total >= k:
            m = j + 1
            break
    greedy_allocation(m, cls, prm, k, -1, rates, False)


@njit
def _server_filling_divisible(n, cls, prm, k, rates, levels):
    """ServerFilling, divisible setting (App. B.2): serve one need class: the fillable class whose (k/v)-th oldest
    job is oldest; else the class filling most servers (ties: the class whose newest job is oldest)."""
    best_v = -1
    best_key = 1 << 60
    for v in levels:
        want = k // v
        count = 0
        cut = -1
        for j in range(n):
            if prm[cls[j]] == v:
                count += 1
                if count == want:
                    cut = j
                    break
        if cut >= 0 and cut < best_key:
            best_key = cut
            best_v = v
    if best_v >= 0:
        left = k // best_v
        for j in range(n):
            if left > 0 and prm[cls[j]] == best_v:
                rates[j] = best_v / k
                left -= 1
        return
    best_fill = 0
    for v in levels:
        count = 0
        newest = -1
        for j in range(n):
            if prm[cls[j]] == v:
                count += 1
                newest = j
        if count and (v * count > best_fill or (v * count == best_fill and newest < best_key)):
            best_fill = v * count
            best_key = newest
            best_v = v
    for j in range(n):
        if prm[cls[j]] == best_v:
            rates[j] = best_v / k


@njit
def allocate_server_filling(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _server_filling(n, cls, prm, k, rates)


@njit
def allocate_server_filling_divisible(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _server_filling_divisible(n, cls, prm, k, rates, levels)


def _exponential(agent: FiniteSkipAgent, p: list[int], srv: list[int]) -> np.ndarray:
    """Among the m oldest jobs (minimal m with needs summing to >= k), the largest needs first (ties by arrival)."""
    n, k = len(p), agent.k
    total, m = 0, n
    for j in range(n):
        total += p[j]
        if total >= k:
            m = j + 1
            break
    return pack(k, p, sorted(range(m), key=lambda j: (-p[j], j)), n)


def _divisible(agent: FiniteSkipAgent, p: list[int], srv: list[int]) -> np.ndarray:
    """One need class: the fillable class whose (k/v)-th oldest job is oldest; else the class filling most servers
    (ties: the class whose newest job is oldest)."""
    k, n = agent.k, len(p)
    if n == 0:
        return np.zeros(0)
    lists = {v: [j for j in range(n) if p[j] == v] for v in sorted(set(p), reverse=True)}
    fill = {v: js[k // v - 1] for v, js in lists.items() if len(js) >= k // v}
    if fill:
        v = min(fill, key=lambda u: (fill[u], -u))
        served = lists[v][: k // v]
    else:
        v = min(lists, key=lambda u: (-u * len(lists[u]), lists[u][-1]))
        served = lists[v]
    rates = np.zeros(n)
    rates[served] = v / k
    return rates


_P = FiniteSkipPolicy
SERVER_FILLING_POLICY = _P(rates=_exponential, name="server-filling", system=MSJ, preemptive=True, wcfs=True,
                           allocate=allocate_server_filling, summary="ServerFilling, exponential setting",
                           source=f"{_GHS} §7.2.3, App. B.1")
SERVER_FILLING_DIVISIBLE_POLICY = _P(name="server-filling-divisible", system=MSJ, preemptive=True, wcfs=True,
                                     rates=_divisible,
                                     allocate=allocate_server_filling_divisible,
                                     summary="ServerFilling, divisible setting", source=f"{_GHS} App. B.2")
