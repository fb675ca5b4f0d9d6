"""Dispatch policies of the large-scale load-balancing system (:mod:`msjgym.systems.dispatch`).

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
``least-loaded-d``          least remaining work among d sampled servers (d messages per arrival; with
                            per-server speeds: the least time to drain it, work / speed)
``jiq``                     an idle server if there is one (exact idle set), else a random server
``push``                    smallest estimate e_i (e_i += 1 on assignment); probes at rate δN set e_i = q_i
``pull``                    as push; servers update e_i = q_i at completions (prob. δ₁) and at rate δ₀ when idle
``water-filling``           batches of M tasks fill the shortest of K = (δ/λ)M sampled queues one task at a time
``resource-pooling``        a uniformly random server; a central server at rate pN removes a job from a
                            longest queue; servers run at rate 1 − p
``sed``                     shortest expected delay: a server minimising (q_i + 1)/s_i (s_i: its speed; exact
                            queue lengths; an O(N) scan, for small N)
``sed-d``                   the same among d servers sampled without replacement (d messages per arrival)
==========================  ===============================================================================

With equal speeds sed is jsq (in distribution) and sed-d is jsq-d (draw for draw); they matter with per-server ``speeds``
(:func:`msjgym.systems.dispatch.model.pool_speeds`). SED: Selen, Adan, Kapodistria & van Leeuwaarden, "Steady-state
analysis of shortest expected delay routing", Queueing Systems 84(3):309–354, 2016 (two heterogeneous exponential
servers, each with its own FCFS queue: exactly sed at N = 2); its sampled version as in Gardner, Abdul Jaleel,
Wickeham & Doroudi, "Scalable load balancing in the presence of heterogeneous servers", Performance Evaluation,
January 2021 (article 102151), who compare their heterogeneity-aware power-of-d families with SED. Both checked by
title, authors and venue (publisher pages); the second paper's volume number is not checked.

Source: Hellemans, Kielanski & Van Houdt, "Performance of Load Balancers with Bounded Maximum Queue Length in case
of Non-Exponential Job Sizes", §2; choices the paper leaves open: docs/modelling-choices.md ("Load balancing").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from msjgym.api import Param
from msjgym.core.jit import njit
from msjgym.core.rng import below, uniform
from msjgym.policies import BuiltinPolicy, Choice
from msjgym.policies.dispatch.load_balancing_agents import LowestLevel, ShortestExpectedDelaySampled, ShortestSampled
from msjgym.systems.dispatch.state import (  # noqa: F401 (INFORMATION .. P_LCAP: re-exported for the policies)
    BATCH, INFO_IDLE_QUEUE, INFO_NONE, INFO_POOLING, INFO_PULL, INFO_PUSH, INFO_QUEUE_ORDER, INFORMATION, P_BATCH,
    F_SPEEDS, P_D, P_INFO, P_K, P_LCAP, P_N,
    NEED_LEVELS, S_MSG, S_NIDLE, S_PHASE, S_RR, S_STATUS, V_E, V_HEAD, V_POS, V_Q, W_CT, W_PEND, bucket_pick_min,
    bucket_up)

HKV = ("Hellemans, Kielanski & Van Houdt, 'Performance of Load Balancers with Bounded Maximum Queue Length in case "
       "of Non-Exponential Job Sizes'")


@dataclass(frozen=True, kw_only=True)
class DispatchPolicy(BuiltinPolicy):
    """A built-in dispatcher of the large-scale load-balancing system.

    Its decision is its ``choose`` kernel, a small compiled function that the family's one event loop
    (:func:`msjgym.systems.dispatch.kernel.run`) takes as an argument and calls at every arrival; it is compiled on
    first use against the loop's interface (``msjgym.systems.dispatch.kernel.CHOOSE``) and cached by its own file.
    The events the loop runs for the dispatcher's information (probes, server updates, the central server's tokens,
    the idle queue's messages) are named by ``information``. Its parameters are those of
    :class:`msjgym.systems.dispatch.model.DispatchModel` it reads (given as ``--param`` on a dispatch scenario).

    Attributes (beyond :class:`msjgym.api.PolicySpec`'s):
        choose: its compiled decision ``choose(st, pr, b, now) -> server`` (``now``: the arrival's time; the
            state and parameter records of :mod:`msjgym.systems.dispatch.kernel`); :data:`BATCH` when it placed a
            batch of jobs instead (water filling: ``perm[0:K]`` receive ``wfl[0:K]`` jobs each).
        information: the information model the event loop runs for it, one of :data:`INFORMATION`: ``none``;
            ``idle-queue`` (a message when a server becomes idle: JIQ); ``queue-order`` (the servers kept ordered
            by queue length: JSQ); ``push`` (probes at rate δN); ``pull`` (updates at completions and from idle
            servers); ``pooling`` (a central server's tokens at rate pN, servers ordered by queue length).
        agent_class: its agent form, acting on ``msjgym/Dispatch-v0`` observations of mode ``agent_observation``
            (:mod:`msjgym.policies.dispatch.load_balancing_agents`); None with ``not_expressible`` saying why no
            observation of the environment can express it.
    """

    family: str = "dispatch"
    preemptive: bool = False
    choose: Any = None
    information: str = "none"
    agent_class: type | None = None
    agent_observation: str | None = None
    not_expressible: str | None = None

    def __post_init__(self) -> None:
        if self.information not in INFORMATION:
            raise ValueError(f"dispatch policy {self.name!r}: information = {self.information!r}; must be one of "
                             f"{', '.join(INFORMATION)}")

    @property
    def information_code(self) -> int:
        """``information`` as the event loop reads it (``params.ints[P_INFO]``: its index in :data:`INFORMATION`)."""
        return INFORMATION.index(self.information)


# the information models, BATCH and the params.ints fields the decisions read: defined with the state layout (the
# event loop reads them too, and must not depend on this file: an edit here recompiles the dispatchers only)


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
def _least_loaded_of_sample(st, pr, b, n, d, now):
    """The server with the least remaining work among d sampled, in time units: the waiting work / the server's speed
    (1 unless per-server speeds are given: then the time its queue takes to drain) + the residual of the job in
    service."""
    sample_servers(st, b, n, d)
    best = -1
    wb = 0.0
    for j in range(d):
        i = st.perm[j]
        w = st.srvf[i, W_PEND] / pr.floats[F_SPEEDS + i]
        if st.srv[i, V_HEAD] >= 0:
            w += st.srvf[i, W_CT] - now
        if best < 0 or w < wb:
            best = i
            wb = w
    return best


@njit(inline="always")
def _expected_delay(st, pr, i):
    """(q_i + 1) / s_i: the expected response time of a job joining server i, in units of E[size] (exponential
    sizes, FIFO: the q_i jobs there and its own, each of mean E[size] / s_i)."""
    return (st.srv[i, V_Q] + 1) / pr.floats[F_SPEEDS + i]


# ---------------------------------------------------------------- the policies' kernels
# ``choose_*(st, pr, b, now)``: the server of an arriving job (O(1) or O(d)), called by the event loop through a
# first-class function argument (compiled on first use against ``msjgym.systems.dispatch.kernel.CHOOSE``).
@njit
def choose_uniform(st, pr, b, now):
    """random, resource-pooling: a uniformly random server."""
    return below(st.rng, b, pr.ints[P_N])


@njit
def choose_round_robin(st, pr, b, now):
    """Servers 0, 1, ..., N-1, 0, ... in turn."""
    n = pr.ints[P_N]
    i = st.si[S_RR]
    st.si[S_RR] = i + 1 if i + 1 < n else 0
    return i


@njit
def choose_jsq(st, pr, b, now):
    """A shortest queue, uniformly among the tied (the lowest queue-length bucket)."""
    return bucket_pick_min(st.srv, V_Q, st.qord, st.qstart, uniform(st.rng, b))


@njit
def choose_jsq_d(st, pr, b, now):
    """The shortest of d sampled servers (d messages per arrival)."""
    d = pr.ints[P_D]
    if st.si[S_PHASE] == 1:
        st.si[S_MSG] += d
    return _shortest_of_sample(st, b, pr.ints[P_N], d)


@njit
def choose_least_loaded_d(st, pr, b, now):
    """The least remaining work among d sampled servers (d messages per arrival)."""
    d = pr.ints[P_D]
    if st.si[S_PHASE] == 1:
        st.si[S_MSG] += d
    return _least_loaded_of_sample(st, pr, b, pr.ints[P_N], d, now)


@njit
def choose_jiq(st, pr, b, now):
    """An idle server if there is one (uniformly from the idle set), else a uniformly random server."""
    m = st.si[S_NIDLE]
    if m > 0:
        return st.idl[below(st.rng, b, m)]
    return below(st.rng, b, pr.ints[P_N])


@njit
def choose_estimate(st, pr, b, now):
    """push, pull: the smallest estimate e_i (uniformly among the tied), counting the job in it (e_i += 1)."""
    i = bucket_pick_min(st.srv, V_E, st.eord, st.estart, uniform(st.rng, b))
    if st.srv[i, V_E] + 1 > pr.ints[P_LCAP]:
        st.si[S_STATUS] = NEED_LEVELS
    else:
        bucket_up(st.srv, V_E, V_POS, st.eord, st.estart, i)
    return i


@njit
def choose_sed(st, pr, b, now):
    """Shortest expected delay: a server minimising (q_i + 1)/s_i, uniformly among the tied (reservoir sampling: a
    draw only at a tie). O(N): every server is read."""
    n = pr.ints[P_N]
    best = 0
    eb = _expected_delay(st, pr, 0)
    ties = 1
    for i in range(1, n):
        e = _expected_delay(st, pr, i)
        if e < eb:
            best, eb, ties = i, e, 1
        elif e == eb:
            ties += 1
            if below(st.rng, b, ties) == 0:
                best = i
    return best


@njit
def choose_sed_d(st, pr, b, now):
    """The least (q_i + 1)/s_i among d sampled servers, the first of the tied in the (random) sample order; d
    messages per arrival."""
    d = pr.ints[P_D]
    if st.si[S_PHASE] == 1:
        st.si[S_MSG] += d
    sample_servers(st, b, pr.ints[P_N], d)
    best = st.perm[0]
    eb = _expected_delay(st, pr, best)
    for j in range(1, d):
        i = st.perm[j]
        e = _expected_delay(st, pr, i)
        if e < eb:
            best, eb = i, e
    return best


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


@njit
def choose_water_fill(st, pr, b, now):
    """Water filling: a batch of M tasks placed by :func:`water_fill` (the loop then places ``wfl[j]`` jobs on
    ``perm[j]``, j < K)."""
    water_fill(st, pr, b)
    return BATCH


# ---------------------------------------------------------------- declarations
_D = Param("d", 2, "servers sampled per arrival, an integer in [1, servers]", low=1, integer=True)
_DELTA = Param("delta", None, "probe/update rate per server, > 0", low=0.0)

RANDOM_POLICY = DispatchPolicy(
    name="random", summary="a uniformly random server", source=f"{HKV} §2", choose=choose_uniform,
    not_expressible="a uniformly random server needs a draw the environment does not make (a level weighted by its "
                    "count)")
ROUND_ROBIN_POLICY = DispatchPolicy(
    name="round-robin", summary="servers 0, 1, ..., N-1, 0, ... in turn", source="msjgym (comparison baseline)",
    choose=choose_round_robin, not_expressible="needs server identities; the observations are exchangeable summaries")
JSQ_POLICY = DispatchPolicy(name="jsq", summary="a shortest queue (exact queue lengths)", source=f"{HKV} §2",
                            choose=choose_jsq, information="queue-order", agent_class=LowestLevel,
                            agent_observation="histogram")
JSQ_D_POLICY = DispatchPolicy(name="jsq-d", summary="shortest of d sampled servers (d messages per arrival)",
                              source=f"{HKV} §2", params=(_D,), choose=choose_jsq_d, agent_class=ShortestSampled,
                              agent_observation="sampled")
LEAST_LOADED_D_POLICY = DispatchPolicy(
    name="least-loaded-d", summary="least remaining work among d sampled servers (d messages per arrival)",
    source=f"{HKV} §2", params=(_D,), choose=choose_least_loaded_d,
    not_expressible="needs the remaining work of the sampled servers; the observation shows queue lengths")
JIQ_POLICY = DispatchPolicy(
    name="jiq", summary="an idle server if there is one, else a random server", source=f"{HKV} §2", choose=choose_jiq,
    information="idle-queue",
    not_expressible="falls back to a uniformly random server (see random) and draws idle servers from the idle set")
PUSH_POLICY = DispatchPolicy(
    name="push", summary="smallest estimate (e_i += 1 on assignment); probes at rate delta·N set e_i = q_i",
    source=f"{HKV} §2, §8 Table 1", params=(_DELTA,), choose=choose_estimate, information="push",
    agent_class=LowestLevel, agent_observation="estimates")
PULL_POLICY = DispatchPolicy(
    name="pull", summary="smallest estimate; servers update at completions (prob. delta1) and at rate delta0 when idle",
    source=f"{HKV} §2, §8 Table 3", choose=choose_estimate, information="pull", agent_class=LowestLevel,
    agent_observation="estimates",
    params=(
        _DELTA,
        Param("delta0", None, "update rate of an idle server (instead of delta: delta = lam·delta1 + (1 − "
              "lam·E[size])·delta0)", low=0.0),
        Param("delta1", 0.0, "update probability at a completion", low=0.0, high=1.0)))
WATER_FILLING_POLICY = DispatchPolicy(
    name="water-filling", summary="batches of M tasks fill the shortest of K = (delta/lam)·M sampled queues",
    source=f"{HKV} §2, §8 Table 2", choose=choose_water_fill, params=(
        _DELTA,
        Param("batch_size", None, "tasks per batch M (the scenarios also take C: M = C·log10 N), with "
              "K = (delta/lam)·M an integer", low=1, integer=True)),
    not_expressible="places batches of M jobs at once; an environment step dispatches one job")
RESOURCE_POOLING_POLICY = DispatchPolicy(
    name="resource-pooling",
    summary="a random server; a central server at rate p·N removes a job from a longest queue",
    source=f"{HKV} §2, §8 Table 4", choose=choose_uniform, information="pooling", params=(
        Param("p", None, "central server's share, in [0, 1); the servers run at rate 1 − p", low=0.0, high=1.0),
        Choice("remove", "last", "which waiting job a token removes: last (in line), next (to start), random",
               choices=("last", "next", "random"))),
    not_expressible="dispatches to a uniformly random server (see random) and adds a central server")
SED_POLICY = DispatchPolicy(
    name="sed", summary="shortest expected delay: least (q_i + 1)/speed_i over all servers (O(N) scan)",
    source="Selen, Adan, Kapodistria & van Leeuwaarden, 'Steady-state analysis of shortest expected delay routing', "
           "Queueing Systems 84(3), 2016", choose=choose_sed,
    not_expressible="scans the servers in index order with its own tie draws; the sampled observation with d = N "
                    "shows every server in random order, which is sed-d with d = N (the same rule in distribution)")
SED_D_POLICY = DispatchPolicy(
    name="sed-d", summary="least (q_i + 1)/speed_i among d sampled servers (d messages per arrival)",
    source="SED (Selen et al., Queueing Systems 2016) on d samples, as compared in Gardner, Abdul Jaleel, Wickeham & "
           "Doroudi, 'Scalable load balancing in the presence of heterogeneous servers', Performance Evaluation 2021",
    params=(_D,), choose=choose_sed_d, agent_class=ShortestExpectedDelaySampled, agent_observation="sampled")
