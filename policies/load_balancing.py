"""Dispatch policies of the large-scale load-balancing system (:mod:`msjgym.systems.dispatch.simulate`).

Each policy picks the server of an arriving job from the dispatcher's information; every choice costs O(1) or O(d)
(never O(N)) and breaks ties uniformly at random. The information models (probes, server updates, the central
server's tokens) are events of the system; here are only the decisions.

==========================  ===============================================================================
name                        rule (ties uniformly at random)
==========================  ===============================================================================
``random``                  a uniformly random server
``round-robin``             servers 0, 1, ..., N-1, 0, ... in turn
``jsq``                     a shortest queue (exact queue lengths; level buckets make it O(1))
``jsq-d``                   shortest of d servers sampled without replacement (d messages per arrival)
``least-loaded-d``          least remaining work among d sampled servers (d messages per arrival)
``jiq``                     an idle server if there is one (exact idle set), else a random server
``push``                    smallest estimate e_i (e_i += 1 on assignment); probes at rate δN set e_i = q_i
``pull``                    as push; servers update e_i = q_i at completions (prob. δ₁) and at rate δ₀ when idle
``water-filling``           batches of M tasks fill the shortest of K = (δ/λ)M sampled queues one task at a time
``resource-pooling``        a uniformly random server; a central server at rate pN removes a job from a
                            longest queue; servers run at rate 1 − p
==========================  ===============================================================================

Source: Hellemans, Kielanski & Van Houdt, "Performance of Load Balancers with Bounded Maximum Queue Length in case
of Non-Exponential Job Sizes", §2; choices the paper leaves open: docs/modelling-choices.md ("Load balancing").
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.core.rng import below, uniform
from msjgym.systems.dispatch.state import (
    NEED_LEVELS, S_MSG, S_NIDLE, S_PHASE, S_RR, S_STATUS, V_E, V_HEAD, V_POS, V_Q, W_CT, W_PEND, bucket_pick_min,
    bucket_up)

RANDOM = 0
ROUND_ROBIN = 1
JSQ = 2
JSQ_D = 3
LEAST_LOADED_D = 4
JIQ = 5
PUSH = 6
PULL = 7
WATER_FILLING = 8
RESOURCE_POOLING = 9

POLICY_IDS: dict[str, int] = {
    "random": RANDOM, "round-robin": ROUND_ROBIN, "jsq": JSQ, "jsq-d": JSQ_D, "least-loaded-d": LEAST_LOADED_D,
    "jiq": JIQ, "push": PUSH, "pull": PULL, "water-filling": WATER_FILLING, "resource-pooling": RESOURCE_POOLING,
}
"""Policy names (as the API and, later, the command line spell them) and their kernel ids."""

# params.ints fields the decisions read (the layout is owned by msjgym.systems.dispatch.kernel)
P_N = 0
P_POLICY = 1
P_D = 2
P_BATCH = 3
P_K = 4
P_LCAP = 5


@njit(inline="always")
def sample_servers(st, b, n, d):
    """perm[0:d] := d distinct servers, uniformly at random and in uniformly random order (partial Fisher-Yates)."""
    perm = st.perm
    for j in range(d):
        r = j + below(st.rng, b, n - j)
        x = perm[r]
        perm[r] = perm[j]
        perm[j] = x


@njit(inline="always")
def _shortest_of_sample(st, b, n, d):
    """A shortest queue among d sampled servers; the sample is in random order, so the first minimum is a uniformly
    random one among the tied."""
    sample_servers(st, b, n, d)
    best = st.perm[0]
    kb = st.srv[best, V_Q]
    for j in range(1, d):
        i = st.perm[j]
        k = st.srv[i, V_Q]
        if k < kb:
            best = i
            kb = k
    return best


@njit(inline="always")
def _least_loaded_of_sample(st, b, n, d, now):
    """The server with the least remaining work among d sampled (waiting work + residual of the job in service)."""
    sample_servers(st, b, n, d)
    best = -1
    wb = 0.0
    for j in range(d):
        i = st.perm[j]
        w = st.srvf[i, W_PEND]
        if st.srv[i, V_HEAD] >= 0:
            w += st.srvf[i, W_CT] - now
        if best < 0 or w < wb:
            best = i
            wb = w
    return best


@njit(inline="always")
def choose(st, pr, b, now):
    """The server of an arriving job (all policies but water filling, whose batches ``water_fill`` places).

    Push and pull also count the job in the chosen server's estimate (e_i += 1).
    """
    pol = pr.ints[P_POLICY]
    n = pr.ints[P_N]
    if pol == RANDOM or pol == RESOURCE_POOLING:
        return below(st.rng, b, n)
    if pol == PUSH or pol == PULL:
        i = bucket_pick_min(st.srv, V_E, st.eord, st.estart, uniform(st.rng, b))
        if st.srv[i, V_E] + 1 > pr.ints[P_LCAP]:
            st.si[S_STATUS] = NEED_LEVELS
        else:
            bucket_up(st.srv, V_E, V_POS, st.eord, st.estart, i)
        return i
    if pol == JSQ:
        return bucket_pick_min(st.srv, V_Q, st.qord, st.qstart, uniform(st.rng, b))
    if pol == JSQ_D:
        d = pr.ints[P_D]
        if st.si[S_PHASE] == 1:
            st.si[S_MSG] += d
        return _shortest_of_sample(st, b, n, d)
    if pol == LEAST_LOADED_D:
        d = pr.ints[P_D]
        if st.si[S_PHASE] == 1:
            st.si[S_MSG] += d
        return _least_loaded_of_sample(st, b, n, d, now)
    if pol == JIQ:
        m = st.si[S_NIDLE]
        if m > 0:
            return st.idl[below(st.rng, b, m)]
        return below(st.rng, b, n)
    if pol == ROUND_ROBIN:
        i = st.si[S_RR]
        st.si[S_RR] = i + 1 if i + 1 < n else 0
        return i
    return -1


@njit(inline="always")
def water_fill(st, pr, b):
    """Place a batch of M tasks on K sampled servers, one task at a time on a shortest sampled queue.

    Afterwards ``perm[0:K]`` are the sampled servers and ``wfl[j]`` the tasks that ``perm[j]`` receives. Computed
    in O(K + M): the tasks raise every sampled queue at or below a final level L to L, and the r remaining tasks go
    to r distinct servers drawn uniformly among those at L — exactly the law of the one-task-at-a-time process with
    uniform tie-breaking (all tasks of a batch arrive at one instant, so their order within a server is immaterial).
    """
    n = pr.ints[P_N]
    m = pr.ints[P_BATCH]
    kk = pr.ints[P_K]
    sample_servers(st, b, n, kk)
    perm = st.perm
    h = st.wfh
    qmin = st.srv[perm[0], V_Q]
    for j in range(1, kk):
        q = st.srv[perm[j], V_Q]
        if q < qmin:
            qmin = q
    for x in range(m + 1):
        h[x] = 0
    for j in range(kk):
        rel = st.srv[perm[j], V_Q] - qmin
        if rel <= m:
            h[rel] += 1
    c = 0
    used = 0
    level = 0
    while True:
        c += h[level]
        if used + c > m:
            break
        used += c
        level += 1
    r = m - used  # 0 <= r < c: tasks left after raising everything at or below ``level`` to it
    nc = 0
    for j in range(kk):
        rel = st.srv[perm[j], V_Q] - qmin
        if rel <= level:
            st.wfl[j] = level - rel
            h[nc] = j  # h now lists the sampled servers at the final level
            nc += 1
        else:
            st.wfl[j] = 0
    for x in range(r):
        y = x + below(st.rng, b, nc - x)
        j = h[y]
        h[y] = h[x]
        h[x] = j
        st.wfl[j] += 1
    if st.si[S_PHASE] == 1:
        st.si[S_MSG] += kk
