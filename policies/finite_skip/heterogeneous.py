"""The heterogeneous M/G/k policies (finite-skip Fig. 2; Grosof, Harchol-Balter & Scheller-Wolf §4.2): which job
sits on which server, the servers' speeds summing to the capacity 1. Six variants of one rule, side by side: the
kernel :func:`_het` with its switches, the agent form :func:`_rates`, and the declarations.

Conventions where the paper leaves a choice (docs/modelling-choices.md, "Finite-skip systems"):
    * preemptive fastest-server-first (``fsf``): the i-th oldest job sits on the i-th fastest server (age-ordered);
      ``fsf-minmig``: a job pulled from the queue takes the freed server and, with an empty queue, the job on the
      slowest busy server moves up (minimal migration); ``ssf``: the i-th oldest job on the i-th slowest server;
    * non-preemptive rules: the oldest unassigned job takes the fastest (``fsf-np``), slowest (``ssf-np``) or a
      uniformly random (``random``) idle server and keeps it until it completes.
"""
from __future__ import annotations

import numpy as np

from msjgym.core.jit import njit
from msjgym.core.rng import below

from msjgym.systems.finite_skip.contract import GHS as _GHS
from msjgym.systems.finite_skip.contract import HET, FiniteSkipAgent, FiniteSkipPolicy

@njit
def _het(n, srv, speeds, k, taken, rates, rng, ordered, fastest, uniform, minmig):
    """Assign servers (index 0 = fastest; ``speeds`` descending) and write rates = the speed of each job's server.

    ``ordered``: preemptive, the i-th oldest job on the i-th fastest (``fastest``) or slowest server; else
    non-preemptive: a job keeps its server and the oldest unassigned jobs take the fastest (``fastest``), the slowest,
    or a uniformly random (``uniform``) idle server; ``minmig``: then the job on the slowest busy server moves to a
    faster idle one, while there is one.
    """
    m = min(n, k)
    if ordered:
        for j in range(n):
            srv[j] = -1
        for i in range(m):
            srv[i] = i if fastest else k - 1 - i
    else:
        for s in range(k):
            taken[s] = 0
        for j in range(n):
            if srv[j] >= 0:
                taken[srv[j]] = 1
        for j in range(m):  # the oldest min(n, k) jobs are in service (FCFS order, no idling)
            if srv[j] >= 0:
                continue
            if uniform:  # the r-th idle server
                idle = 0
                for q in range(k):
                    idle += 1 - taken[q]
                r = below(rng, 0, idle)
                s = 0
                while True:
                    if not taken[s]:
                        if r == 0:
                            break
                        r -= 1
                    s += 1
            elif fastest:
                s = 0
                while taken[s]:
                    s += 1
            else:
                s = k - 1
                while taken[s]:
                    s -= 1
            srv[j] = s
            taken[s] = 1
        if minmig:  # an idle server faster than a busy one takes the job of the slowest busy server
            while True:
                fast = 0
                while fast < k and taken[fast]:
                    fast += 1
                slow = k - 1
                while slow >= 0 and not taken[slow]:
                    slow -= 1
                if fast >= k or slow < 0 or fast > slow:
                    break
                for j in range(m):
                    if srv[j] == slow:
                        srv[j] = fast
                taken[fast] = 1
                taken[slow] = 0
    for j in range(n):
        rates[j] = speeds[srv[j]] if srv[j] >= 0 else 0.0


@njit
def allocate_fsf(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _het(n, srv, speeds, k, taken, rates, rng, True, True, False, False)


@njit
def allocate_fsf_minmig(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _het(n, srv, speeds, k, taken, rates, rng, False, True, False, True)


@njit
def allocate_fsf_np(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _het(n, srv, speeds, k, taken, rates, rng, False, True, False, False)


@njit
def allocate_ssf(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _het(n, srv, speeds, k, taken, rates, rng, True, False, False, False)


@njit
def allocate_ssf_np(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _het(n, srv, speeds, k, taken, rates, rng, False, False, False, False)


@njit
def allocate_random(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _het(n, srv, speeds, k, taken, rates, rng, False, False, True, False)


def _rates(agent: FiniteSkipAgent, p: list[int], srv: list[int]) -> np.ndarray:
    """The agent form of every heterogeneous policy (``agent.name`` says which); sets ``agent.last_servers``."""
    n, k, name = len(srv), agent.k, agent.name
    m = min(n, k)
    if name in ("fsf", "ssf"):
        srv = [(i if name == "fsf" else k - 1 - i) if i < m else -1 for i in range(n)]
    else:
        taken = {s for s in srv if s >= 0}
        for j in range(m):
            if srv[j] >= 0:
                continue
            idle = [s for s in range(k) if s not in taken]
            s = (idle[-1] if name == "ssf-np" else idle[0] if name in ("fsf-np", "fsf-minmig")
                 else idle[int(agent.rng.integers(len(idle)))])
            srv[j] = s
            taken.add(s)
        if name == "fsf-minmig":  # the job on the slowest busy server moves to a faster idle one
            while True:
                idle = [s for s in range(k) if s not in taken]
                if not idle or not taken or idle[0] > max(taken):
                    break
                slow = max(taken)
                srv = [idle[0] if s == slow else s for s in srv]
                taken = (taken - {slow}) | {idle[0]}
    agent.last_servers = srv
    return np.array([agent.speeds[s] if s >= 0 else 0.0 for s in srv])


_P = FiniteSkipPolicy
FSF_POLICY = _P(rates=_rates, name="fsf", system=HET, preemptive=True, wcfs=True, allocate=allocate_fsf,
                summary="preemptive fastest-server-first, i-th oldest on i-th fastest", source=f"{_GHS} §4.2, Fig. 2")
FSF_MINMIG_POLICY = _P(name="fsf-minmig", system=HET, preemptive=True, wcfs=True, allocate=allocate_fsf_minmig,
                       rates=_rates,
                       summary="preemptive fastest-server-first, minimal migration",
                       source=f"{_GHS} §4.2 (docs/modelling-choices.md#finite-skip-fsf-placement)")
FSF_NP_POLICY = _P(rates=_rates, name="fsf-np", system=HET, preemptive=False, wcfs=True, allocate=allocate_fsf_np,
                   summary="non-preemptive fastest-server-first", source=f"{_GHS} §4.2")
SSF_POLICY = _P(rates=_rates, name="ssf", system=HET, preemptive=True, wcfs=True, allocate=allocate_ssf,
                summary="preemptive slowest-server-first, i-th oldest on i-th slowest", source=f"{_GHS} §4.2")
SSF_NP_POLICY = _P(rates=_rates, name="ssf-np", system=HET, preemptive=False, wcfs=True, allocate=allocate_ssf_np,
                   summary="non-preemptive slowest-server-first", source=f"{_GHS} §4.2")
RANDOM_POLICY = _P(rates=_rates, name="random", system=HET, preemptive=False, wcfs=True, allocate=allocate_random,
                   summary="non-preemptive uniformly random idle server", source=f"{_GHS} §4.2")
