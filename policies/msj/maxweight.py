"""MaxWeight (preemptive): serve the packing that maximises Σ_v (jobs served with need v) × (jobs present with need v).

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis", §7.3
(MaxWeight as simulated there, re-solved at every arrival and completion; throughput-optimal). Choices the paper leaves
open (docs/modelling-choices.md#finite-skip-maxweight): within a need the oldest jobs are served; among packings of
equal weight the one using more servers wins, and remaining ties follow the dynamic program's fixed order
(deterministic).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.msj.state import P_GROUPS, P_SERVERS, apply_targets
from msjgym.systems.msj.contract import OwnState, Policy, Sizes
from .agent_forms import SetAgent, SetView
from .common import group_count, split_group, clear_targets


@njit
def schedule(st, pr, b):
    """Solve the bounded knapsack max Σ c_v N_v s.t. Σ c_v v <= n, c_v <= N_v by dynamic programming.

    The objective is encoded as (weight)·(n+1) + (servers used), so ties in weight go to the fuller packing.
    Cost O(G · n²/v_min) per event.
    """
    G = pr.ints[P_GROUPS]
    n = pr.ints[P_SERVERS]
    W = n + 1
    sc = st.own_i  # the policy's own area (TABLES)
    dp = 0  # sc[b, dp + g*W + cap]: best encoded objective with groups < g and capacity cap
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


# ---------------------------------------------------------------- agent form
class MaxWeightAgent(SetAgent):
    """``maxweight``: the packing maximising Σ_v (served with need v)·(present with need v), encoded as weight·(n+1)
    + servers used, by the kernel's dynamic program (groups in decreasing need, the smallest count on ties) and its
    backtracking from the last group; the oldest jobs of each group are served."""

    policy_name = "maxweight"

    def targets(self, view: SetView) -> list[int]:
        n = self.n
        W = n + 1
        G = len(self.grp_need)
        dp = [[0] * W for _ in range(G + 1)]
        choice = [[0] * W for _ in range(G + 1)]
        for g in range(1, G + 1):
            v = self.grp_need[g - 1]
            count = self.group_count(view, g - 1)
            unit = count * W + v
            prev, row, crow = dp[g - 1], dp[g], choice[g]
            # the backtracking reads the last group's row at cap = n only: the others are not needed
            for cap in (range(W) if g < G else (n,)):
                best = prev[cap]
                best_c = 0
                top = cap // v
                if count < top:
                    top = count
                for c in range(1, top + 1):
                    value = prev[cap - c * v] + c * unit
                    if value > best:
                        best = value
                        best_c = c
                row[cap] = best
                crow[cap] = best_c
        targets = [0] * self.K
        cap = n
        for g in range(G, 0, -1):
            c = choice[g][cap]
            self.split_group(view, g - 1, c, targets)
            cap -= c * self.grp_need[g - 1]
        return targets


# ---------------------------------------------------------------- declaration
def _tables(sizes: Sizes) -> int:
    return 2 * (sizes.groups + 1) * (sizes.servers + 1)


TABLES = OwnState(ints=_tables)
"""The knapsack's two tables (objective and choice), (G + 1) × (n + 1) each."""

MAXWEIGHT = Policy(
    name="maxweight",
    summary="MaxWeight (preemptive): serve the packing maximising Σ served×present per need (knapsack per event)",
    preemptive=True,
    source="Grosof, Harchol-Balter & Scheller-Wolf, finite-skip §7.3 (after Maguluri et al.)",
    schedule=schedule,
    agent_class=MaxWeightAgent,
    state=TABLES,
)
