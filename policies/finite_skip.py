"""Policies of the finite-skip systems (heterogeneous M/G/k, LPS, threshold parallelism, MSJ as a rate model).

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis" (§§4.2, 5.2, 6.3,
7.2–7.3). Every policy is one branch of the compiled :func:`allocate`, called by the event loop of
:mod:`msjgym.systems.finite_skip.simulate` after every arrival and completion. It sees the jobs in arrival order (their class,
and for heterogeneous servers the server each holds) — never sizes or ages — and writes each job's service rate as a
fraction of the system's capacity (rates sum to at most 1). The agent form of every policy, written separately in
plain Python, is :mod:`msjgym.policies.finite_skip_agents` (twin test: ``tests/test_finite_skip_agents.py``).

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

from msjgym.core.jit import njit
from msjgym.core.rng import below

# systems
HET = 0
LPS = 1
THRESHOLD = 2
MSJ = 3
SYSTEM_NAMES = {HET: "heterogeneous M/G/k", LPS: "LPS(k)", THRESHOLD: "threshold parallelism", MSJ: "multiserver-job"}

# policy kernel ids
FSF = 0
FSF_MINMIG = 1
FSF_NP = 2
SSF = 3
SSF_NP = 4
RANDOM = 5
LPS_K = 10
TP_FCFS = 20
TP_IF = 21
TP_EF = 22
SF_EXP = 30
SF_DIV = 31
MSJ_FCFS = 32
MSJ_PFF = 33
MSJ_MSF = 34
MSJ_LSF = 35


@dataclass(frozen=True)
class FiniteSkipPolicy:
    """A built-in policy of a finite-skip system.

    Attributes:
        name: command-line name; system: the system code it runs on (HET, LPS, THRESHOLD, MSJ);
        kernel_id: its branch of :func:`allocate`; preemptive: may pause or move a job in service;
        wcfs: the paper proves it work-conserving finite-skip (Cor. 3.8 bounds apply);
        summary: one line; source: paper and section.
    """

    name: str
    system: int
    kernel_id: int
    preemptive: bool
    wcfs: bool
    summary: str
    source: str


_GHS = "Grosof, Harchol-Balter & Scheller-Wolf, finite-skip"
FINITE_SKIP_POLICIES: dict[str, FiniteSkipPolicy] = {p.name: p for p in (
    FiniteSkipPolicy("fsf", HET, FSF, True, True, "preemptive fastest-server-first, i-th oldest on i-th fastest",
                     f"{_GHS} §4.2, Fig. 2"),
    FiniteSkipPolicy("fsf-minmig", HET, FSF_MINMIG, True, True,
                     "preemptive fastest-server-first, minimal migration",
                     f"{_GHS} §4.2 (docs/modelling-choices.md#finite-skip-fsf-placement)"),
    FiniteSkipPolicy("fsf-np", HET, FSF_NP, False, True, "non-preemptive fastest-server-first", f"{_GHS} §4.2"),
    FiniteSkipPolicy("ssf", HET, SSF, True, True, "preemptive slowest-server-first, i-th oldest on i-th slowest",
                     f"{_GHS} §4.2"),
    FiniteSkipPolicy("ssf-np", HET, SSF_NP, False, True, "non-preemptive slowest-server-first", f"{_GHS} §4.2"),
    FiniteSkipPolicy("random", HET, RANDOM, False, True, "non-preemptive uniformly random idle server",
                     f"{_GHS} §4.2"),
    FiniteSkipPolicy("lps", LPS, LPS_K, True, True, "limited processor sharing: the k oldest share the capacity",
                     f"{_GHS} §5.2"),
    FiniteSkipPolicy("tp-fcfs", THRESHOLD, TP_FCFS, False, True,
                     "FCFS: each job in arrival order gets min(P, free servers)", f"{_GHS} §6.2"),
    FiniteSkipPolicy("inelastic-first", THRESHOLD, TP_IF, True, False,
                     "preemptive priority to small thresholds (IF of Berg et al. when P ∈ {1, k})", f"{_GHS} §6.3"),
    FiniteSkipPolicy("elastic-first", THRESHOLD, TP_EF, True, False,
                     "preemptive priority to large thresholds (EF of Berg et al. when P ∈ {1, k})", f"{_GHS} §6.3"),
    FiniteSkipPolicy("server-filling", MSJ, SF_EXP, True, True, "ServerFilling, exponential setting",
                     f"{_GHS} §7.2.3, App. B.1"),
    FiniteSkipPolicy("server-filling-divisible", MSJ, SF_DIV, True, True, "ServerFilling, divisible setting",
                     f"{_GHS} App. B.2"),
    FiniteSkipPolicy("fcfs", MSJ, MSJ_FCFS, False, False, "MSJ FCFS (head-of-line blocking)", f"{_GHS} §7.3"),
    FiniteSkipPolicy("preemptive-first-fit", MSJ, MSJ_PFF, True, False, "preemptive First Fit (backfilling)",
                     f"{_GHS} §7.3"),
    FiniteSkipPolicy("msf", MSJ, MSJ_MSF, True, False, "Most Servers First", f"{_GHS} §7.3"),
    FiniteSkipPolicy("lsf", MSJ, MSJ_LSF, True, False, "Least Servers First", f"{_GHS} §7.3"),
)}


# ---------------------------------------------------------------- heterogeneous servers
@njit
def _het(pid, n, srv, speeds, k, taken, rates, rng):
    """Assign servers (index 0 = fastest; ``speeds`` descending) and write rates = the speed of each job's server."""
    m = min(n, k)
    if pid == FSF or pid == SSF:
        for j in range(n):
            srv[j] = -1
        for i in range(m):
            srv[i] = i if pid == FSF else k - 1 - i
    else:
        for s in range(k):
            taken[s] = 0
        for j in range(n):
            if srv[j] >= 0:
                taken[srv[j]] = 1
        for j in range(m):  # the oldest min(n, k) jobs are in service (FCFS order, no idling)
            if srv[j] >= 0:
                continue
            if pid == FSF_NP or pid == FSF_MINMIG:
                s = 0
                while taken[s]:
                    s += 1
            elif pid == SSF_NP:
                s = k - 1
                while taken[s]:
                    s -= 1
            else:  # RANDOM: the r-th idle server
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
            srv[j] = s
            taken[s] = 1
        if pid == FSF_MINMIG:  # an idle server faster than a busy one takes the job of the slowest busy server
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


# ---------------------------------------------------------------- entry point
@njit
def allocate(pid, n, cls, prm, srv, speeds, k, levels, taken, rates, rng):
    """Write the service rate (fraction of capacity) of each of the ``n`` jobs, listed in arrival order.

    Args:
        pid: the policy's kernel id. cls[n]: each job's class. prm[K]: per class, the threshold P (threshold
        parallelism) or need v (MSJ). srv[n]: heterogeneous servers: each job's server (-1 none; updated).
        speeds[k]: server speeds, fastest first (fractions of capacity, summing to 1). k: servers.
        levels: distinct values of prm, descending. taken[k]: scratch. rates[n]: output. rng: random streams.
    """
    for j in range(n):
        rates[j] = 0.0
    if n == 0:
        return
    if pid < LPS_K:
        _het(pid, n, srv, speeds, k, taken, rates, rng)
    elif pid == LPS_K:
        m = min(n, k)
        for j in range(m):
            rates[j] = 1.0 / m
    elif pid == TP_FCFS:
        free = k
        for j in range(n):
            if free == 0:
                break
            q = min(prm[cls[j]], free)
            rates[j] = q / k
            free -= q
    elif pid == TP_IF:
        _greedy(n, cls, prm, k, 1, rates, True)
    elif pid == TP_EF:
        _greedy(n, cls, prm, k, -1, rates, True)
    elif pid == SF_EXP:
        _server_filling(n, cls, prm, k, rates)
    elif pid == SF_DIV:
        _server_filling_divisible(n, cls, prm, k, rates, levels)
    elif pid == MSJ_FCFS:
        _msj_fcfs(n, cls, prm, k, rates, False)
    elif pid == MSJ_PFF:
        _msj_fcfs(n, cls, prm, k, rates, True)
    elif pid == MSJ_MSF:
        _greedy(n, cls, prm, k, -1, rates, False)
    elif pid == MSJ_LSF:
        _greedy(n, cls, prm, k, 1, rates, False)
