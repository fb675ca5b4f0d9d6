"""Agent control of the loss system: one decision per arrival, B systems stepped by one compiled call.

A decision epoch is an arrival whose sample has been drawn (:func:`msjgym.systems.loss.loop.to_next_arrival`). The
agent's action is the width: 0 = block, 1..m with m = min(l, d) the idle servers its sample shows. ``step_batch``
drives the event loop's own transitions: it starts a system with :func:`~msjgym.systems.loss.loop.reset_system`,
applies each system's action with :func:`~msjgym.systems.loss.loop.resolve_arrival` (the same transition as the
fast path, so a policy gives the same trajectory through the environment as through
:func:`msjgym.systems.loss.loop.run`), then runs to the next arrival; what it adds is the reward and the observation.

Observation (float32[3]; offsets: ``msjgym.systems.loss.observation``): [m, busy servers / n, jobs in system / n].
Only m is what the paper's dispatcher sees (its sample); the two global fractions are extra context for learning
(not available to a sampling dispatcher).
Reward of a step: −∫ (jobs in system) dt from this arrival to the next, minus ``penalty`` if the job was blocked.
"""
from __future__ import annotations

import math

from msjgym.core.jit import njit
from msjgym.systems.loss.loop import reset_system, resolve_arrival, to_next_arrival
from msjgym.systems.loss.observation import BLOCK, BUSY, IDLE_SAMPLED, JOBS
from msjgym.systems.loss.state import F_AREA, F_TIME, I_ARRIVALS, I_BUSY, I_M, I_PENDING

OK, BAD_ACTION = 0, 1
SKIP = -2  # action that leaves a system untouched (the agent runner's finished replications; not for env users)


@njit
def observe(st, pr, b, obs, mask):
    """Write system b's observation and action mask (actions 0..m)."""
    x, ints, n, d = st.x, st.ints, pr.n, pr.d
    m = ints[b, I_M]
    jobs = 0
    for i in range(1, d + 1):
        jobs += x[b, i]
    obs[IDLE_SAMPLED] = m
    obs[BUSY] = ints[b, I_BUSY] / n
    obs[JOBS] = jobs / n
    for a in range(d + 1):
        mask[a] = a <= m


@njit
def step_batch(st, pr, horizon, penalty, actions, resetting, obs, masks, rewards, dts, ended, codes):
    """Advance every system b of ``st``: reset it (``resetting[b]``: new episode, run to its first arrival) or apply
    ``actions[b]`` to its pending arrival and run to the next one. ``ended[b]``: ``horizon`` arrivals decided.
    Statistics measure arrivals ``pr.warmup`` .. ``horizon`` − 1 in ``pr.batches`` batches (``pr.jobs`` = ``horizon``
    − ``pr.warmup``)."""
    ints, flts = st.ints, st.flts
    for b in range(st.x.shape[0]):
        codes[b] = OK
        rewards[b] = 0.0
        dts[b] = 0.0
        if resetting[b]:
            reset_system(st, pr, b)
            to_next_arrival(st, pr, b)
            ended[b] = False
        else:
            a = actions[b]
            if a == SKIP:
                continue
            if ints[b, I_PENDING] == 0 or a < 0 or a > ints[b, I_M]:
                codes[b] = BAD_ACTION
                continue
            resolve_arrival(st, pr, b, a)
            t0 = flts[b, F_TIME]
            flts[b, F_AREA] = 0.0
            to_next_arrival(st, pr, b)
            dts[b] = flts[b, F_TIME] - t0
            rewards[b] = -flts[b, F_AREA] - (penalty if a == BLOCK else 0.0)
            ended[b] = ints[b, I_ARRIVALS] >= horizon
        observe(st, pr, b, obs[b], masks[b])


NO_HORIZON = 1 << 62
INF = math.inf
