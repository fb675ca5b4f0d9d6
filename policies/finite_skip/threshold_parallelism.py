"""Threshold parallelism (finite-skip Figs. 4a–4b; Grosof, Harchol-Balter & Scheller-Wolf §§6.2–6.3): a job of
threshold P runs on up to P of the k servers. FCFS and the two priority orders, side by side.

Inelastic-First and Elastic-First are greedy allocations in the order (P, arrival) and (−P, arrival): each job gets
min(P, free servers); with P ∈ {1, k} this is exactly Berg et al.'s IF / EF with the whole elastic share to the
oldest elastic job (docs/modelling-choices.md, "Finite-skip systems").
"""
from __future__ import annotations

import numpy as np

from msjgym.core.jit import njit

from msjgym.systems.finite_skip.contract import GHS as _GHS
from msjgym.systems.finite_skip.contract import THRESHOLD, FiniteSkipAgent, FiniteSkipPolicy

from .common import greedy_allocation, partial


@njit
def allocate_tp_fcfs(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    free = k
    for j in range(n):
        if free == 0:
            break
        q = min(prm[cls[j]], free)
        rates[j] = q / k
        free -= q


@njit
def allocate_inelastic_first(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    greedy_allocation(n, cls, prm, k, 1, rates, True)


@njit
def allocate_elastic_first(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    greedy_allocation(n, cls, prm, k, -1, rates, True)


def _fcfs(agent: FiniteSkipAgent, p: list[int], srv: list[int]) -> np.ndarray:
    return partial(agent.k, p, range(len(p)))


def _inelastic_first(agent: FiniteSkipAgent, p: list[int], srv: list[int]) -> np.ndarray:
    return partial(agent.k, p, sorted(range(len(p)), key=lambda j: (p[j], j)))


def _elastic_first(agent: FiniteSkipAgent, p: list[int], srv: list[int]) -> np.ndarray:
    return partial(agent.k, p, sorted(range(len(p)), key=lambda j: (-p[j], j)))


_P = FiniteSkipPolicy
TP_FCFS_POLICY = _P(name="tp-fcfs", system=THRESHOLD, preemptive=False, wcfs=True, allocate=allocate_tp_fcfs,
                    rates=_fcfs,
                    summary="FCFS: each job in arrival order gets min(P, free servers)", source=f"{_GHS} §6.2")
INELASTIC_FIRST_POLICY = _P(name="inelastic-first", system=THRESHOLD, preemptive=True, wcfs=False,
                            rates=_inelastic_first,
                            allocate=allocate_inelastic_first,
                            summary="preemptive priority to small thresholds (IF of Berg et al. when P ∈ {1, k})",
                            source=f"{_GHS} §6.3")
ELASTIC_FIRST_POLICY = _P(rates=_elastic_first, name="elastic-first", system=THRESHOLD, preemptive=True, wcfs=False,
                          allocate=allocate_elastic_first,
                          summary="preemptive priority to large thresholds (EF of Berg et al. when P ∈ {1, k})",
                          source=f"{_GHS} §6.3")
