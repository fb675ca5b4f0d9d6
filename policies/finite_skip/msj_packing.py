"""The other multiserver-job policies of the rate model (finite-skip Figs. 6–7; Grosof, Harchol-Balter &
Scheller-Wolf §7.3; docs/modelling-choices.md#finite-skip-packing): FCFS with head-of-line blocking, preemptive First
Fit, Most Servers First and Least Servers First, side by side: each serves jobs whose need fits, in its own order."""
from __future__ import annotations

import numpy as np

from msjgym.core.jit import njit

from msjgym.systems.finite_skip.contract import GHS as _GHS
from msjgym.systems.finite_skip.contract import MSJ, FiniteSkipAgent, FiniteSkipPolicy

from .common import greedy_allocation, pack


@njit
def _msj_fcfs(n, cls, prm, k, rates, skip):
    free = k
    for j in range(n):
        v = prm[cls[j]]
        if v <= free:
            rates[j] = v / k
            free -= v
        elif not skip:
            break


@njit
def allocate_msj_fcfs(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _msj_fcfs(n, cls, prm, k, rates, False)


@njit
def allocate_preemptive_first_fit(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _msj_fcfs(n, cls, prm, k, rates, True)


@njit
def allocate_msf(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    greedy_allocation(n, cls, prm, k, -1, rates, False)


@njit
def allocate_lsf(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    greedy_allocation(n, cls, prm, k, 1, rates, False)


def _fcfs(agent: FiniteSkipAgent, p: list[int], srv: list[int]) -> np.ndarray:
    n, k = len(p), agent.k
    rates, free = np.zeros(n), k
    for j in range(n):
        if p[j] > free:
            break
        rates[j], free = p[j] / k, free - p[j]
    return rates


def _first_fit(agent: FiniteSkipAgent, p: list[int], srv: list[int]) -> np.ndarray:
    return pack(agent.k, p, range(len(p)), len(p))


def _most_servers_first(agent: FiniteSkipAgent, p: list[int], srv: list[int]) -> np.ndarray:
    return pack(agent.k, p, sorted(range(len(p)), key=lambda j: (-p[j], j)), len(p))


def _least_servers_first(agent: FiniteSkipAgent, p: list[int], srv: list[int]) -> np.ndarray:
    return pack(agent.k, p, sorted(range(len(p)), key=lambda j: (p[j], j)), len(p))


_P = FiniteSkipPolicy
MSJ_FCFS_POLICY = _P(rates=_fcfs, name="fcfs", system=MSJ, preemptive=False, wcfs=False, allocate=allocate_msj_fcfs,
                     summary="MSJ FCFS (head-of-line blocking)", source=f"{_GHS} §7.3")
PREEMPTIVE_FIRST_FIT_POLICY = _P(rates=_first_fit, name="preemptive-first-fit", system=MSJ, preemptive=True, wcfs=False,
                                 allocate=allocate_preemptive_first_fit, summary="preemptive First Fit (backfilling)",
                                 source=f"{_GHS} §7.3")
MSF_POLICY = _P(rates=_most_servers_first, name="msf", system=MSJ, preemptive=True, wcfs=False, allocate=allocate_msf,
                summary="Most Servers First", source=f"{_GHS} §7.3")
LSF_POLICY = _P(rates=_least_servers_first, name="lsf", system=MSJ, preemptive=True, wcfs=False, allocate=allocate_lsf,
                summary="Least Servers First", source=f"{_GHS} §7.3")
