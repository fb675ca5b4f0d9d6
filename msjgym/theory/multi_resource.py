"""Multi-resource scheduling theory: maximal configurations, the capacity (stability) region as a linear program, the
per-resource utilization, and exact small-instance values of preemptive MaxWeight.

Family-free: every function takes the arrays of the multi-resource family (no model object):

* ``capacity``: int (R,), the amount of each resource one node has (> 0; GB for memory, cores, GPUs ...);
* ``nodes``: int >= 1, identical nodes; a job runs within one node;
* ``demand``: int (K, R), what one job of class k holds of each resource while in service (>= 0, not all 0);
* ``arrival_rates``: float (K,), λ_k, jobs per unit time; ``mean_sizes``: float (K,), E[S_k], time units.

The model (Maguluri, Srikant & Ying, "Stochastic models of load balancing and scheduling in cloud computing
clusters", IEEE INFOCOM 2012; Chen, Grosof & Berg, "Improving multiresource job scheduling with Markovian
service rate policies", Proc. ACM Meas. Anal. Comput. Syst. 9(2), SIGMETRICS 2025): a *configuration* of one node
is n ∈ ℕ^K with Σ_k n_k d_k <= C componentwise (the jobs of each class the node can serve at once); it is *maximal*
when no job of any class can be added. The offered work of class k is ρ_k = λ_k E[S_k], in jobs-in-service units
(Little's law: the mean number of class-k jobs any stable policy keeps in service).

**Capacity region.** A policy can only be stable if ρ is dominated by the time-average of the configurations it
serves, so ρ must lie in the down-closure of N·conv(F), F the configurations of one node and N = ``nodes``: the
cluster's configuration set is F + F + ... + F (N terms, a Minkowski sum: each node runs its own configuration), and
conv(A + B) = conv A + conv B while P + P = 2P for a convex P, so conv(F + ... + F) = N·conv(F). Every configuration
is dominated by a maximal one and the region is down-closed, so the maximal configurations M suffice. The linear
program (:func:`capacity_region`) is

    θ* = max θ  subject to  θ ρ_k <= N Σ_{u∈M} α_u u_k  (every k with ρ_k > 0),  Σ_u α_u = 1,  α >= 0,

so θ* is the factor by which the whole arrival vector can be scaled and stay in the region; 1/θ* is the *region's
load* (< 1 inside, > 1 outside). The necessary per-resource condition max_r Σ_k ρ_k d_kr/(N C_r) < 1 (the bottleneck
bound) always holds inside, and θ* <= 1/max_r(util_r); when packing fragments (no configuration fills the bottleneck
resource) the region is strictly smaller, which :class:`CapacityRegion` reports (``packing_efficiency`` < 1).

**Which policies reach the region** (what is proved, under which assumptions):

* *MaxWeight over configurations, preemptive* — serve, at every arrival and completion, the configuration
  maximising Σ_k Q_k n_k (Q_k the class-k jobs present): throughput-optimal (stable for every ρ inside the region)
  with Poisson arrivals and exponential sizes, preemptive-resume service, when the configuration may be re-chosen at
  every event (Maguluri, Srikant & Ying 2012: the centralized MaxWeight, proved in their time-slotted model; the
  multiserver-job special case is simulated in Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for
  multiserver analysis", §7.3). Any rule whose weight is within an additive constant of MaxWeight's is
  throughput-optimal too (the same Lyapunov drift); :func:`maxweight_service` uses this for several nodes.
* *Non-preemptive MaxWeight* (re-chosen only when a node empties, or at renewal times) is not throughput-optimal in
  general; Maguluri, Srikant & Ying (2012) show that Best-Fit is not throughput-optimal and give non-preemptive
  alternatives (configurations re-chosen at refresh times) that reach any fraction of the region.
* *Psychas & Ghaderi*: "On non-preemptive VM scheduling in the cloud" (Proc. ACM Meas. Anal. Comput. Syst. 1(2),
  2017): non-preemptive, servers reset their configuration when they empty, with an r-approximate knapsack solver the
  algorithm supports a fraction rβ of the region (β < r; β < 1 for the greedy solver); "Randomized algorithms for
  scheduling multi-resource jobs in the cloud" (IEEE/ACM Trans. Netw. 26(5), 2018): randomized configuration
  sampling with throughput guarantees. Throughput-*guaranteed* (a fraction of the region), not optimal.
* *MSR policies* (Chen, Grosof & Berg 2025): the service rate of each class is driven by a Markov chain over
  configurations whose transitions do not depend on the queue lengths; the class is throughput-optimal (for ρ inside
  the region some MSR policy is stable), with response-time bounds tight up to an additive constant
  (exponential sizes, Poisson arrivals).
* *FCFS* (the head of the line waits until it fits) is not throughput-optimal: already with one resource its
  stability region is smaller than the LP's (Grosof et al., finite-skip §7; msjgym.systems.msj.theory.open_fcfs).

FCFS's own threshold (:func:`fcfs_saturated_throughput`, one node, exponential sizes): the saturated FCFS system
(the queue never empties; jobs of i.i.d. classes start in order until the head does not fit) has a completion rate
μ_sat; the open system is stable iff λ < μ_sat (the saturation rule used for multiserver jobs, Grosof & Ayhan,
"Multiserver-job response time under multilevel scaling", §3.1–3.2; its chain is msjgym.theory.saturated's, with a
vector fit). When μ_sat < λθ*, FCFS is unstable at loads the region allows.

Exact values (:func:`maxweight_ctmc`): with Poisson arrivals and exponential sizes, preemptive MaxWeight makes the
vector Q of jobs present a continuous-time Markov chain; truncated at ``truncation`` jobs per class (arrivals to a
full class are dropped), its stationary law gives the means, with the probability of the truncation boundary
reported (the error is small only when that probability is).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from msjgym.core.validation import require_count, require_positive
from msjgym.theory.saturated import NO_HEAD, SaturatedChain, stationary_distribution, time_stationary

MAX_CONFIGURATIONS = 20_000
"""Default cap on the number of maximal configurations of one node (a larger instance is refused, naming the cap)."""
SEARCH_FACTOR = 50
"""The enumeration keeps at most ``SEARCH_FACTOR × max_configurations`` partial configurations at once."""
TOLERANCE = 1e-6
"""Default relative tolerance of the region verdict: |1/θ* − 1| <= this is 'boundary' (the LP solver, HiGHS, solves
to about 1e-9 relative; a verdict this close to 1 cannot be told from simulation anyway)."""


# =====================================================================================================================
# Validation


def _int_array(name: str, value: object, ndim: int) -> np.ndarray:
    arr = np.asarray(value)
    if arr.ndim != ndim or arr.size == 0:
        raise ValueError(f"{name}: must be a non-empty {ndim}-dimensional array of integers (got shape {arr.shape})")
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind != "f" or not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValueError(f"{name}: amounts must be integers (got {arr.tolist()!r})")
    arr = arr.astype(np.int64)
    if np.any(arr < 0):
        raise ValueError(f"{name}: amounts must be >= 0 (got {arr.tolist()!r})")
    return arr


def check_machine(capacity: object, demand: object) -> tuple[np.ndarray, np.ndarray]:
    """``(capacity (R,), demand (K, R))`` as int64 arrays, or a ``ValueError`` naming the bad parameter.

    capacity: every amount an integer > 0. demand: integers >= 0, K rows of R columns, no row all zero (a class that
    holds nothing would fit without bound).
    """
    cap = _int_array("capacity", capacity, 1)
    if np.any(cap <= 0):
        raise ValueError(f"capacity: every resource's amount must be > 0 (got {cap.tolist()!r})")
    dem = _int_array("demand", demand, 2)
    if dem.shape[1] != cap.size:
        raise ValueError(f"demand: must have one column per resource, {cap.size} (got shape {dem.shape})")
    zero = np.flatnonzero(~dem.any(axis=1))
    if zero.size:
        raise ValueError(f"demand[{int(zero[0])}]: a class must demand a positive amount of some resource (all 0)")
    return cap, dem


def _check_rates(name: str, value: object, classes: int, positive: bool) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.shape != (classes,):
        raise ValueError(f"{name}: must have one entry per class, {classes} (got shape {arr.shape})")
    bad = ~np.isfinite(arr) | ((arr <= 0) if positive else (arr < 0))
    if np.any(bad):
        raise ValueError(f"{name}[{int(np.flatnonzero(bad)[0])}] = {arr[bad][0]!r}: must be finite and "
                         + ("> 0" if positive else ">= 0"))
    return arr


def offered_work(arrival_rates: object, mean_sizes: object) -> np.ndarray:
    """ρ_k = λ_k E[S_k] (K,), in jobs-in-service units: the mean number of class-k jobs in service under any stable
    policy (Little's law). λ_k >= 0 jobs per unit time, E[S_k] > 0 time units."""
    lam = _check_rates("arrival_rates", arrival_rates, np.asarray(arrival_rates).size, positive=False)
    return lam * _check_rates("mean_sizes", mean_sizes, lam.size, positive=True)


def resource_utilization(capacity: object, nodes: int, demand: object, arrival_rates: object,
                         mean_sizes: object) -> np.ndarray:
    """Offered work per resource over the cluster's capacity, Σ_k ρ_k d_kr / (N C_r) (R,), dimensionless.

    Every stable policy needs each entry < 1 (the bottleneck bound: a necessary condition only; see
    :func:`capacity_region` for the exact region)."""
    cap, dem = check_machine(capacity, demand)
    n = require_count("nodes", nodes)
    rho = _check_rates("arrival_rates", arrival_rates, dem.shape[0], positive=False) * _check_rates(
        "mean_sizes", mean_sizes, dem.shape[0], positive=True)
    return (rho @ dem) / (n * cap)


# =====================================================================================================================
# Maximal configurations


def fits(demand: np.ndarray, free: np.ndarray) -> np.ndarray:
    """(K,) bool: can one more job of each class start in a node with ``free`` resources left (R,)?"""
    return np.all(demand <= free, axis=1)


def _enumerate(cap: np.ndarray, dem: np.ndarray, limit: np.ndarray | None, width_cap: int | None,
               every: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Every feasible n <= limit (K,) with its last class at its largest (``every``: at any count), in decreasing
    lexicographic order: (rows (P, K), what each leaves free (P, R)). Each class's count runs from its largest feasible
    value (at most ``limit[k]``) down to 0; the last class takes its largest (fewer would leave room for one more of
    it)."""
    K = dem.shape[0]
    prefix = np.zeros((1, 0), dtype=np.int64)
    free = cap[None, :].copy()
    for k in range(K):
        d = dem[k]
        positive = d > 0
        top = np.min(free[:, positive] // d[positive], axis=1)  # the most class-k jobs each prefix still fits
        if limit is not None:
            top = np.minimum(top, limit[k])
        if k == K - 1 and not every:
            counts = top
            rows = np.arange(prefix.shape[0])
        else:
            width = top + 1
            total = int(width.sum())
            if width_cap is not None and total > width_cap:
                raise ValueError(f"max_configurations = {width_cap // SEARCH_FACTOR}: the enumeration of this node's "
                                 f"configurations needs more than {width_cap} partial configurations; raise "
                                 "max_configurations or use coarser demands")
            rows = np.repeat(np.arange(prefix.shape[0]), width)
            start = np.repeat(np.cumsum(width) - width, width)
            counts = top[rows] - (np.arange(total) - start)  # largest first
        prefix = np.column_stack([prefix[rows], counts])
        free = free[rows] - counts[:, None] * d[None, :]
    return prefix, free


def maximal_configurations(capacity: object, demand: object,
                           max_configurations: int = MAX_CONFIGURATIONS) -> np.ndarray:
    """The maximal configurations of one node: int64 (M, K), rows in decreasing lexicographic order.

    A configuration n ∈ ℕ^K has Σ_k n_k d_k <= C componentwise; it is maximal when no class fits in what is left.
    Classes are enumerated in order, each count from its largest feasible value down to 0, the last class always
    at its largest (else one more would fit), then the non-maximal vectors are dropped.

    Raises:
        ValueError: bad capacity/demand (:func:`check_machine`), or more than ``max_configurations`` maximal
            configurations (or a search wider than ``SEARCH_FACTOR`` times it), naming ``max_configurations``.
    """
    cap, dem = check_machine(capacity, demand)
    cap_m = require_count("max_configurations", max_configurations)
    prefix, free = _enumerate(cap, dem, None, SEARCH_FACTOR * cap_m)
    maximal = ~np.any(np.all(dem[None, :, :] <= free[:, None, :], axis=2), axis=1)
    out = prefix[maximal]
    if out.shape[0] > cap_m:
        raise ValueError(f"max_configurations = {cap_m}: this node has {out.shape[0]} maximal configurations; raise "
                         "max_configurations or use coarser demands")
    return np.ascontiguousarray(out)


# =====================================================================================================================
# The capacity region


@dataclass(frozen=True)
class CapacityRegion:
    """The capacity-region LP's answer for one arrival vector.

    Attributes:
        theta: θ*, the largest factor by which the arrival rates can be scaled and stay in the region (inf when
            nothing arrives; 0 when a class with work never fits in a node).
        region_load: 1/θ*, the fraction of the region in use (< 1 inside, > 1 outside; dimensionless).
        verdict: 'inside' (region_load < 1 − tolerance), 'outside' (> 1 + tolerance) or 'boundary'.
        tolerance: the relative tolerance of the verdict.
        work: ρ (K,), offered work per class, jobs-in-service units.
        utilization: (R,) offered work per resource over the cluster's capacity.
        bottleneck: index of the most utilized resource; bottleneck_bound: its utilization (max_r util_r), which
            must be < 1 for any policy (the per-resource necessary condition).
        packing_efficiency: θ*·bottleneck_bound in [0, 1]: the bottleneck utilization at the region's boundary for
            this mix of classes (1: packing loses nothing; < 1: the region is strictly smaller than the bottleneck
            bound, because configurations fragment the bottleneck resource).
        configurations: the node's maximal configurations (M, K) the LP used.
        mixture: ((configuration (K,) tuple, fraction α_u), ...) with α_u > 0: an optimal time-sharing of one node
            that serves θ*·ρ / N; sorted by decreasing fraction.
    """

    theta: float
    region_load: float
    verdict: str
    tolerance: float
    work: np.ndarray
    utilization: np.ndarray
    bottleneck: int
    bottleneck_bound: float
    packing_efficiency: float
    configurations: np.ndarray
    mixture: tuple[tuple[tuple[int, ...], float], ...]

    @property
    def inside(self) -> bool:
        return self.verdict == "inside"

    @property
    def fragmented(self) -> bool:
        """Is the region strictly smaller than the bottleneck bound for this mix (beyond the tolerance)?"""
        return self.packing_efficiency < 1 - self.tolerance

    def describe(self) -> str:
        mix = ", ".join(f"{frac:.3g}×{list(conf)}" for conf, frac in self.mixture[:4])
        more = f" (+{len(self.mixture) - 4} more)" if len(self.mixture) > 4 else ""
        return (f"{self.verdict}: region load 1/θ* = {self.region_load:.6g} (θ* = {self.theta:.6g}); bottleneck "
                f"resource {self.bottleneck} at {self.bottleneck_bound:.4g}, packing efficiency "
                f"{self.packing_efficiency:.4g}; mixture {mix}{more}")


def capacity_region(capacity: object, nodes: int, demand: object, arrival_rates: object, mean_sizes: object,
                    tolerance: float = TOLERANCE, max_configurations: int = MAX_CONFIGURATIONS) -> CapacityRegion:
    """Is the offered work inside the capacity region, and by how much? The LP of the module docstring (scipy HiGHS).

    Solved with ρ scaled so that its bottleneck utilization is 1 (so the LP's optimum is the packing efficiency, a
    number in [0, 1], well scaled whatever the units), then θ* = efficiency / bottleneck utilization.

    Args:
        capacity: one node's capacity (R,), integers > 0.
        nodes: identical nodes, >= 1.
        demand: the classes' demands (K, R), integers >= 0.
        arrival_rates: λ_k (K,), jobs per unit time.
        mean_sizes: E[S_k] (K,), time units.
        tolerance: relative tolerance of the verdict, in (0, 0.1).
        max_configurations: cap on the node's maximal configurations (:func:`maximal_configurations`).
    """
    cap, dem = check_machine(capacity, demand)
    n = require_count("nodes", nodes)
    tol = require_positive("tolerance", tolerance)
    if tol >= 0.1:
        raise ValueError(f"tolerance = {tol!r}: must be in (0, 0.1)")
    K = dem.shape[0]
    rho = _check_rates("arrival_rates", arrival_rates, K, positive=False) * _check_rates(
        "mean_sizes", mean_sizes, K, positive=True)
    util = (rho @ dem) / (n * cap)
    bottleneck = int(np.argmax(util))
    bound = float(util[bottleneck])
    configs = maximal_configurations(cap, dem, max_configurations)
    if bound == 0.0:  # nothing arrives
        return CapacityRegion(math.inf, 0.0, "inside", tol, rho, util, bottleneck, 0.0, 1.0, configs, ())
    active = np.flatnonzero(rho > 0)
    scaled = rho / bound  # bottleneck utilization 1
    M = configs.shape[0]
    if not np.all(configs[:, active].any(axis=0)):  # a class with work never fits in a node
        return CapacityRegion(0.0, math.inf, "outside", tol, rho, util, bottleneck, bound, 0.0, configs, ())
    # variables (α_1..α_M, t); maximise t s.t. t·scaled_k − N Σ_u α_u u_k <= 0, Σ α = 1
    c = np.zeros(M + 1)
    c[-1] = -1.0
    a_ub = np.column_stack([-n * configs[:, active].T.astype(float), scaled[active]])
    a_eq = np.append(np.ones(M), 0.0)[None, :]
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(active.size), A_eq=a_eq, b_eq=[1.0],
                  bounds=[(0, None)] * (M + 1), method="highs")
    if res.status != 0:
        raise RuntimeError(f"the capacity-region LP failed: {res.message}")
    efficiency = float(res.x[-1])
    theta = efficiency / bound
    region_load = math.inf if theta == 0 else 1.0 / theta
    verdict = "inside" if region_load < 1 - tol else "outside" if region_load > 1 + tol else "boundary"
    alpha = np.clip(res.x[:-1], 0.0, None)
    order = np.argsort(-alpha, kind="stable")
    mixture = tuple((tuple(int(x) for x in configs[i]), float(alpha[i])) for i in order if alpha[i] > 1e-12)
    return CapacityRegion(theta, region_load, verdict, tol, rho, util, bottleneck, bound, min(efficiency, 1.0),
                          configs, mixture)


# =====================================================================================================================
# Preemptive MaxWeight: its service vector and its exact chain


def maxweight_choice(weights: np.ndarray, left: np.ndarray, capacity: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """The jobs of each class (K,) preemptive MaxWeight serves on one empty node: the n <= ``left`` that fits and
    maximises Σ_k weights_k n_k, the first such n in decreasing lexicographic order (the tie rule of the compiled
    policy ``policies/multi_resource/maxweight.py``, which walks the same order).

    Args:
        weights: (K,) ints >= 0, the jobs of each class present (the queue lengths Q).
        left: (K,) ints >= 0, the jobs of each class not yet placed on another node.
        capacity: one node's capacity (R,), checked by :func:`check_machine`.
        demand: the classes' demands (K, R).
    """
    cap, dem = check_machine(capacity, demand)
    rows, _ = _enumerate(cap, dem, np.asarray(left, dtype=np.int64), None)
    return rows[int(np.argmax(rows @ np.asarray(weights, dtype=np.int64)))]


def maxweight_service(counts: np.ndarray, capacity: object, demand: object, nodes: int) -> np.ndarray:
    """The jobs of each class preemptive MaxWeight serves (K,) on ``nodes`` identical nodes with Q = ``counts``
    jobs present: node by node, :func:`maxweight_choice` among the jobs not yet placed (weights Q, fixed for all
    nodes).

    With one node this is MaxWeight exactly (its maximiser over all feasible n <= Q, the weight of the best maximal
    configuration u, Σ_k Q_k min(u_k, Q_k)). With several it is within an additive constant of the cluster's
    MaxWeight (the unrestricted per-node maximiser u* is available to every node except for classes with
    Q_k < N u*_k, whose weight is below N u*_k²), which keeps it throughput-optimal (Maguluri, Srikant & Ying 2012,
    the drift argument needs the weight only within a constant).
    """
    return maxweight_services(np.asarray(counts, dtype=np.int64)[None, :], capacity, demand, nodes)[0]


def maxweight_services(counts: np.ndarray, capacity: object, demand: object, nodes: int) -> np.ndarray:
    """:func:`maxweight_service` of many states at once: ``counts`` (S, K) → (S, K).

    The first maximiser in decreasing lexicographic order among *all* feasible n <= the jobs left is the one
    :func:`maxweight_choice` walks to (a maximiser has its last class at its largest: one more of it would add weight),
    so every node's choice is a masked argmax over the node's feasible vectors, in that order.
    """
    cap, dem = check_machine(capacity, demand)
    q = np.asarray(counts, dtype=np.int64)
    feasible, _ = _enumerate(cap, dem, None, None, every=True)  # (F, K), decreasing lexicographic order
    weights = q @ feasible.T  # (S, F): Σ_k Q_k n_k, fixed for every node
    left = q.copy()
    served = np.zeros_like(q)
    for _ in range(require_count("nodes", nodes)):
        allowed = np.all(feasible[None, :, :] <= left[:, None, :], axis=2)
        take = feasible[np.argmax(np.where(allowed, weights, -1), axis=1)]  # the zero vector is always allowed
        served += take
        left -= take
        if not left.any():
            break
    return served


@dataclass(frozen=True)
class ChainValues:
    """Exact (up to truncation) stationary values of preemptive MaxWeight with exponential sizes.

    Attributes:
        number_in_system: E[Q_k] per class (K,) and ``total`` Σ_k E[Q_k]: jobs.
        response_time: E[T_k] = E[Q_k]/λ_k per class (Little's law; NaN for λ_k = 0), time units; ``mean_response``
            the arrival-weighted mean.
        busy: E[jobs in service] per class (K,) (equals ρ_k up to the truncation's lost arrivals).
        boundary_probability: P(some class at the truncation level): the truncation error is negligible only when
            this is (arrivals lost at rate ≈ λ_k times it).
        truncation: jobs per class kept; states: the chain's size.
    """

    number_in_system: np.ndarray
    total: float
    response_time: np.ndarray
    mean_response: float
    busy: np.ndarray
    boundary_probability: float
    truncation: int
    states: int


MAX_CHAIN_STATES = 200_000
"""Largest truncated chain :func:`maxweight_ctmc` builds."""


def maxweight_ctmc(capacity: object, nodes: int, demand: object, arrival_rates: object, mean_sizes: object,
                   truncation: int, max_states: int = MAX_CHAIN_STATES) -> ChainValues:
    """Stationary means of preemptive MaxWeight (:func:`maxweight_service`) with Poisson arrivals and exponential
    sizes of means ``mean_sizes``, the chain of jobs present truncated at ``truncation`` per class. [exact up to the
    truncation, whose boundary probability is reported]

    Raises:
        ValueError: bad arrays; the load outside the capacity region (no stationary law to approximate); a chain of
            more than ``max_states`` states (naming ``truncation``).
    """
    cap, dem = check_machine(capacity, demand)
    n = require_count("nodes", nodes)
    K = dem.shape[0]
    lam = _check_rates("arrival_rates", arrival_rates, K, positive=False)
    mu = 1.0 / _check_rates("mean_sizes", mean_sizes, K, positive=True)
    b = require_count("truncation", truncation)
    size = (b + 1) ** K
    if size > require_count("max_states", max_states):
        raise ValueError(f"truncation = {b}: the chain would have (truncation + 1)^K = {size} states > max_states = "
                         f"{max_states}")
    region = capacity_region(cap, n, dem, lam, 1.0 / mu)
    if region.verdict != "inside":
        raise ValueError(f"arrival_rates: the offered work is {region.verdict} the capacity region (region load "
                         f"{region.region_load:.6g}): MaxWeight has no stationary law")
    states = np.array(list(itertools.product(range(b + 1), repeat=K)), dtype=np.int64)  # index = mixed radix
    radix = (b + 1) ** np.arange(K - 1, -1, -1)
    served = maxweight_services(states, cap, dem, n)
    rows, cols, rates = [], [], []
    for k in range(K):
        up = states[:, k] < b
        if lam[k] > 0:
            idx = np.flatnonzero(up)
            rows.append(idx), cols.append(idx + radix[k]), rates.append(np.full(idx.size, lam[k]))
        idx = np.flatnonzero(served[:, k] > 0)
        rows.append(idx), cols.append(idx - radix[k]), rates.append(served[idx, k] * mu[k])
    r, c, v = np.concatenate(rows), np.concatenate(cols), np.concatenate(rates)
    out = np.bincount(r, weights=v, minlength=size)
    uniform = float(out.max()) * 1.05
    jump = sp.csr_matrix((v / uniform, (r, c)), shape=(size, size)) + sp.diags(1.0 - out / uniform)
    pi = stationary_distribution(jump.tocsr())
    mean_q = pi @ states
    busy = pi @ served
    with np.errstate(divide="ignore", invalid="ignore"):
        resp = np.where(lam > 0, mean_q / np.where(lam > 0, lam, 1.0), np.nan)
    boundary = float(pi[np.any(states == b, axis=1)].sum())
    return ChainValues(mean_q, float(mean_q.sum()), resp, float(mean_q.sum() / lam.sum()), busy, boundary, b, size)


# =====================================================================================================================
# Saturated FCFS on one node


@dataclass(frozen=True)
class _ResourceMix:
    """The saturated FCFS system's class mix on one node with vector demands: the interface of
    ``msjgym.theory.saturated``'s chain builder (``needs`` only gives K there)."""

    needs: tuple[int, ...]
    probabilities: tuple[float, ...]
    rates: tuple[float, ...]
    capacity: np.ndarray
    demand: np.ndarray

    def fits(self, counts: tuple[int, ...], k: int) -> bool:
        return bool(np.all(np.asarray(counts) @ self.demand + self.demand[k] <= self.capacity))

    def is_arriving(self, state: tuple[tuple[int, ...], int]) -> bool:
        counts, head = state
        return head == NO_HEAD and any(self.fits(counts, k) for k in range(len(self.needs)))

    def arrival_steps(self, counts: tuple[int, ...]):
        for k, p in enumerate(self.probabilities):
            yield ((_plus(counts, k, 1), NO_HEAD) if self.fits(counts, k) else (counts, k)), p

    def completion_steps(self, counts: tuple[int, ...], head: int):
        for j, c in enumerate(counts):
            if c:
                after = _plus(counts, j, -1)
                if head != NO_HEAD and self.fits(after, head):
                    yield (_plus(after, head, 1), NO_HEAD), c * self.rates[j]
                else:
                    yield (after, head), c * self.rates[j]


def _plus(counts: tuple[int, ...], k: int, delta: int) -> tuple[int, ...]:
    return counts[:k] + (counts[k] + delta,) + counts[k + 1:]


def fcfs_saturated_throughput(capacity: object, demand: object, probabilities: object, mean_sizes: object) -> float:
    """μ_sat, jobs per unit time: the completion rate of saturated FCFS on one node with exponential sizes of means
    ``mean_sizes`` and i.i.d. classes of ``probabilities`` (> 0, summing to 1); the open FCFS system is stable iff
    λ < μ_sat. [exact] With one resource it is :func:`msjgym.theory.saturated.fcfs_stability_threshold`.

    The embedded chain of ``msjgym.theory.saturated`` (breadth-first from the empty node, its recurrent class, SuperLU),
    with "the head fits" meaning every resource. Its states are the node's feasible configurations times the blocked
    head's class: keep it to small nodes (a few thousand configurations).
    """
    cap, dem = check_machine(capacity, demand)
    K = dem.shape[0]
    p = _check_rates("probabilities", probabilities, K, positive=True)
    if abs(math.fsum(p) - 1.0) > 1e-9:
        raise ValueError(f"probabilities = {p.tolist()!r}: must sum to 1 (within 1e-9)")
    mu = 1.0 / _check_rates("mean_sizes", mean_sizes, K, positive=True)
    if not np.all(dem <= cap):
        raise ValueError("demand: a class does not fit an empty node, so saturated FCFS never serves it")
    mix = _ResourceMix((1,) * K, tuple(float(x) for x in p / p.sum()), tuple(float(x) for x in mu), cap, dem)
    chain = SaturatedChain.build(mix)
    return float(time_stationary(stationary_distribution(chain.matrix), chain.rates)[1])
