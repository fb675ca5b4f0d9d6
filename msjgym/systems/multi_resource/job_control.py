"""The compiled decision path of ``msjgym/MultiResourceJobs-v0``: an agent picks the next job of a multi-resource
machine from the K best waiting jobs (:mod:`msjgym.systems.multi_resource.job_observation`).

The multiserver-job family's job-scheduling layer (:mod:`msjgym.systems.msj.job_control`: its control record, its
rewards, its reserved head; the ``priority`` policy's orders of :mod:`msjgym.systems.msj.backfilling` choose and sort
the shown jobs) on this family's record, with vector fits: a pick starts the job on the first node it fits
(:func:`msjgym.systems.multi_resource.state.first_node`, the transitions the built-in policies use); a job that fits
no node is the *reserved head*, nothing else starts, and the system runs to the next event (``backfill="none"`` of
the multiserver-job environment). Decision epochs are the instants at which some waiting job fits some node
(MSJ's control layer in ``MODE_QUEUE`` stops whenever a job waits; an epoch where none fits is passed through here,
as the multiserver-job layer's ``MODE_START`` does), so every pick of a job that fits starts it.

Rewards: the multiserver-job layer's ``R_BSLD``, ``R_MEAN_BSLD`` (RLScheduler's: −the episode's mean bounded
slowdown at its end) and ``R_WAIT`` (:func:`msjgym.systems.msj.job_control.control_reward`).
"""
from __future__ import annotations

import numpy as np

from msjgym.core.jit import njit
from msjgym.systems.msj import control
from msjgym.systems.msj import job_control as jc
from msjgym.systems.msj.backfilling import heap_waiting, pop_first
from msjgym.systems.msj.control import X_INITIAL, X_TRUNCATED
from msjgym.systems.msj.state import (
    J_ARR, J_CLS, J_EST, J_SEQ, NEED_CAPACITY, RUNNING, T_NOW)
from msjgym.systems.multi_resource import job_observation as jo
from msjgym.systems.multi_resource.control import fits_somewhere
from msjgym.systems.multi_resource.state import first_node, start_on

new_job_control = jc.new_job_control  # the multiserver-job layer's record (K slots; its profile arrays unused here)


@njit
def pick(st, pr, ctl, jcs, b, j):
    """Make waiting job j the head: start it on the first node it fits, else reserve it and run to the next event."""
    jcs.ints[b, jc.Y_HEAD] = j + 1
    jcs.ints[b, jc.Y_HEAD_SEQ] = st.job_i[b, j, J_SEQ]
    node = first_node(st, pr, b, st.job_i[b, j, J_CLS])
    if node >= 0:
        start_on(st, pr, b, j, node)
        return
    control.wait(ctl, b)


@njit
def observe(st, pr, ctl, jcs, b, obs, mask):
    """Write system b's K×F observation into ``obs`` and its allowed actions into ``mask``."""
    K = jcs.slots.shape[1]
    R = pr.res_cap.shape[0]
    N = st.res_used.shape[1]
    now = st.sys_f[b, T_NOW]
    T = jcs.floats[b, jc.G_SCALE]
    DEM, FREE, QD = jo.FIXED, jo.FIXED + R, jo.FIXED + 2 * R
    obs[:, :] = 0.0
    mask[:] = False
    base, q = heap_waiting(st, pr, b, jcs.ints[b, jc.Y_ORDER], now)
    for k in range(q):
        c = st.job_i[b, st.own_i[b, base + k], J_CLS]
        for r in range(R):
            obs[0, QD + r] += pr.res_demand[c, r]
    for r in range(R):
        total = N * pr.res_cap[r]
        free = 0
        for node in range(N):
            free += pr.res_cap[r] - st.res_used[b, node, r]
        obs[0, FREE + r] = free / total
        obs[0, QD + r] = obs[0, QD + r] / total
    obs[0, jo.QUEUE] = q / K
    shown = min(q, K)
    sum_r = 0.0
    for i in range(shown):
        j = pop_first(st, b, base, q - i)
        jcs.slots[b, i] = j
        sum_r += st.job_f[b, j, J_EST]
    for i in range(shown, K):
        jcs.slots[b, i] = -1
    jcs.ints[b, jc.Y_SHOWN] = shown
    mean_r = sum_r / shown if shown > 0 else 0.0
    head = jc._head(st, jcs, b)
    for i in range(shown):
        j = jcs.slots[b, i]
        c = st.job_i[b, j, J_CLS]
        r_est = st.job_f[b, j, J_EST]
        w = now - st.job_f[b, j, J_ARR]
        obs[i, jo.PRESENT] = 1.0
        obs[i, jo.REQUESTED] = np.log1p(r_est / T)
        obs[i, jo.WAIT] = np.log1p(w / T)
        obs[i, jo.WAIT_RATIO] = w / (w + r_est) if w + r_est > 0.0 else 0.0
        obs[i, jo.REQUESTED_RELATIVE] = r_est / (r_est + mean_r) if r_est + mean_r > 0.0 else 0.5
        if first_node(st, pr, b, c) >= 0:
            obs[i, jo.FITS] = 1.0
        if j == head:
            obs[i, jo.RESERVED] = 1.0
        dominant = 0.0
        alignment = 0.0
        for r in range(R):
            share = pr.res_demand[c, r] / pr.res_cap[r]
            obs[i, DEM + r] = share
            dominant = max(dominant, share)
            alignment += share * obs[0, FREE + r]
        obs[i, jo.DOMINANT] = dominant
        obs[i, jo.ALIGNMENT] = alignment
        mask[i] = True
    if shown > 0:
        obs[0, jo.HEURISTIC] = 1.0
    else:
        mask[0] = True  # no job waits (the episode has ended): action 0 is allowed, a no-op
    for i in range(1, K):
        obs[i, jo.QUEUE] = obs[0, jo.QUEUE]
        for r in range(R):
            obs[i, FREE + r] = obs[0, FREE + r]
            obs[i, QD + r] = obs[0, QD + r]


@njit
def apply_action(st, pr, ctl, jcs, b, action):
    """Carry out a (valid) pick of system b; returns False for an action outside the mask."""
    K = jcs.slots.shape[1]
    if action < 0 or action >= K:
        return False
    j = jcs.slots[b, action]
    if j < 0:
        if jcs.ints[b, jc.Y_SHOWN] == 0 and action == 0:  # nothing waits (an ended episode): run on
            control.wait(ctl, b)
            return True
        return False
    pick(st, pr, ctl, jcs, b, j)
    return True


@njit
def resume_system(st, pr, ctl, jcs, b, obs, mask):
    """Events up to the next decision (an instant at which some waiting job fits some node), then the observation;
    0, or 2 when out of job slots (grow, call again)."""
    while True:
        status = control.advance(st, pr, ctl, b)
        if status == NEED_CAPACITY:
            return 2
        if status != RUNNING or ctl.ints[b, X_TRUNCATED] or fits_somewhere(st, pr, b):
            break
        control.wait(ctl, b)  # jobs wait, none fits: no pick could start one; run to the next event
    jc._episode_reward(st, pr, ctl, jcs, b)
    observe(st, pr, ctl, jcs, b, obs, mask)
    return 0


@njit
def step_system(st, pr, ctl, jcs, b, action, obs, mask):
    """One agent step of system b: the action, events up to the next decision, the observation. Returns 0, 1 (the
    action is not allowed: nothing changed) or 2 (out of job slots: grow and ``resume_system``)."""
    control.begin_step(ctl, b)
    if ctl.ints[b, X_INITIAL]:
        ctl.ints[b, X_INITIAL] = 0
    elif not apply_action(st, pr, ctl, jcs, b, action):
        return 1
    return resume_system(st, pr, ctl, jcs, b, obs, mask)


@njit
def reset_system(st, pr, ctl, jcs, b):
    """Empty system b at time 0 (MSJ's reset, and the resources held given back), in the episode's initial state."""
    control.reset_system(st, pr, ctl, b)
    st.res_used[b, :, :] = 0
    jc.reset_layer(st, jcs, b)


@njit
def step_batch(st, pr, ctl, jcs, actions, reset_first, obs, masks, codes):
    """``step_system`` for every system b (``reset_system`` first where ``reset_first[b]``); codes[b] as there."""
    for b in range(actions.size):
        if reset_first[b]:
            reset_system(st, pr, ctl, jcs, b)
            observe(st, pr, ctl, jcs, b, obs[b], masks[b])
            masks[b, :] = True
            codes[b] = 0
        else:
            codes[b] = step_system(st, pr, ctl, jcs, b, actions[b], obs[b], masks[b])


@njit
def resume_batch(st, pr, ctl, jcs, which, obs, masks, codes):
    for b in range(which.size):
        if which[b]:
            codes[b] = resume_system(st, pr, ctl, jcs, b, obs[b], masks[b])
