"""Policies of the finite-skip systems (heterogeneous M/G/k, LPS, threshold parallelism, MSJ as a rate model).

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis" (§§4.2, 5.2, 6.3,
7.2–7.3). Every policy is one kernel here, compiled on its own on first use (for the signature
``msjgym.systems.finite_skip.simulate.ALLOCATE``, cached by this file) and called at its address by the event loop of
:mod:`msjgym.systems.finite_skip.simulate`, compiled once per machine, after every arrival and completion. It sees the jobs in arrival order (their class, and for heterogeneous servers the
server each holds) — never sizes or ages — and writes each job's service rate as a fraction of the system's capacity
(rates sum to at most 1). The agent form of every policy, written separately in plain Python, is
:mod:`msjgym.policies.finite_skip.finite_skip_agents` (twin test: ``tests/test_finite_skip_agents.py``).

Conventions where the paper leaves a choice (docs/modelling-choices.md, "Finite-skip systems"):
    * preemptive fastest-server-first (``fsf``): the i-th oldest job sits on the i-th fastest server (age-ordered);
      ``fsf-minmig``: a job pulled from the queue takes the freed server and, with an empty queue, the job on the
      slowest busy server moves up (minimal migration); ``ssf``: the i-th oldest job on the i-th slowest server;
    * non-preemptive rules: the oldest unassigned job takes the fastest (``fsf-np``), slowest (``ssf-np``) or a
      uniformly random (``random``) idle server and keeps it until it completes;
    * threshold parallelism: Inelastic-First and Elastic-First are greedy allocations in the order (P, arrival) and
      (−P, arrival): each job gets min(P, free servers); with P ∈ {1, k} this is exactly Berg et al.'s IF / EF with the
      whole elastic share to the oldest elastic job;
    * MSJ: ServerFilling (exponential and divisible settings; docs/modelling-choices.md#finite-skip-server-filling),
      FCFS, preemptive First Fit, MSF, LSF (§7.3; docs/modelling-choices.md#finite-skip-packing).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from msjgym.core.jit import njit
from msjgym.core.rng import below
from msjgym.policies import BuiltinPolicy

# systems
HET = 0
LPS = 1
THRESHOLD = 2
MSJ = 3
SYSTEM_NAMES = {HET: "heterogeneous M/G/k", LPS: "LPS(k)", THRESHOLD: "threshold parallelism", MSJ: "multiserver-job"}

# the policies the simulator and the theory treat apart, by name
FSF = "fsf"
FSF_MINMIG = "fsf-minmig"
SF_EXP = "server-filling"
SF_DIV = "server-filling-divisible"


# ---------------------------------------------------------------- heterogeneous servers
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


# ---------------------------------------------------------------- threshold parallelism and MSJ packing
@njit
def _greedy(n, cls, prm, k, order_sign, rates, partial):
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
    _greedy(m, cls, prm, k, -1, rates, False)


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
def _msj_fcfs(n, cls, prm, k, rates, skip):
    free = k
    for j in range(n):
        v = prm[cls[j]]
        if v <= free:
            rates[j] = v / k
            free -= v
        elif not skip:
            break


# ---------------------------------------------------------------- the policies' kernels
# Each writes the service rate (fraction of capacity) of each of the n >= 1 jobs, listed in arrival order, into
# rates (zeroed by the caller). Arguments: cls[n] each job's class; prm[K] per class the threshold P (threshold
# parallelism) or need v (MSJ); srv[n] heterogeneous servers: each job's server (-1 none; updated); speeds[k] server
# speeds, fastest first (fractions of capacity, summing to 1); k servers; levels the distinct values of prm,
# descending; taken[k] scratch; rng the random streams. Each is compiled on its own and called by the event loop.
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


@njit
def allocate_lps(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    m = min(n, k)
    for j in range(m):
        rates[j] = 1.0 / m


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
    _greedy(n, cls, prm, k, 1, rates, True)


@njit
def allocate_elastic_first(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _greedy(n, cls, prm, k, -1, rates, True)


@njit
def allocate_server_filling(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _server_filling(n, cls, prm, k, rates)


@njit
def allocate_server_filling_divisible(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _server_filling_divisible(n, cls, prm, k, rates, levels)


@njit
def allocate_msj_fcfs(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _msj_fcfs(n, cls, prm, k, rates, False)


@njit
def allocate_preemptive_first_fit(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _msj_fcfs(n, cls, prm, k, rates, True)


@njit
def allocate_msf(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _greedy(n, cls, prm, k, -1, rates, False)


@njit
def allocate_lsf(n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    _greedy(n, cls, prm, k, 1, rates, False)


# ---------------------------------------------------------------- declarations
@dataclass(frozen=True, kw_only=True)
class FiniteSkipPolicy(BuiltinPolicy):
    """A built-in policy of a finite-skip system.

    Attributes (beyond :class:`msjgym.api.PolicySpec`'s name, summary, preemptive, source):
        system: the system code it runs on (HET, LPS, THRESHOLD, MSJ);
        wcfs: the paper proves it work-conserving finite-skip (Cor. 3.8 bounds apply);
        allocate: its compiled kernel ``allocate(n, cls, prm, srv, speeds, k, levels, taken, rates, rng)`` (see the
            kernels above; called for n >= 1 jobs, with ``rates`` zeroed); None for a policy that is not a built-in
            (a user's agent).
    """

    family: str = "finite-skip"
    system: int
    wcfs: bool
    allocate: Any = None


_GHS = "Grosof, Harchol-Balter & Scheller-Wolf, finite-skip"
_P = FiniteSkipPolicy
FSF_POLICY = _P(name="fsf", system=HET, preemptive=True, wcfs=True, allocate=allocate_fsf,
                summary="preemptive fastest-server-first, i-th oldest on i-th fastest", source=f"{_GHS} §4.2, Fig. 2")
FSF_MINMIG_POLICY = _P(name="fsf-minmig", system=HET, preemptive=True, wcfs=True, allocate=allocate_fsf_minmig,
                       summary="preemptive fastest-server-first, minimal migration",
                       source=f"{_GHS} §4.2 (docs/modelling-choices.md#finite-skip-fsf-placement)")
FSF_NP_POLICY = _P(name="fsf-np", system=HET, preemptive=False, wcfs=True, allocate=allocate_fsf_np,
                   summary="non-preemptive fastest-server-first", source=f"{_GHS} §4.2")
SSF_POLICY = _P(name="ssf", system=HET, preemptive=True, wcfs=True, allocate=allocate_ssf,
                summary="preemptive slowest-server-first, i-th oldest on i-th slowest", source=f"{_GHS} §4.2")
SSF_NP_POLICY = _P(name="ssf-np", system=HET, preemptive=False, wcfs=True, allocate=allocate_ssf_np,
                   summary="non-preemptive slowest-server-first", source=f"{_GHS} §4.2")
RANDOM_POLICY = _P(name="random", system=HET, preemptive=False, wcfs=True, allocate=allocate_random,
                   summary="non-preemptive uniformly random idle server", source=f"{_GHS} §4.2")
LPS_K_POLICY = _P(name="lps", system=LPS, preemptive=True, wcfs=True, allocate=allocate_lps,
                  summary="limited processor sharing: the k oldest share the capacity", source=f"{_GHS} §5.2")
TP_FCFS_POLICY = _P(name="tp-fcfs", system=THRESHOLD, preemptive=False, wcfs=True, allocate=allocate_tp_fcfs,
                    summary="FCFS: each job in arrival order gets min(P, free servers)", source=f"{_GHS} §6.2")
INELASTIC_FIRST_POLICY = _P(name="inelastic-first", system=THRESHOLD, preemptive=True, wcfs=False,
                            allocate=allocate_inelastic_first,
                            summary="preemptive priority to small thresholds (IF of Berg et al. when P ∈ {1, k})",
                            source=f"{_GHS} §6.3")
ELASTIC_FIRST_POLICY = _P(name="elastic-first", system=THRESHOLD, preemptive=True, wcfs=False,
                          allocate=allocate_elastic_first,
                          summary="preemptive priority to large thresholds (EF of Berg et al. when P ∈ {1, k})",
                          source=f"{_GHS} §6.3")
SERVER_FILLING_POLICY = _P(name="server-filling", system=MSJ, preemptive=True, wcfs=True,
                           allocate=allocate_server_filling, summary="ServerFilling, exponential setting",
                           source=f"{_GHS} §7.2.3, App. B.1")
SERVER_FILLING_DIVISIBLE_POLICY = _P(name="server-filling-divisible", system=MSJ, preemptive=True, wcfs=True,
                                     allocate=allocate_server_filling_divisible,
                                     summary="ServerFilling, divisible setting", source=f"{_GHS} App. B.2")
MSJ_FCFS_POLICY = _P(name="fcfs", system=MSJ, preemptive=False, wcfs=False, allocate=allocate_msj_fcfs,
                     summary="MSJ FCFS (head-of-line blocking)", source=f"{_GHS} §7.3")
PREEMPTIVE_FIRST_FIT_POLICY = _P(name="preemptive-first-fit", system=MSJ, preemptive=True, wcfs=False,
                                 allocate=allocate_preemptive_first_fit, summary="preemptive First Fit (backfilling)",
                                 source=f"{_GHS} §7.3")
MSF_POLICY = _P(name="msf", system=MSJ, preemptive=True, wcfs=False, allocate=allocate_msf,
                summary="Most Servers First", source=f"{_GHS} §7.3")
LSF_POLICY = _P(name="lsf", system=MSJ, preemptive=True, wcfs=False, allocate=allocate_lsf,
                summary="Least Servers First", source=f"{_GHS} §7.3")
