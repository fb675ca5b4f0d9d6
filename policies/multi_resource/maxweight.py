"""MaxWeight over configurations (preemptive): at every arrival and completion, serve the jobs n (per class) that fit
and maximise Σ_k Q_k n_k, Q_k the class-k jobs present.

Sources: Maguluri, Srikant & Ying, "Stochastic models of load balancing and scheduling in cloud computing clusters",
IEEE INFOCOM 2012 (MaxWeight over a server's configurations, throughput-optimal: stable for every load inside
the capacity region, :func:`msjgym.theory.multi_resource.capacity_region`); the multiserver-job MaxWeight
(``policies/msj/maxweight.py``; Grosof, Harchol-Balter & Scheller-Wolf, finite-skip §7.3) is its one-resource case.
Throughput-optimality is proved for Poisson arrivals and exponential sizes with preempt-resume service re-chosen at
every event.

Choices the papers leave open (the theory's :func:`msjgym.theory.multi_resource.maxweight_service` follows the same
rules, so its exact chain is this kernel's):

* one node: the maximiser over every n <= Q that fits, found by walking the vectors in decreasing lexicographic order
  (each class's count from its largest down to 0, the last class at its largest); ties go to the first;
* several nodes: node by node (node 0 first), the same choice among the jobs not yet placed, weights Q fixed; this is
  within an additive constant of the cluster's MaxWeight (the module docstring of the theory says why), which keeps
  it throughput-optimal;
* which jobs: :func:`policies.multi_resource.preemptive.serve_targets` (a job in service stays on its node while its
  class's count there is not exceeded; the oldest waiting jobs start where counts are short).

Not the multiserver-job ``maxweight`` (``policies/msj/maxweight.py``) with one resource on one node: that one weighs
each *need* by its jobs present (classes of the same need are one group, its oldest jobs served) and, among packings
of equal weight, takes the one using more servers, then the fewest jobs of the smallest need; this one weighs each
class and takes the first maximiser above. With a need per class the two serve packings of the same weight in every
state and differ only in those ties (``tests/test_multi_resource_twin.py``), so their numbers differ; both are
throughput-optimal.

Cost per event: the walk visits the node's feasible vectors bounded by the jobs present (at most the configurations'
count times K), once per node unless the previous node's choice is still available (then it is the same choice).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.msj.state import C_N, P_K, P_SERVERS
from msjgym.systems.multi_resource.contract import MultiResourcePolicy, OwnState, Sizes
from .preemptive import TARGET, free_ints, serve_targets, target_ints


# Working arrays (no allocation in a kernel): st.scratch[b, 0:K] the weights Q, [K:2K] the jobs not yet placed,
# [2K:3K] the vector being walked; own_i[b, FREE + k·R + r] the amount of r left before class k; own_i[b, TARGET + ...]
# the node's counts (preemptive.TARGET).
@njit(inline="always")
def _top(st, pr, b, free, k, limit):
    """The most class-k jobs (at most ``limit``) that fit what the classes before k leave."""
    R = pr.res_cap.shape[0]
    t = limit
    for r in range(R):
        d = pr.res_demand[k, r]
        if d > 0:
            m = st.own_i[b, free + k * R + r] // d
            if m < t:
                t = m
    return t


@njit(inline="always")
def _fill(st, pr, b, free, k0):
    """Counts from class k0 on at their largest, each in what the classes before it leave."""
    K = pr.ints[P_K]
    R = pr.res_cap.shape[0]
    for k in range(k0, K):
        ck = _top(st, pr, b, free, k, st.scratch[b, K + k])
        st.scratch[b, 2 * K + k] = ck
        if k + 1 < K:
            for r in range(R):
                st.own_i[b, free + (k + 1) * R + r] = st.own_i[b, free + k * R + r] - ck * pr.res_demand[k, r]


@njit
def node_choice(st, pr, b, out, free):
    """Write at ``st.own_i[b, out:out + K]`` the first n (decreasing lexicographic order) with n_k <= the jobs not yet
    placed (scratch[K + k]) that fits one empty node and maximises Σ_k Q_k n_k (Q_k = scratch[k])."""
    K = pr.ints[P_K]
    R = pr.res_cap.shape[0]
    for r in range(R):
        st.own_i[b, free + r] = pr.res_cap[r]
    _fill(st, pr, b, free, 0)
    best = -1
    while True:
        w = 0
        for k in range(K):
            w += st.scratch[b, k] * st.scratch[b, 2 * K + k]
        if w > best:
            best = w
            for k in range(K):
                st.own_i[b, out + k] = st.scratch[b, 2 * K + k]
        k = K - 2
        while k >= 0 and st.scratch[b, 2 * K + k] == 0:
            k -= 1
        if k < 0:
            return
        ck = st.scratch[b, 2 * K + k] - 1
        st.scratch[b, 2 * K + k] = ck
        for r in range(R):
            st.own_i[b, free + (k + 1) * R + r] = st.own_i[b, free + k * R + r] - ck * pr.res_demand[k, r]
        _fill(st, pr, b, free, k + 1)


@njit
def schedule(st, pr, b):
    K = pr.ints[P_K]
    N = st.res_used.shape[1]
    free = TARGET + pr.ints[P_SERVERS] * K  # the free table follows the targets (servers × K)
    for k in range(K):
        st.scratch[b, k] = st.cls_i[b, k, C_N]
        st.scratch[b, K + k] = st.scratch[b, k]
    for i in range(N * K):
        st.own_i[b, TARGET + i] = 0
    for node in range(N):
        row = TARGET + node * K
        reuse = node > 0
        if reuse:
            for k in range(K):
                if st.own_i[b, row - K + k] > st.scratch[b, K + k]:
                    reuse = False
                    break
        if reuse:  # the previous node's choice is still available: it is still the first maximiser
            for k in range(K):
                st.own_i[b, row + k] = st.own_i[b, row - K + k]
        else:
            node_choice(st, pr, b, row, free)
        placed = False
        for k in range(K):
            st.scratch[b, K + k] -= st.own_i[b, row + k]
            if st.scratch[b, K + k] > 0:
                placed = True
        if not placed:  # every job present is placed
            break
    serve_targets(st, pr, b, TARGET)


def _ints(sizes: Sizes) -> int:
    return target_ints(sizes) + free_ints(sizes)


AREA = OwnState(ints=_ints)
"""own_i[b]: the nodes' target counts (servers × K, :data:`policies.multi_resource.preemptive.TARGET` first) and,
last, the free amounts of the walk (K × MAX_RESOURCES)."""


MAXWEIGHT = MultiResourcePolicy(
    name="maxweight",
    summary="MaxWeight (preemptive): serve the jobs that fit and maximise Σ (jobs present × served) per class, "
            "node by node",
    preemptive=True,
    source="Maguluri, Srikant & Ying, INFOCOM 2012 (MaxWeight over configurations; throughput-optimal)",
    schedule=schedule,
    state=AREA,
)
