"""Agent control of the large-scale dispatch system: one decision per arrival, B systems stepped by one compiled call.

A decision epoch is an arrival (:func:`msjgym.systems.dispatch.loop.next_event` returns ``NEXT_ARRIVAL``); between
epochs the system runs its own events (completions, probes, server updates) through the loop's own transition code,
the functions :func:`~msjgym.systems.dispatch.loop.run` calls. The agent's action places the arrival
(:func:`msjgym.systems.dispatch.loop.place_arrival`), drawing from the stream exactly what the built-in policy's
``choose`` would draw, so a built-in policy's agent reproduces its compiled trajectory draw for draw.

Observation modes (L = ``levels``, the histogram's length; n = servers):

* ``SAMPLED``: at the epoch d servers are sampled without replacement (``sample_servers``, the draws of jsq-d,
  which counts d messages); observation = their queue lengths, in sample order; action j < d sends the job to the
  j-th sampled server. ``SAMPLED_SPEEDS`` (per-server speeds): the same, then the d sampled servers' speeds.
* ``HISTOGRAM``: observation = fraction of servers with at least i jobs, i = 1..L (from the queue-length buckets,
  O(L)); action a < L sends the job to a uniformly random server with exactly a jobs, a = L to one with at least L.
* ``ESTIMATES``: the same over the dispatcher's estimates e_i (push / pull information); the chosen server's
  estimate goes up by one (e_i += 1, as push does).

Why levels, not servers, in the histogram modes: servers with the same queue length (estimate) are exchangeable to
the dispatcher, so "which level" is the whole decision; it keeps the action space at L + 1 whatever N, costs O(1)
(a level bucket, ``bucket_pick_between``), and push, pull and JSQ are exactly "the lowest level" with the same
uniform draw as their ``choose``. Why tails (at least i) rather than exact counts: they are the cavity method's x_i,
monotone in i and in [0, 1], and the exact counts (the masks) are their differences. Why e_i += 1: the dispatcher
knows where it sent the job, as push assumes (e_i >= q_i then always holds).

Reward of a step (``reward``):

* ``HOLDING``: −∫ (jobs in system) / n dt from this arrival to the next (per server, so its scale does not depend
  on n; by Little's law its time average is −λ · mean response time).
* ``RESPONSE``: −E[response time of the job just dispatched | state, action] (``expected_response``): a FIFO job's
  response is fixed by the queue it joins, so this is the decision's own cost, known at once, with none of the
  noise of the other n − 1 servers' events; its mean over the jobs is −(mean response time), since
  E[R_j | state, action] and R_j have the same expectation. It leaves out the job's externality (the jobs that
  will later queue behind it), which only the return over later steps sees.
"""
from __future__ import annotations

from collections import namedtuple

from msjgym.core.jit import njit
from msjgym.core.rng import uniform
from msjgym.systems.dispatch import loop
from msjgym.systems.dispatch.contract import F_SPEEDS, P_D, P_LCAP, P_N, count_messages, sample_servers
from msjgym.systems.dispatch.observation import AT_LEAST, SAMPLES
from msjgym.systems.dispatch.state import (
    RUNNING, S_CLOCKS, S_NARR, S_NFREE, S_STATUS, T_NOW, V_E, V_POS, V_Q, W_CT, W_PEND, DispatchState,
    bucket_pick_between, bucket_up)

SAMPLED, ESTIMATES, HISTOGRAM, SAMPLED_SPEEDS = 0, 1, 2, 3  # SAMPLED_SPEEDS: "sampled" with per-server speeds
HOLDING, RESPONSE = 0, 1  # the step's reward (module docstring)
OK, BAD_ACTION, GROW_JOBS, GROW_LEVELS = 0, 1, 2, 3
SKIP = -2  # action that leaves a system untouched (the agent runner's finished replications; not for env users)
NO_HORIZON = 1 << 62  # episodes end when the protocol's measured jobs have left (status DONE), not at a count

DispatchBatchState = namedtuple("DispatchBatchState", DispatchState._fields)
DispatchBatchState.__doc__ = ("B dispatch systems: every field of ``DispatchState`` with a leading axis B "
                              "(``rng`` is already ``uint64[B, 4]``).")


@njit(inline="always")
def view(bs, b):
    """System b of the batch as a ``DispatchState`` (views, no copy)."""
    return DispatchState(bs.si[b], bs.sf[b], bs.rng, bs.srv[b], bs.srvf[b], bs.qord[b], bs.qstart[b], bs.qcnt[b],
                         bs.eord[b], bs.estart[b], bs.idl[b], bs.perm[b], bs.hp[b], bs.jobi[b], bs.jobf[b],
                         bs.jfree[b], bs.area[b], bs.last[b], bs.batch[b], bs.own[b])


@njit(inline="always")
def _buckets(st, mode):
    """(key column, order, start) of the buckets the histogram / estimates modes read."""
    if mode == ESTIMATES:
        return V_E, st.eord, st.estart
    return V_Q, st.qord, st.qstart


@njit(inline="always")
def _level_range(start, n, levels, a):
    """Positions [lo, hi) of level a (a = levels: every level >= levels)."""
    if a < levels:
        return start[a], start[a + 1]
    return start[levels], n


@njit
def observe(st, pr, mode, levels, obs, mask):
    """Write the observation (offsets: ``msjgym.systems.dispatch.observation``) and the action mask of the pending
    decision."""
    n = pr.ints[P_N]
    if mode == SAMPLED or mode == SAMPLED_SPEEDS:
        d = pr.ints[P_D]
        for j in range(d):
            obs[SAMPLES + j] = st.srv[st.perm[j], V_Q]
            mask[j] = True
            if mode == SAMPLED_SPEEDS:
                obs[SAMPLES + d + j] = pr.floats[F_SPEEDS + st.perm[j]]
        return
    kc, order, start = _buckets(st, mode)
    for i in range(1, levels + 1):
        obs[AT_LEAST + i - 1] = (n - start[i]) / n
    for a in range(levels + 1):
        lo, hi = _level_range(start, n, levels, a)
        mask[a] = hi > lo


@njit
def _choose(st, pr, b, mode, levels, a):
    """The server action a sends the pending arrival to (>= 0), or −BAD_ACTION / −GROW_* (nothing changed or drawn).
    The estimates mode counts the job in that server's estimate (e_i += 1) here."""
    n = pr.ints[P_N]
    if st.si[S_NFREE] == 0:
        return -GROW_JOBS
    if mode == SAMPLED or mode == SAMPLED_SPEEDS:
        if a < 0 or a >= pr.ints[P_D]:
            return -BAD_ACTION
        i = st.perm[a]
        if st.srv[i, V_Q] + 1 > pr.ints[P_LCAP]:
            return -GROW_LEVELS
        return i
    if a < 0 or a > levels:
        return -BAD_ACTION
    kc, order, start = _buckets(st, mode)
    lo, hi = _level_range(start, n, levels, a)
    if hi <= lo:
        return -BAD_ACTION
    top = a if a < levels else st.srv[order[n - 1], kc]  # the chosen server's level (at most, for a = levels)
    if top + 1 > pr.ints[P_LCAP]:  # under push / pull q_i <= e_i, so this bounds the queue too
        return -GROW_LEVELS
    i = bucket_pick_between(order, lo, hi, uniform(st.rng, b))
    if mode == ESTIMATES:
        bucket_up(st.srv, V_E, V_POS, st.eord, st.estart, i)
    return i


@njit(inline="always")
def expected_response(st, pr, i):
    """E[response time of a job joining FIFO server i now | the system's state] (time units), O(1).

    Exponential sizes (completion clocks, sizes never drawn): (q_i + 1) · E[S] / speed by memorylessness.
    Otherwise (sizes drawn at arrival, so the work ahead is known): the residual service of the job in service plus
    the waiting work, / speed, plus E[S] / speed for the job's own size. ``speed``: server i's (``loop.speed``; with
    equal speeds it is F_SPEED, so the factor F_SPEED / speed is exactly 1)."""
    q = st.srv[i, V_Q]
    speed = loop.speed(pr, i)
    mean = 1.0 / pr.floats[loop.F_MU] * (pr.floats[loop.F_SPEED] / speed)  # E[S] / speed
    if st.si[S_CLOCKS] or q == 0:
        return (q + 1) * mean
    return (st.srvf[i, W_CT] - st.sf[T_NOW]) + st.srvf[i, W_PEND] / speed + mean


@njit
def _to_decision(st, pr, b, mode):
    """Run to the next arrival (or the end of the run); returns ∫ (jobs in system) dt over the way."""
    area = 0.0
    cap = st.jfree.size
    while True:
        jobs = cap - st.si[S_NFREE]
        t = st.sf[T_NOW]
        ev = loop.next_event(st, pr, b)
        area += jobs * (st.sf[T_NOW] - t)
        if ev == loop.NEXT_ARRIVAL:
            if mode == SAMPLED or mode == SAMPLED_SPEEDS:  # the sample is part of the epoch, drawn as jsq-d's choose
                d = pr.ints[P_D]
                count_messages(st, d)
                sample_servers(st, b, pr.ints[P_N], d)
            return area
        if ev == loop.NEXT_STOPPED:
            return area


@njit
def step_batch(bs, pr, mode, reward, levels, horizon, actions, resetting, obs, masks, rewards, dts, ended, codes):
    """Advance every system b: reset it (``resetting[b]``: an empty system run to its first arrival) or place its
    pending arrival by ``actions[b]`` and run to the next arrival; ``rewards[b]``: HOLDING or RESPONSE's (module
    docstring). ``ended[b]``: ``horizon`` arrivals placed, or
    (``NO_HORIZON``) the protocol's run is over. ``codes[b]``: OK, BAD_ACTION, GROW_* (b untouched: enlarge the
    arrays and step it again)."""
    n = pr.ints[P_N]
    for b in range(actions.size):
        st = view(bs, b)
        codes[b] = OK
        if resetting[b]:
            loop.reset(st, pr, b)
            _to_decision(st, pr, b, mode)
            rewards[b] = 0.0
            dts[b] = 0.0
        else:
            a = actions[b]
            if a == SKIP:
                continue
            t0 = st.sf[T_NOW]
            i = _choose(st, pr, b, mode, levels, a)
            if i < 0:
                codes[b] = -i
                continue
            response = expected_response(st, pr, i) if reward == RESPONSE else 0.0
            loop.place_arrival(st, pr, b, i)
            area = _to_decision(st, pr, b, mode)
            rewards[b] = -response if reward == RESPONSE else -area / n
            dts[b] = st.sf[T_NOW] - t0
        if horizon == NO_HORIZON:
            ended[b] = st.si[S_STATUS] != RUNNING
        else:
            ended[b] = st.si[S_NARR] >= horizon
        observe(st, pr, mode, levels, obs[b], masks[b])
