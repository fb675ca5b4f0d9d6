"""jsq-d: the shortest of d servers sampled without replacement, d messages per arrival (Hellemans, Kielanski &
Van Houdt §2), and its agent form on the "sampled" observation.
"""
from __future__ import annotations

import numpy as np

from msjgym.core.jit import njit
from msjgym.systems.dispatch.contract import D, HKV, P_D, P_N, DispatchPolicy, count_messages, sample_servers
from msjgym.systems.dispatch.state import V_Q


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


@njit
def choose_jsq_d(st, pr, b, now):
    """The shortest of d sampled servers (d messages per arrival)."""
    d = pr.ints[P_D]
    count_messages(st, d)
    return _shortest_of_sample(st, b, pr.ints[P_N], d)


class ShortestSampled:
    """jsq-d (observation "sampled"): the index of the first shortest queue among the d sampled servers."""

    def act(self, observation: np.ndarray) -> int:
        return int(np.argmin(observation))


JSQ_D_POLICY = DispatchPolicy(name="jsq-d", summary="shortest of d sampled servers (d messages per arrival)",
                              source=f"{HKV} §2", params=(D,), choose=choose_jsq_d, agent_class=ShortestSampled,
                              agent_observation="sampled")
