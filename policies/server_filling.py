"""ServerFilling: a preemptive, throughput-optimal multiserver-job policy, in two settings.

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis",
§7.2.3 and App. B.1 (exponential setting) and App. B.2 (divisible setting); the order and ties the paper leaves open:
docs/modelling-choices.md#finite-skip-server-filling.

Exponential setting (every need divides every larger need and the number of servers n): the *front* is the
shortest prefix of the jobs in arrival order whose needs sum to at least n (all jobs if they need fewer); the
front's jobs are placed largest need first (oldest first within a need) while they fit. Lemma 7.1: this fills all
n servers whenever the jobs present need n or more.

Divisible setting (every need divides n): serve one need class v at a time. Among the needs with at least n/v jobs,
serve the n/v oldest jobs of the need whose (n/v)-th oldest job arrived earliest; if no need can fill the servers,
serve all jobs of the need v maximising v·(number of v-jobs), ties to the need whose youngest job is oldest.
"""
from __future__ import annotations

from dataclasses import dataclass

from msjgym.core.jit import njit
from msjgym.systems.msj.state import (
    C_F, C_FEND, J_CLS, J_NEXT, J_SEQ, P_GROUPS, P_K, P_SERVERS, S_FRONT_NEED, apply_targets)
from msjgym.systems.msj.model import MSJModel
from .base import Policy, require_divisible
from .common import group_count, kth_oldest_seq, newest_seq, split_group, clear_targets

KERNEL_ID = 7
DIVISIBLE_KERNEL_ID = 8


@njit(inline="always")
def front_on_arrival(st, pr, b, j):
    """A new job joins the front if the front's needs sum to less than n; else it waits outside it."""
    c = st.job_i[b, j, J_CLS]
    if st.sys_i[b, S_FRONT_NEED] < pr.ints[P_SERVERS]:
        st.cls_i[b, c, C_F] += 1
        st.sys_i[b, S_FRONT_NEED] += pr.need[c]
    elif st.cls_i[b, c, C_FEND] < 0:
        st.cls_i[b, c, C_FEND] = j


@njit(inline="always")
def front_on_departure(st, pr, b, c):
    """A class-c job of the front completed: extend the front in arrival order until its needs reach n."""
    K = pr.ints[P_K]
    n = pr.ints[P_SERVERS]
    st.cls_i[b, c, C_F] -= 1
    st.sys_i[b, S_FRONT_NEED] -= pr.need[c]
    while st.sys_i[b, S_FRONT_NEED] < n:
        best = -1
        for k in range(K):
            j = st.cls_i[b, k, C_FEND]
            if j >= 0 and (best < 0 or st.job_i[b, j, J_SEQ] < st.job_i[b, st.cls_i[b, best, C_FEND], J_SEQ]):
                best = k
        if best < 0:
            return
        j = st.cls_i[b, best, C_FEND]
        st.cls_i[b, best, C_F] += 1
        st.sys_i[b, S_FRONT_NEED] += pr.need[best]
        st.cls_i[b, best, C_FEND] = st.job_i[b, j, J_NEXT]


@njit(inline="always")
def schedule(st, pr, b):
    """Place the front's jobs largest need first (oldest first within a need) while they fit; O(K) per event."""
    G = pr.ints[P_GROUPS]
    free = pr.ints[P_SERVERS]
    clear_targets(st, pr, b)
    for g in range(G):
        in_front = 0
        for i in range(pr.grp_ptr[g], pr.grp_ptr[g + 1]):
            in_front += st.cls_i[b, pr.grp_cls[i], C_F]
        v = pr.grp_need[g]
        count = min(in_front, free // v)
        free -= count * v
        split_group(st, pr, b, g, count)
    apply_targets(st, pr, b)


@njit
def schedule_divisible(st, pr, b):
    """Serve one need class at a time (App. B.2); O(n) per event in the worst case."""
    G = pr.ints[P_GROUPS]
    n = pr.ints[P_SERVERS]
    clear_targets(st, pr, b)
    best = -1
    best_seq = 0
    for g in range(G):
        fill = n // pr.grp_need[g]
        if group_count(st, pr, b, g) >= fill:
            s = kth_oldest_seq(st, pr, b, g, fill)
            if best < 0 or s < best_seq:
                best = g
                best_seq = s
    if best >= 0:
        count = n // pr.grp_need[best]
    else:
        best_servers = 0
        for g in range(G):
            servers = pr.grp_need[g] * group_count(st, pr, b, g)
            if servers == 0:
                continue
            s = newest_seq(st, pr, b, g)
            if best < 0 or servers > best_servers or (servers == best_servers and s < best_seq):
                best = g
                best_servers = servers
                best_seq = s
        count = 0 if best < 0 else group_count(st, pr, b, best)
    if best >= 0:
        split_group(st, pr, b, best, count)
    apply_targets(st, pr, b)


@dataclass(frozen=True)
class _ServerFilling(Policy):
    chain: bool = True

    def validate(self, model: MSJModel) -> None:
        require_divisible(self.name, model, chain=self.chain)


SERVER_FILLING = _ServerFilling(
    name="server-filling",
    summary="ServerFilling (preemptive, exponential setting): fill the servers from the front, largest need first",
    preemptive=True,
    kernel_id=KERNEL_ID,
    source="Grosof, Harchol-Balter & Scheller-Wolf, finite-skip §7.2.3, App. B.1",
    chain=True,
)

SERVER_FILLING_DIVISIBLE = _ServerFilling(
    name="server-filling-divisible",
    summary="ServerFilling (preemptive, divisible setting): serve the need class that fills the servers earliest",
    preemptive=True,
    kernel_id=DIVISIBLE_KERNEL_ID,
    source="Grosof, Harchol-Balter & Scheller-Wolf, finite-skip App. B.2",
    chain=False,
)
