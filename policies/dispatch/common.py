"""Compiled helpers and decisions several built-in dispatchers share: the expected delay of a server, a uniformly
random server, the smallest estimate; and the agent form that picks the lowest level. (Sampling d servers and counting
messages are the system's, in :mod:`msjgym.systems.dispatch.contract`.)
"""
from __future__ import annotations

import numpy as np

from msjgym.core.jit import njit
from msjgym.core.rng import below, uniform
from msjgym.systems.dispatch.contract import F_SPEEDS, P_LCAP, P_N
from msjgym.systems.dispatch.state import NEED_LEVELS, S_STATUS, V_E, V_POS, V_Q, bucket_pick_min, bucket_up


@njit(inline="always")
def expected_delay(st, pr, i):
    """(q_i + 1) / s_i: the expected response time of a job joining server i, in units of E[size] (exponential
    sizes, FIFO: the q_i jobs there and its own, each of mean E[size] / s_i)."""
    return (st.srv[i, V_Q] + 1) / pr.floats[F_SPEEDS + i]


@njit
def choose_uniform(st, pr, b, now):
    """random, resource-pooling: a uniformly random server."""
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


class LowestLevel:
    """jsq (observation "histogram"), push and pull (observation "estimates"): the lowest level with a server.

    The observation is the tail t_i = fraction with at least i (jobs or estimate), i = 1..L; level a < L holds
    t_a − t_{a+1} of the servers (t_0 = 1), level L all those with at least L. When every server is at L or more
    (t_L = 1) the lowest level is not visible: the agent raises rather than diverge from the policy (use more
    ``levels``).
    """

    def act(self, observation: np.ndarray) -> int:
        tails = np.concatenate(([1.0], np.asarray(observation, np.float64), [0.0]))
        if tails[-2] == 1.0:
            raise RuntimeError(f"every server is at level >= L = {tails.size - 2}: the lowest level is not visible; "
                               "make the environment with more levels")
        return int(np.flatnonzero(tails[:-1] > tails[1:])[0])
