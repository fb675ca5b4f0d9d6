"""MSR (Markovian service rate), preemptive: serve configurations in a fixed cyclic frame whose time fractions come from
the capacity-region LP, switching at arrival epochs; the queue lengths never steer it.

Source: Chen, Grosof & Berg, "Improving multiresource job scheduling with Markovian service rate policies", Proc. ACM
Meas. Anal. Comput. Syst. 9(2), SIGMETRICS 2025: an MSR policy serves, at every moment, the configuration given by
the state of a Markov chain whose transitions do not depend on the queue lengths, so each class sees a Markov-modulated
service rate; the class of MSR policies is throughput-optimal (some MSR policy is stable at every load inside the
capacity region), with response-time bounds tight up to an additive constant. Why this one: it is the throughput-
optimal policy of the recent literature that needs no combinatorial solve per event (MaxWeight solves a knapsack at
every event), so it shows what the LP's mixture alone buys; beside ``maxweight`` it separates "right time fractions"
from "queue-aware choice".

The chain here (our construction; the paper's policies and their tuning for response time are not reproduced):

* the LP (:func:`msjgym.theory.multi_resource.capacity_region`) gives an optimal mixture α over at most K+1
  configurations u_i with N Σ_i α_i u_i >= θ*ρ; the frame gives configuration i n_i = ⌈α_i L⌉ of its L' = Σ n_i
  positions, L = max(64, ⌈2M/(θ* − 1)⌉) (M configurations), so its fractions n_i/L' >= α_i L/(L + M) still serve
  θ_eff ρ with θ_eff = θ*·2/(θ* + 1) > 1 inside the region (L is capped at 2^40; θ* <= 1 gives L = 64·M);
* the frame advances one position at every arrival (a Poisson clock of rate λ, independent of the queues), in smooth
  weighted round-robin order (each position adds n_i to configuration i's credit and serves the configuration of
  largest credit, which then loses L'): every configuration gets exactly n_i positions per period, spread out;
* every node serves the frame's configuration u, capped by the jobs present: node by node, min(u, jobs not yet
  placed); slots without a job of their class stay idle (the policy is not work-conserving).

Why stable inside the region (exponential sizes, Poisson arrivals): the frame position is an irreducible Markov chain
with uniform stationary law over its L' positions, moving at arrivals only; for each class k, (Q_k, position) is a
quasi-birth-death process whose service rate at levels Q_k >= N max_i u_ik does not depend on the other classes, and
Neuts' mean-drift condition λ_k < μ_k N Σ_i (n_i/L') u_ik holds since N Σ_i (n_i/L') u_ik >= θ_eff ρ_k > ρ_k.
"""
from __future__ import annotations

import math

import numpy as np

from msjgym.core.jit import njit
from msjgym.errors import PolicyError
from msjgym.systems.msj.state import C_N, P_K, P_SERVERS
from msjgym.systems.multi_resource.contract import MultiResourcePolicy, OwnState, Sizes
from msjgym.theory.multi_resource import capacity_region
from .preemptive import TARGET, serve_targets, target_ints

FRAME_MIN = 64
FRAME_MAX = 2 ** 40


def frame_table(model) -> np.ndarray:
    """The frame of ``model``: float64 (M, 1 + K), row i = (n_i positions, configuration u_i (K counts)), M <= K + 1.

    Integers stored as floats (exact below 2^53)."""
    try:
        region = capacity_region(model.capacity_array, model.nodes, model.demand, model.arrival_rates,
                                 model.mean_sizes)
    except ValueError as error:  # too many configurations for the LP
        raise PolicyError(f"policy 'msr': {error}") from None
    K = model.num_classes
    if not region.mixture:  # nothing arrives, or a class never fits: serve the first maximal configuration
        return np.concatenate([[1.0], region.configurations[0].astype(float)])[None, :]
    if len(region.mixture) > K + 1:
        raise RuntimeError(f"msr: the LP's mixture has {len(region.mixture)} configurations, more than K + 1 = {K + 1}"
                           " (not a basic solution)")
    M = len(region.mixture)
    if region.theta > 1:
        frame = min(FRAME_MAX, max(FRAME_MIN, math.ceil(2 * M / (region.theta - 1))))
    else:
        frame = FRAME_MIN * M
    return np.array([[math.ceil(frac * frame), *conf] for conf, frac in region.mixture], dtype=float)


def _ints(sizes: Sizes) -> int:
    return target_ints(sizes) + sizes.classes + 2


FRAME = OwnState(ints=_ints)
"""own_i[b]: the nodes' target counts (servers × K, :data:`policies.multi_resource.preemptive.TARGET` first), then
the configurations' credits (M <= K + 1 entries, smooth weighted round-robin), then the configuration served (an
index into the frame table)."""


@njit
def advance(st, pr, b, j):
    """One position of the frame: every credit grows by its n_i, the largest (first of equals) is served and loses
    L' = Σ n_i."""
    table = pr.pol_table
    M = table.shape[0]
    K = pr.ints[P_K]
    credit = TARGET + pr.ints[P_SERVERS] * K
    total = 0
    best = 0
    for i in range(M):
        n = np.int64(table[i, 0])
        total += n
        st.own_i[b, credit + i] += n
        if st.own_i[b, credit + i] > st.own_i[b, credit + best]:
            best = i
    st.own_i[b, credit + best] -= total
    st.own_i[b, credit + K + 1] = best


@njit
def schedule(st, pr, b):
    K = pr.ints[P_K]
    N = st.res_used.shape[1]
    row = st.own_i[b, TARGET + pr.ints[P_SERVERS] * K + K + 1]
    for k in range(K):
        left = st.cls_i[b, k, C_N]
        u = np.int64(pr.pol_table[row, 1 + k])
        for node in range(N):
            take = u if u < left else left
            st.own_i[b, TARGET + node * K + k] = take
            left -= take
    serve_targets(st, pr, b, TARGET)


MSR = MultiResourcePolicy(
    name="msr",
    summary="MSR (preemptive): configurations in a fixed frame with the capacity LP's time fractions, switched at "
            "arrivals; throughput-optimal, queue-blind",
    preemptive=True,
    source="Chen, Grosof & Berg, SIGMETRICS 2025 (Markovian service rate policies; frame from the capacity LP)",
    schedule=schedule,
    on_arrival=advance,
    state=FRAME,
    table=frame_table,
)
