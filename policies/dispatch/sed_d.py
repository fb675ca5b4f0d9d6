"""sed-d: the least (q_i + 1)/s_i among d servers sampled without replacement, d messages per arrival, and its
agent form on the "sampled" observation with speeds.

SED on d samples as compared in Gardner, Abdul Jaleel, Wickeham & Doroudi, "Scalable load balancing in the
presence of heterogeneous servers", Performance Evaluation, January 2021 (article 102151; the volume number is not
checked). With equal speeds sed-d is jsq-d draw for draw.
"""
from __future__ import annotations

import numpy as np

from msjgym.core.jit import njit
from msjgym.systems.dispatch.contract import D, P_D, P_N, DispatchPolicy, count_messages, sample_servers

from .common import expected_delay


@njit
def choose_sed_d(st, pr, b, now):
    """The least (q_i + 1)/s_i among d sampled servers, the first of the tied in the (random) sample order; d
    messages per arrival."""
    d = pr.ints[P_D]
    count_messages(st, d)
    sample_servers(st, b, pr.ints[P_N], d)
    best = st.perm[0]
    eb = expected_delay(st, pr, best)
    for j in range(1, d):
        i = st.perm[j]
        e = expected_delay(st, pr, i)
        if e < eb:
            best, eb = i, e
    return best


class ShortestExpectedDelaySampled:
    """sed-d (observation "sampled" with per-server speeds: d queue lengths, then the d speeds): the index of the
    first sampled server with the least (q + 1)/speed (the sample is in random order: sed-d's uniform tie-break).

    The speeds arrive as float32 and the kernel divides by its float64 speeds: the two agree draw for draw when the
    speeds are float32 numbers (e.g. ``pool_speeds(2, 0.5, 7)`` = (1.75, 0.25)); otherwise a near-tie may go the
    other way."""

    def act(self, observation: np.ndarray) -> int:
        obs = np.asarray(observation, np.float64)
        d = obs.size // 2
        return int(np.argmin((obs[:d] + 1.0) / obs[d:]))


SED_D_POLICY = DispatchPolicy(
    name="sed-d", summary="least (q_i + 1)/speed_i among d sampled servers (d messages per arrival)",
    source="SED (Selen et al., Queueing Systems 2016) on d samples, as compared in Gardner, Abdul Jaleel, Wickeham & "
           "Doroudi, 'Scalable load balancing in the presence of heterogeneous servers', Performance Evaluation 2021",
    params=(D,), choose=choose_sed_d, agent_class=ShortestExpectedDelaySampled, agent_observation="sampled")
