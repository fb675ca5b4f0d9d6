"""MaxWeight (preemptive): serve the packing that maximises Σ_v (jobs served with need v) × (jobs present with need v).

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis", §7.3
(MaxWeight as simulated there, re-solved at every arrival and completion; throughput-optimal). Choices the paper leaves
open (docs/modelling-choices.md#finite-skip-maxweight): within a need the oldest jobs are served; among packings of
equal weight the one using more servers wins, and remaining ties follow the dynamic program's fixed order
(deterministic).
"""
from __future__ import annotations

from dataclasses import dataclass

from msjgym.core.jit import njit
from msjgym.systems.msj.state import P_GROUPS, P_K, P_SERVERS, apply_targets
from msjgym.systems.msj.model import MSJModel
from .base import Policy
from .common import group_count, split_group, clear_targets

KERNEL_ID = 9


@njit
def schedule(st, pr, b):
    """Solve the bounded knapsack max Σ c_v N_v s.t. Σ c_v v <= n, c_v <= N_v by dynamic programming.

    The objective is encoded as (weight)·(n+1) + (servers used), so ties in weight go to the fuller packing.
    Cost O(G · n²/v_min) per event.
    """
    K = pr.ints[P_K]
    G = pr.ints[P_GROUPS]
    n = pr.ints[P_SERVERS]
    W = n + 1
    sc = st.scratch
    dp = 3 * K  # sc[b, dp + g*W + cap]: best encoded objective with groups < g and capacity cap
    choice = dp + (G + 1) * W  # sc[b, choice + g*W + cap]: jobs of group g-1 in that optimum
    for cap in range(W):
        sc[b, dp + cap] = 0
    for g in range(1, G + 1):
        v = pr.grp_need[g - 1]
        count = group_count(st, pr, b, g - 1)
        unit = count * W + v
        for cap in range(W):
            best = sc[b, dp + (g - 1) * W + cap]
            best_c = 0
            for c in range(1, min(count, cap // v) + 1):
                value = sc[b, dp + (g - 1) * W + cap - c * v] + c * unit
                if value > best:
                    best = value
                    best_c = c
            sc[b, dp + g * W + cap] = best
            sc[b, choice + g * W + cap] = best_c
    clear_targets(st, pr, b)
    cap = n
    for g in range(G, 0, -1):
        c = sc[b, choice + g * W + cap]
        split_group(st, pr, b, g - 1, c)
        cap -= c * pr.grp_need[g - 1]
    apply_targets(st, pr, b)


@dataclass(frozen=True)
class _MaxWeight(Policy):
    def scratch_size(self, model: MSJModel) -> int:
        groups = len(set(int(m) for m in model.needs))
        return 2 * (groups + 1) * (model.servers + 1)


MAXWEIGHT = _MaxWeight(
    name="maxweight",
    summary="MaxWeight (preemptive): serve the packing maximising Σ served×present per need (knapsack per event)",
    preemptive=True,
    kernel_id=KERNEL_ID,
    source="Grosof, Harchol-Balter & Scheller-Wolf, finite-skip §7.3 (after Maguluri et al.)",
)
