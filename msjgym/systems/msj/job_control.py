"""The compiled decision path of ``msjgym/JobScheduling-v0``: an agent picks the next job of a multiserver-job system
(an HPC machine), the backfilling rules of the ``priority`` policy fill around it.

One call per step and per system (:func:`step_batch` for the whole batch) applies the action, runs the system to the
next decision epoch through the MSJ control layer (:func:`msjgym.systems.msj.control.advance`: the same transitions
as the built-in policies' event loop) and writes the K×F observation (:mod:`msjgym.systems.msj.job_observation`).

Semantics (those of ``priority``: at every event, repeatedly take the head, the best waiting job; start it if it fits,
else reserve it and backfill, and stop), with the agent choosing the head:

* ``ACTION_PICK``: the agent picks one of the K shown jobs. If it fits, it starts now, and if jobs still wait the
  agent picks again at the same instant (dt = 0). If it does not fit, it is the *reserved head*: the backfilling rule
  (``priority``'s code, :mod:`msjgym.systems.msj.backfilling`, with the other waiting jobs in the base order) starts what it
  allows, and the system runs to the next event, where the agent picks again (it may pick another job).
  ``B_NONE``: nothing is backfilled. ``B_EASY``: EASY around the head's shadow time (``backfilling.easy``).
  ``B_NARROW``: RLScheduler's rule (``backfilling.narrow``): the head stays the head until it starts, so the agent is
  not asked while it waits; at every event it starts if it fits, else the rule backfills around its shadow time.
  ``B_CONSERVATIVE``: one pick per event: the picked job is placed first in the compression of the schedule, the
  others follow in the base order (``backfilling.conservative_sorted``), and the jobs whose reservation is now start.
* ``ACTION_BACKFILL`` (RLBackfilling: Kolker-Hicks, Zhang & Dai, "A reinforcement learning based backfilling
  strategy for HPC batch jobs", PMBS workshop at SC'23, arXiv:2404.09264): the base order chooses the head, as
  ``priority`` does (started while it fits); when it does not fit, it is reserved at its shadow time and the agent
  chooses which job to backfill, one at a time, among the shown jobs EASY would allow now (they fit now and end, by
  their requested time, by the shadow time, or fit in the servers the head leaves free then): the mask. When no shown
  job is allowed, the system runs to the next event. Only with ``B_EASY``. An agent that always takes the first
  allowed row backfills as ``backfilling.easy`` does (the candidates in the base order, each started if allowed), so
  it reproduces ``priority``'s EASY schedule job for job while no more than K jobs wait (EASY also considers the
  jobs past the K shown).
* ``ACTION_INSPECT`` (SchedInspector: Zhang, Dai, Bao, Xie & Lu, "SchedInspector: a batch job scheduling inspector
  using reinforcement learning", HPDC'22): the base order's best job (row 0) is the heuristic's pick; ``ACCEPT`` picks
  it as above, ``DELAY`` starts nothing and lets time run to the next event (no backfilling at this instant).

Decision epochs: with ``B_NONE`` / ``B_EASY``, an instant at which some waiting job fits (when none fits, every pick
would start nothing, and EASY backfills only jobs that fit: ``priority`` does nothing either); with ``B_CONSERVATIVE``
/ ``B_NARROW``, an instant at which some job waits (and, ``B_NARROW``, no head is reserved). With nothing waiting the
system runs to the next arrival. So an agent that always picks ``priority``'s head reproduces ``priority``'s schedule
job for job (``tests/test_job_env.py``).

Rewards (``R_*``, the control layer accumulating the step's part): ``R_BSLD`` −Σ bounded slowdowns of the jobs that
completed during the step; ``R_MEAN_BSLD`` 0 on every step but the episode's last, which gets −(mean bounded slowdown
of the jobs completed in the episode) (RLScheduler's, γ = 1); ``R_WAIT`` −∫ (waiting jobs) dt over the step (the
episode's return is −Σ waiting times, counted until the episode's end); ``R_UTIL`` 0 on every step but the last, which
gets ∫ (busy servers) dt / (n · (end − first arrival)), the episode's utilization.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from msjgym.core.jit import njit
from msjgym.systems.msj.backfilling import (
    B_CONSERVATIVE, B_EASY, B_NARROW, J_KEY, J_RES, O_FCFS, conservative_sorted, easy, heap_running, heap_waiting,
    narrow, narrow_head, pop_earliest_end, pop_first, reservation, set_narrow_head)
from msjgym.systems.msj import control
from msjgym.systems.msj import job_observation as jo
from msjgym.systems.msj.control import F_REWARD, X_INITIAL, X_TRUNCATED
from msjgym.systems.msj.state import (
    INF, J_ARR, J_CLS, J_EST, J_HPOS, J_SEQ, J_SIZE, NEED_CAPACITY, P_SERVERS, RUNNING, S_BUSY,
    S_NCOMP, S_NSERV, S_STATUS, T_NEXT_ARR, T_NOW, estimated_remaining, start_job)

ACTION_PICK = 0
ACTION_INSPECT = 1
ACTION_BACKFILL = 2
ACCEPT = 0  # ACTION_INSPECT: accept the base order's pick
DELAY = 1  # ACTION_INSPECT: start nothing now

R_BSLD = 0
R_MEAN_BSLD = 1
R_WAIT = 2
R_UTIL = 3

# jc.ints[b, :]
Y_ACTION = 0  # ACTION_PICK, ACTION_INSPECT or ACTION_BACKFILL
Y_ORDER = 1  # the base order (priority.O_*)
Y_BACKFILL = 2  # the backfilling rule (priority.B_*)
Y_REWARD = 3  # R_*
Y_SHOWN = 4  # rows filled at the last observation
Y_HEAD = 5  # the reserved head's slot + 1 (0: none)
Y_HEAD_SEQ = 6  # its arrival sequence number
Y_ACCURACY = 7  # 1: the observation has the estimate-accuracy columns (job_observation.ACCURACY ...)
Y_NSNAP = 8  # running jobs in the snapshot taken before the last advance (their completions credit the accuracy)
NY = 9
# jc.floats[b, :]
G_SCALE = 0  # T of the time columns
G_SUM = 1  # R_MEAN_BSLD: −Σ bounded slowdowns so far; R_UTIL: ∫ busy servers dt so far
G_FIRST = 2  # the episode's first arrival time
NG = 3

JobControl = namedtuple("JobControl", "ints floats slots ends avail snap_i snap_f acc")
JobControl.__doc__ = """Per-system state of the job-scheduling layer: ints[B, NY], floats[B, NG], slots[B, K] (the
job of each shown row, -1: none), the profile of the running jobs' estimated ends: ends[B, n + 1] (sorted) and
avail[B, n + 1] (servers free from each on); with the estimate-accuracy columns, the running jobs before the last
advance: snap_i[B, n, 3] (slot, sequence number, requested-time bucket) and snap_f[B, n] (min(1, run / requested),
credited only once the job has completed), and acc[B, ACCURACY_BUCKETS + 1, 2] (Σ accuracy, completed jobs) per
bucket, the last row over all buckets."""


def new_job_control(batch: int, window: int, servers: int, action: int, order: int, backfill: int, reward: int,
                    time_scale: float, estimate_accuracy: bool = False) -> JobControl:
    ints = np.zeros((batch, NY), np.int64)
    ints[:, Y_ACTION], ints[:, Y_ORDER], ints[:, Y_BACKFILL], ints[:, Y_REWARD] = action, order, backfill, reward
    ints[:, Y_ACCURACY] = int(estimate_accuracy)
    floats = np.zeros((batch, NG), np.float64)
    floats[:, G_SCALE] = time_scale
    snap = servers if estimate_accuracy else 1
    return JobControl(ints=ints, floats=floats, slots=np.full((batch, window), -1, np.int64),
                      ends=np.zeros((batch, servers + 1), np.float64), avail=np.zeros((batch, servers + 1), np.int64),
                      snap_i=np.zeros((batch, snap, 3), np.int64), snap_f=np.zeros((batch, snap), np.float64),
                      acc=np.zeros((batch, jo.ACCURACY_BUCKETS + 1, 2), np.float64))


def control_reward(reward: int) -> int:
    """What the MSJ control layer accumulates for the environment's reward ``R_*``."""
    return {R_BSLD: control.REWARD_BSLD, R_MEAN_BSLD: control.REWARD_BSLD, R_WAIT: control.REWARD_WAIT,
            R_UTIL: control.REWARD_BUSY}[reward]


def control_mode(backfill: int) -> int:
    """The MSJ control layer's decision epochs for ``backfill``: some job fits (none, EASY) or some job waits."""
    return control.MODE_QUEUE if backfill in (B_CONSERVATIVE, B_NARROW) else control.MODE_START


# ---------------------------------------------------------------- the reserved head
@njit(inline="always")
def _head(st, jc, b):
    """The reserved head (-1: none, or it started or left)."""
    h = jc.ints[b, Y_HEAD] - 1
    if h >= 0 and (st.job_i[b, h, J_SEQ] != jc.ints[b, Y_HEAD_SEQ] or st.job_i[b, h, J_HPOS] >= 0):
        return -1
    return h


@njit
def pick(st, pr, ctl, jc, b, j):
    """Make waiting job j the head: start it if it fits (the agent decides again if jobs wait), else reserve it, let
    the backfilling rule act, and run to the next event (see the module docstring)."""
    now = st.sys_f[b, T_NOW]
    rule = jc.ints[b, Y_BACKFILL]
    free = pr.ints[P_SERVERS] - st.sys_i[b, S_BUSY]
    jc.ints[b, Y_HEAD] = j + 1
    jc.ints[b, Y_HEAD_SEQ] = st.job_i[b, j, J_SEQ]
    if rule == B_CONSERVATIVE:
        base, q = heap_waiting(st, pr, b, jc.ints[b, Y_ORDER], now)
        st.job_f[b, j, J_KEY] = -INF  # placed first in the compression; the others in the base order
        conservative_sorted(st, pr, b, base, q, now)
        control.wait(ctl, b)
        return
    if pr.need[st.job_i[b, j, J_CLS]] <= free:
        start_job(st, pr, b, j)
        return
    if rule == B_EASY and free > 0:
        base, q = heap_waiting(st, pr, b, jc.ints[b, Y_ORDER], now)
        for k in range(q):  # j to the front: backfilling.easy backfills the others (sorted by the base order)
            if st.own_i[b, base + k] == j:
                st.own_i[b, base + k] = st.own_i[b, base]
                st.own_i[b, base] = j
                break
        easy(st, pr, b, base, q, free, now)
    elif rule == B_NARROW:
        set_narrow_head(st, b, j)  # backfilling.narrow's kept head, with its shadow time; narrow backfills around it
        st.job_f[b, j, J_RES] = reservation(st, pr, b, pr.need[st.job_i[b, j, J_CLS]], free, now)[0]
        narrow(st, pr, b, O_FCFS, now)
    control.wait(ctl, b)


@njit
def _follow_narrow_head(st, pr, ctl, b):
    """``B_NARROW`` at a decision epoch with a head kept: start it if it fits, else backfill around it and run to the
    next event (``backfilling.narrow``); returns False when no head is kept (the agent decides)."""
    h = narrow_head(st, b)
    if h < 0:
        return False
    if pr.need[st.job_i[b, h, J_CLS]] <= pr.ints[P_SERVERS] - st.sys_i[b, S_BUSY]:
        start_job(st, pr, b, h)
        set_narrow_head(st, b, -1)
        return True
    narrow(st, pr, b, O_FCFS, st.sys_f[b, T_NOW])  # the kept head does not fit: backfill only (order unused)
    control.wait(ctl, b)
    return True


# ---------------------------------------------------------------- the profile of the running jobs' estimated ends
@njit
def _profile(st, pr, jc, b, now):
    """The running jobs' estimated ends, sorted (equal ends merged), into ``jc.ends[b]`` with ``jc.avail[b]``, the
    servers free from each on; returns their number (the same steps as ``backfilling.reservation`` walks)."""
    base, n = heap_running(st, pr, b, now)
    avail = pr.ints[P_SERVERS] - st.sys_i[b, S_BUSY]
    P = 0
    while n > 0:
        t, freed, n = pop_earliest_end(st, pr, b, base, n, now)
        avail += freed
        jc.ends[b, P] = t
        jc.avail[b, P] = avail
        P += 1
    return P


@njit(inline="always")
def _earliest(jc, b, P, m):
    """The earliest estimated end from which ``m`` servers are free (the profile of :func:`_profile`)."""
    lo = 0
    hi = P - 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if jc.avail[b, mid] >= m:
            hi = mid
        else:
            lo = mid + 1
    return jc.ends[b, lo]


# ---------------------------------------------------------------- the accuracy of requested times (estimate_accuracy)
@njit(inline="always")
def _bucket(r, T):
    """``job_observation.accuracy_bucket``: r's half-octave of r / T, in [0, ACCURACY_BUCKETS)."""
    if r <= 0.0:
        return 0
    return int(min(max(np.floor(2.0 * np.log2(r / T)) + 20.0, 0.0), jo.ACCURACY_BUCKETS - 1.0))


@njit
def _snapshot_running(st, jc, b):
    """Remember the running jobs (slot, sequence number, bucket, accuracy) before the control layer runs events: those
    no longer running after it have completed (:func:`_credit_completions`). A job's run time is used only then."""
    n = st.sys_i[b, S_NSERV]
    T = jc.floats[b, G_SCALE]
    for i in range(n):
        j = st.heap[b, i]
        r = st.job_f[b, j, J_EST]
        jc.snap_i[b, i, 0] = j
        jc.snap_i[b, i, 1] = st.job_i[b, j, J_SEQ]
        jc.snap_i[b, i, 2] = _bucket(r, T)
        jc.snap_f[b, i] = min(1.0, st.job_f[b, j, J_SIZE] / r) if r > 0.0 else 1.0
    jc.ints[b, Y_NSNAP] = n


@njit
def _credit_completions(st, jc, b):
    """Add the snapshot's jobs that completed since (their slot holds another job or a job not in service: these
    systems never preempt) to the accuracy sums."""
    top = jo.ACCURACY_BUCKETS
    for i in range(jc.ints[b, Y_NSNAP]):
        j = jc.snap_i[b, i, 0]
        if st.job_i[b, j, J_SEQ] != jc.snap_i[b, i, 1] or st.job_i[b, j, J_HPOS] < 0:
            k = jc.snap_i[b, i, 2]
            jc.acc[b, k, 0] += jc.snap_f[b, i]
            jc.acc[b, k, 1] += 1.0
            jc.acc[b, top, 0] += jc.snap_f[b, i]
            jc.acc[b, top, 1] += 1.0
    jc.ints[b, Y_NSNAP] = 0


@njit
def _advance(st, pr, ctl, jc, b):
    """``control.advance``, crediting the jobs completed during it to the accuracy sums (with the columns on)."""
    if jc.ints[b, Y_ACCURACY] == 0:
        return control.advance(st, pr, ctl, b)
    _snapshot_running(st, jc, b)
    status = control.advance(st, pr, ctl, b)
    _credit_completions(st, jc, b)
    return status


# ---------------------------------------------------------------- observation and mask
@njit
def observe(st, pr, ctl, jc, b, obs, mask):
    """Write system b's K×F observation into ``obs`` and its allowed actions into ``mask`` (columns:
    :mod:`msjgym.systems.msj.job_observation`; F = 17 with the estimate-accuracy columns, ``Y_ACCURACY``)."""
    K = jc.slots.shape[1]
    n = pr.ints[P_SERVERS]
    now = st.sys_f[b, T_NOW]
    free = n - st.sys_i[b, S_BUSY]
    T = jc.floats[b, G_SCALE]
    obs[:, :] = 0.0
    mask[:] = False
    base, q = heap_waiting(st, pr, b, jc.ints[b, Y_ORDER], now)
    queue_need = 0
    for k in range(q):
        queue_need += pr.need[st.job_i[b, st.own_i[b, base + k], J_CLS]]
    shown = min(q, K)
    sum_r = 0.0
    for i in range(shown):
        j = pop_first(st, b, base, q - i)
        jc.slots[b, i] = j
        sum_r += st.job_f[b, j, J_EST]
    for i in range(shown, K):
        jc.slots[b, i] = -1
    jc.ints[b, Y_SHOWN] = shown
    P = _profile(st, pr, jc, b, now) if q > 0 else 0
    mean_r = sum_r / shown if shown > 0 else 0.0
    head = narrow_head(st, b) if jc.ints[b, Y_BACKFILL] == B_NARROW else _head(st, jc, b)
    head_delay = 0.0
    if head >= 0 and jc.ints[b, Y_BACKFILL] != 0:  # a backfilling rule (priority.B_NONE = 0) and a reserved head
        if jc.ints[b, Y_BACKFILL] == B_CONSERVATIVE and st.job_f[b, head, J_RES] < INF:
            s = st.job_f[b, head, J_RES]
        elif pr.need[st.job_i[b, head, J_CLS]] <= free:
            s = now
        else:
            s = _earliest(jc, b, P, pr.need[st.job_i[b, head, J_CLS]])
        head_delay = np.log1p(max(s - now, 0.0) / T)
    accuracy = jc.ints[b, Y_ACCURACY] != 0
    a = (1.0 + jc.acc[b, jo.ACCURACY_BUCKETS, 0]) / (1.0 + jc.acc[b, jo.ACCURACY_BUCKETS, 1]) if accuracy else 1.0
    for i in range(shown):
        j = jc.slots[b, i]
        m = pr.need[st.job_i[b, j, J_CLS]]
        r = st.job_f[b, j, J_EST]
        w = now - st.job_f[b, j, J_ARR]
        obs[i, jo.PRESENT] = 1.0
        obs[i, jo.NEED] = m / n
        obs[i, jo.REQUESTED] = np.log1p(r / T)
        obs[i, jo.WAIT] = np.log1p(w / T)
        obs[i, jo.WAIT_RATIO] = w / (w + r) if w + r > 0.0 else 0.0
        obs[i, jo.REQUESTED_RELATIVE] = r / (r + mean_r) if r + mean_r > 0.0 else 0.5
        if m <= free:
            obs[i, jo.FITS] = 1.0
        else:
            obs[i, jo.START_DELAY] = np.log1p((_earliest(jc, b, P, m) - now) / T)
        if j == head:
            obs[i, jo.RESERVED] = 1.0
        if accuracy:
            k = _bucket(r, T)
            a_r = (a + jc.acc[b, k, 0]) / (1.0 + jc.acc[b, k, 1])
            p = r * a_r
            obs[i, jo.PREDICTED] = np.log1p(p / T)
            obs[i, jo.PREDICTED_WAIT_RATIO] = w / (w + p) if w + p > 0.0 else 0.0
        mask[i] = True
    if shown > 0:
        obs[0, jo.HEURISTIC] = 1.0
    else:
        mask[0] = True  # no job waits (the episode has ended): action 0 is allowed, a no-op
    for i in range(K):
        obs[i, jo.FREE] = free / n
        obs[i, jo.QUEUE] = q / K
        obs[i, jo.QUEUE_NEED] = queue_need / n
        obs[i, jo.HEAD_DELAY] = head_delay
        if accuracy:
            obs[i, jo.ACCURACY] = a
    if jc.ints[b, Y_ACTION] == ACTION_BACKFILL and shown > 0:
        _backfill_mask(st, pr, jc, b, P, shown, free, now, mask)
    if jc.ints[b, Y_ACTION] == ACTION_INSPECT:
        mask[:] = False
        mask[ACCEPT] = shown > 0
        # delaying when nothing runs and no job will arrive would strand the waiting jobs
        mask[DELAY] = st.sys_i[b, S_NSERV] > 0 or st.sys_f[b, T_NEXT_ARR] < INF or shown == 0


@njit
def _backfill_mask(st, pr, jc, b, P, shown, free, now, mask):
    """``ACTION_BACKFILL``: the shown jobs EASY allows now behind the head (row 0, the base order's best): they fit in
    the ``free`` servers and end by the head's shadow time (by their requested times) or fit in the servers free then
    beyond the head's need (``backfilling.easy_backfill``'s rule; shadow and extra from the profile ``jc.ends/avail``
    of :func:`_profile`, the steps of ``backfilling.reservation``). If the head fits, only row 0 (start it)."""
    mask[:] = False
    head = jc.slots[b, 0]
    need = pr.need[st.job_i[b, head, J_CLS]]
    if need <= free:
        mask[0] = True
        return
    lo = 0
    while jc.avail[b, lo] < need:  # the first estimated end from which the head fits (it does once all have ended)
        lo += 1
    shadow = jc.ends[b, lo]
    extra = jc.avail[b, lo] - need
    for i in range(1, shown):
        j = jc.slots[b, i]
        m = pr.need[st.job_i[b, j, J_CLS]]
        if m <= free and (now + estimated_remaining(st, b, j, now) <= shadow or m <= extra):
            mask[i] = True


@njit
def _backfill_epoch(st, pr, ctl, jc, b, obs, mask):
    """``ACTION_BACKFILL`` at a decision epoch: start the base order's head if it fits (returns False: run on);
    else reserve it and observe; True if some shown job may be backfilled (the agent decides), else wait for the next
    event (False)."""
    now = st.sys_f[b, T_NOW]
    base, q = heap_waiting(st, pr, b, jc.ints[b, Y_ORDER], now)
    head = st.own_i[b, base]
    if pr.need[st.job_i[b, head, J_CLS]] <= pr.ints[P_SERVERS] - st.sys_i[b, S_BUSY]:
        start_job(st, pr, b, head)
        return False
    jc.ints[b, Y_HEAD] = head + 1
    jc.ints[b, Y_HEAD_SEQ] = st.job_i[b, head, J_SEQ]
    observe(st, pr, ctl, jc, b, obs, mask)
    if mask.any():
        return True
    control.wait(ctl, b)
    return False


# ---------------------------------------------------------------- steps
@njit
def apply_action(st, pr, ctl, jc, b, action):
    """Carry out a (valid) action of system b; returns False for an action outside the mask."""
    K = jc.slots.shape[1]
    if jc.ints[b, Y_ACTION] == ACTION_INSPECT:
        if action == DELAY:
            control.wait(ctl, b)
            return True
        if action != ACCEPT:
            return False
        action = 0
    if action < 0 or action >= K:
        return False
    j = jc.slots[b, action]
    if j < 0:
        if jc.ints[b, Y_SHOWN] == 0 and action == 0:  # nothing waits (an ended episode): run on
            control.wait(ctl, b)
            return True
        return False
    if jc.ints[b, Y_ACTION] == ACTION_BACKFILL:
        start_job(st, pr, b, j)  # allowed by the mask: it fits now
        return True
    pick(st, pr, ctl, jc, b, j)
    return True


@njit
def _ended(st, ctl, b):
    return ctl.ints[b, X_TRUNCATED] != 0 or st.sys_i[b, S_STATUS] != RUNNING


@njit
def _episode_reward(st, pr, ctl, jc, b):
    """``R_MEAN_BSLD`` / ``R_UTIL``: move the step's part into the episode's sum; at the episode's end, its reward."""
    kind = jc.ints[b, Y_REWARD]
    if kind != R_MEAN_BSLD and kind != R_UTIL:
        return
    jc.floats[b, G_SUM] += ctl.floats[b, F_REWARD]
    ctl.floats[b, F_REWARD] = 0.0
    if not _ended(st, ctl, b):
        return
    if kind == R_MEAN_BSLD:
        done = st.sys_i[b, S_NCOMP]
        ctl.floats[b, F_REWARD] = jc.floats[b, G_SUM] / done if done > 0 else 0.0
    else:
        span = st.sys_f[b, T_NOW] - jc.floats[b, G_FIRST]
        ctl.floats[b, F_REWARD] = jc.floats[b, G_SUM] / (pr.ints[P_SERVERS] * span) if span > 0.0 else 0.0


@njit
def resume_system(st, pr, ctl, jc, b, obs, mask):
    """Events up to the next decision, then the observation; 0, or 2 when out of job slots (grow, call again)."""
    observed = False
    while True:
        status = _advance(st, pr, ctl, jc, b)
        if status == NEED_CAPACITY:
            return 2
        if status != RUNNING or ctl.ints[b, X_TRUNCATED]:
            break
        if jc.ints[b, Y_ACTION] == ACTION_BACKFILL:
            observed = _backfill_epoch(st, pr, ctl, jc, b, obs, mask)
            if observed:
                break
            continue
        if jc.ints[b, Y_BACKFILL] != B_NARROW or not _follow_narrow_head(st, pr, ctl, b):
            break
    _episode_reward(st, pr, ctl, jc, b)
    if not observed:
        observe(st, pr, ctl, jc, b, obs, mask)
    return 0


@njit
def step_system(st, pr, ctl, jc, b, action, obs, mask):
    """One agent step of system b: the action, then events up to the next decision, then the observation. Returns 0
    (done), 1 (the action is not allowed: nothing changed) or 2 (out of job slots: grow and ``resume_system``)."""
    control.begin_step(ctl, b)
    if ctl.ints[b, X_INITIAL]:
        ctl.ints[b, X_INITIAL] = 0
    elif jc.ints[b, Y_ACTION] == ACTION_BACKFILL and (action < 0 or action >= mask.size or not mask[action]):
        return 1  # a job EASY would not backfill now (the mask of the last observation)
    elif not apply_action(st, pr, ctl, jc, b, action):
        return 1
    return resume_system(st, pr, ctl, jc, b, obs, mask)


@njit(inline="glue")
def reset_layer(st, jc, b):
    """This layer's part of an episode's start for system b (no reserved head, no accuracy credited, no reward
    summed; the episode's first arrival), once the system itself has been emptied; the multi-resource layer uses it
    too."""
    jc.ints[b, Y_HEAD] = 0
    jc.ints[b, Y_NSNAP] = 0
    jc.acc[b, :, :] = 0.0
    jc.floats[b, G_SUM] = 0.0
    jc.floats[b, G_FIRST] = st.sys_f[b, T_NEXT_ARR]


@njit
def reset_system(st, pr, ctl, jc, b):
    """Empty system b at time 0, in the episode's initial state (its random stream continues)."""
    control.reset_system(st, pr, ctl, b)
    set_narrow_head(st, b, -1)  # no head kept by backfilling.narrow
    reset_layer(st, jc, b)


@njit
def step_batch(st, pr, ctl, jc, actions, reset_first, obs, masks, codes):
    """``step_system`` for every system b (``reset_system`` first where ``reset_first[b]``); codes[b] as there."""
    for b in range(actions.size):
        if reset_first[b]:
            reset_system(st, pr, ctl, jc, b)
            observe(st, pr, ctl, jc, b, obs[b], masks[b])
            masks[b, :] = True
            codes[b] = 0
        else:
            codes[b] = step_system(st, pr, ctl, jc, b, actions[b], obs[b], masks[b])


@njit
def resume_batch(st, pr, ctl, jc, which, obs, masks, codes):
    for b in range(which.size):
        if which[b]:
            codes[b] = resume_system(st, pr, ctl, jc, b, obs[b], masks[b])
