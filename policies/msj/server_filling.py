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
    J_CLS, J_NEXT, J_SEQ, P_GROUPS, P_K, P_SERVERS, apply_targets)
from msjgym.systems.msj.model import MSJModel
from msjgym.systems.msj.contract import OwnState, Policy, Sizes
from .agent_forms import SetAgent, SetView
from .common import require_divisible, group_count, kth_oldest_seq, newest_seq, split_group, clear_targets


# ---------------------------------------------------------------- the front (the policy's own state)
# own_i[b, _NEED]: the total need of the jobs in the front; own_i[b, 1 + c]: class-c jobs in the front;
# own_i[b, 1 + K + c]: the first class-c job outside the front, plus 1 (0: every class-c job is in the front).
_NEED = 0


def _front_ints(sizes: Sizes) -> int:
    return 1 + 2 * sizes.classes


FRONT = OwnState(ints=_front_ints)
"""The front's counts, kept by the ``on_arrival`` / ``on_departure`` hooks."""


@njit(inline="always")
def front_on_arrival(st, pr, b, j):
    """A new job joins the front if the front's needs sum to less than n; else it waits outside it."""
    c = st.job_i[b, j, J_CLS]
    if st.own_i[b, _NEED] < pr.ints[P_SERVERS]:
        st.own_i[b, 1 + c] += 1
        st.own_i[b, _NEED] += pr.need[c]
    else:
        at = 1 + pr.ints[P_K] + c
        if st.own_i[b, at] == 0:
            st.own_i[b, at] = j + 1


@njit(inline="always")
def front_on_departure(st, pr, b, c):
    """A class-c job of the front completed: extend the front in arrival order until its needs reach n."""
    K = pr.ints[P_K]
    n = pr.ints[P_SERVERS]
    st.own_i[b, 1 + c] -= 1
    st.own_i[b, _NEED] -= pr.need[c]
    while st.own_i[b, _NEED] < n:
        best = -1
        for k in range(K):
            j = st.own_i[b, 1 + K + k] - 1
            if j >= 0 and (best < 0 or st.job_i[b, j, J_SEQ] < st.job_i[b, st.own_i[b, 1 + K + best] - 1, J_SEQ]):
                best = k
        if best < 0:
            return
        j = st.own_i[b, 1 + K + best] - 1
        st.own_i[b, 1 + best] += 1
        st.own_i[b, _NEED] += pr.need[best]
        st.own_i[b, 1 + K + best] = st.job_i[b, j, J_NEXT] + 1


@njit(inline="always")
def schedule(st, pr, b):
    """Place the front's jobs largest need first (oldest first within a need) while they fit; O(K) per event."""
    G = pr.ints[P_GROUPS]
    free = pr.ints[P_SERVERS]
    clear_targets(st, pr, b)
    for g in range(G):
        in_front = 0
        for i in range(pr.grp_ptr[g], pr.grp_ptr[g + 1]):
            in_front += st.own_i[b, 1 + pr.grp_cls[i]]
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


# ---------------------------------------------------------------- agent form
class ServerFillingAgent(SetAgent):
    """``server-filling``: the front is the shortest prefix of the jobs in arrival order whose needs reach n (all
    jobs if they need fewer); its jobs are placed largest need first, oldest first within a need, while they fit."""

    policy_name = "server-filling"

    def targets(self, view: SetView) -> list[int]:
        n, need = self.n, self.need
        front = [0] * self.K
        acc = 0
        for c in view.seq:
            if acc >= n:
                break
            front[c] += 1
            acc += need[c]
        if acc < n and view.truncated:
            raise self._not_enough(f"the {len(view.seq)} oldest jobs shown need {acc} < n = {n} servers, so the "
                                   f"front extends beyond them")
        free = n
        targets = [0] * self.K
        for g, v in enumerate(self.grp_need):
            in_front = sum(front[c] for c in self.grp_cls[g])
            count = min(in_front, free // v)
            free -= count * v
            self.split_group(view, g, count, targets)  # the front's group-g jobs are the group's oldest
        return targets


class ServerFillingDivisibleAgent(SetAgent):
    """``server-filling-divisible``: among the need groups with at least n/v jobs, serve the n/v oldest jobs of the
    group whose (n/v)-th oldest job arrived first; if none can fill the servers, serve all jobs of the group
    maximising v × (its jobs), ties to the group whose youngest job is oldest."""

    policy_name = "server-filling-divisible"

    def targets(self, view: SetView) -> list[int]:
        n = self.n
        targets = [0] * self.K
        known: list[tuple[int, int]] = []  # (position in the sequence of the group's fill-th oldest job, group)
        beyond: list[int] = []  # qualifying groups whose fill-th oldest job is beyond the window
        for g, v in enumerate(self.grp_need):
            fill = n // v
            if self.group_count(view, g) >= fill:
                pos = self.group_positions(view, g)
                if len(pos) >= fill:
                    known.append((pos[fill - 1], g))
                else:
                    beyond.append(g)
        if known or beyond:
            if known:
                best = min(known)[1]
            elif len(beyond) == 1:
                best = beyond[0]
            else:
                raise self._not_enough(f"the need groups {[self.grp_need[g] for g in beyond]} can each fill the "
                                       f"servers, and which does first lies beyond the window")
            self.split_group(view, best, n // self.grp_need[best], targets)
            return targets
        # no group fills the servers: the most servers, ties to the group whose youngest job is oldest
        servers = [v * self.group_count(view, g) for g, v in enumerate(self.grp_need)]
        top = max(servers)
        if top == 0:
            return targets
        tied = [g for g, s in enumerate(servers) if s == top]
        if len(tied) == 1:
            best = tied[0]
        else:
            newest: list[tuple[int, int]] = []  # (position of the group's youngest job, group), when all are shown
            unknown = []
            for g in tied:
                pos = self.group_positions(view, g)
                if len(pos) == self.group_count(view, g):
                    newest.append((pos[-1], g))
                else:
                    unknown.append(g)
            if newest:
                best = min(newest)[1]
            elif len(unknown) == 1:  # pragma: no cover - unknown is only non-empty when truncated
                best = unknown[0]
            else:
                raise self._not_enough(f"the need groups {[self.grp_need[g] for g in unknown]} tie on servers and "
                                       f"their youngest jobs are beyond the window")
        for c in self.grp_cls[best]:
            targets[c] = view.N[c]
        return targets


# ---------------------------------------------------------------- declaration
@dataclass(frozen=True, kw_only=True)
class _ServerFilling(Policy):
    chain: bool = True

    def validate(self, model: MSJModel) -> None:
        require_divisible(self.name, model, chain=self.chain)


SERVER_FILLING = _ServerFilling(
    name="server-filling",
    summary="ServerFilling (preemptive, exponential setting): fill the servers from the front, largest need first",
    preemptive=True,
    source="Grosof, Harchol-Balter & Scheller-Wolf, finite-skip §7.2.3, App. B.1",
    chain=True,
    schedule=schedule,
    on_arrival=front_on_arrival,
    on_departure=front_on_departure,
    state=FRONT,
    agent_class=ServerFillingAgent,
)

SERVER_FILLING_DIVISIBLE = _ServerFilling(
    name="server-filling-divisible",
    summary="ServerFilling (preemptive, divisible setting): serve the need class that fills the servers earliest",
    preemptive=True,
    source="Grosof, Harchol-Balter & Scheller-Wolf, finite-skip App. B.2",
    chain=False,
    schedule=schedule_divisible,
    agent_class=ServerFillingDivisibleAgent,
)
