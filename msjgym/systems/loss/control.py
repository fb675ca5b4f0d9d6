"""Agent control of the loss system: one decision per arrival, B systems stepped by one compiled call.

A decision epoch is an arrival whose sample has been drawn (``msjgym.systems.loss.kernel.to_next_arrival``). The agent's
action is the width: 0 = block, 1..m with m = min(l, d) the idle servers its sample shows. ``step_batch`` applies
each system's action with ``resolve_arrival`` (the same transition as the fast path, so a policy gives the same
trajectory through the environment as through ``msjgym.systems.loss.kernel.run``), then runs to the next arrival.

Observation (float32[3]; offsets: ``msjgym.systems.loss.observation``): [m, busy servers / n, jobs in system / n].
Only m is what the paper's dispatcher sees (its sample); the two global fractions are extra context for learning
(not available to a sampling dispatcher).
Reward of a step: −∫ (jobs in system) dt from this arrival to the next, minus ``penalty`` if the job was blocked.
"""
from __future__ import annotations

import math

from msjgym.core.jit import njit
from msjgym.systems.loss import kernel as ls
from msjgym.systems.loss.observation import BLOCK, BUSY, IDLE_SAMPLED, JOBS

OK, BAD_ACTION = 0, 1
SKIP = -2  # action that leaves a system untouched (the agent runner's finished replications; not for env users)


@njit
def observe(x, ints, b, n, d, obs, mask):
    m = ints[b, ls.I_M]
    jobs = 0
    for i in range(1, d + 1):
        jobs += x[b, i]
    obs[IDLE_SAMPLED] = m
    obs[BUSY] = ints[b, ls.I_BUSY] / n
    obs[JOBS] = jobs / n
    for a in range(d + 1):
        mask[a] = a <= m


@njit
def reset_system(x, ints, flts, pmf, stats, trace, logfact, b, n, d, k):
    """Empty system b (its RNG stream continues)."""
    for i in range(d + 1):
        x[b, i] = 0
    for i in range(ints.shape[1]):
        ints[b, i] = 0
    for i in range(flts.shape[1]):
        flts[b, i] = 0.0
    stats[b, :, :] = 0.0
    ls._state_changed(x, ints, pmf, b, n, d, k, logfact)


@njit
def step_batch(x, ints, flts, pmf, stats, s, trace, logfact, n, d, k, lam, kernels, warmup, horizon, batches,
               penalty, actions, resetting, obs, masks, rewards, dts, ended, codes):
    """Advance every system b: reset it (``resetting[b]``: new episode, run to its first arrival) or apply
    ``actions[b]`` to its pending arrival and run to the next one. ``ended[b]``: ``horizon`` arrivals decided.
    Statistics measure arrivals ``warmup`` .. ``horizon`` − 1 in ``batches`` batches."""
    jobs = horizon - warmup
    for b in range(x.shape[0]):
        codes[b] = OK
        rewards[b] = 0.0
        dts[b] = 0.0
        if resetting[b]:
            reset_system(x, ints, flts, pmf, stats, trace, logfact, b, n, d, k)
            ls.to_next_arrival(x, ints, flts, pmf, stats, s, trace, logfact, b, n, d, k, lam, kernels, warmup, jobs,
                               batches)
            ended[b] = False
        else:
            a = actions[b]
            if a == SKIP:
                continue
            if ints[b, ls.I_PENDING] == 0 or a < 0 or a > ints[b, ls.I_M]:
                codes[b] = BAD_ACTION
                continue
            ls.resolve_arrival(x, ints, pmf, stats, trace, logfact, b, n, d, k, a, warmup, jobs, batches)
            t0 = flts[b, ls.F_TIME]
            flts[b, ls.F_AREA] = 0.0
            ls.to_next_arrival(x, ints, flts, pmf, stats, s, trace, logfact, b, n, d, k, lam, kernels, warmup, jobs,
                               batches)
            dts[b] = flts[b, ls.F_TIME] - t0
            rewards[b] = -flts[b, ls.F_AREA] - (penalty if a == BLOCK else 0.0)
            ended[b] = ints[b, ls.I_ARRIVALS] >= horizon
        observe(x, ints, b, n, d, obs[b], masks[b])


NO_HORIZON = 1 << 62
INF = math.inf
