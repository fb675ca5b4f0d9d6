"""External control of the MSJ system: an agent, not a built-in policy, decides which jobs are in service.

Used by the Gymnasium environments (``msjgym.envs``). Events are processed by the compiled event loop's own
transitions (:mod:`msjgym.systems.msj.loop`: an arrival, the completions at one instant, and ``end_event``, which
closes an event once its decisions are taken, as ``loop.run`` does after the policy's scheduler), so an agent that
takes the decisions a built-in policy would take reproduces the fast path's trajectory, statistics included (the
twin test). Two modes:

* ``MODE_START`` (non-preemptive): a decision epoch is any instant at which some waiting job fits. The agent starts
  one waiting job (from a window of the oldest waiting jobs, or the oldest of a class) or waits for the next event.
  Several starts at one instant are several decisions.
* ``MODE_QUEUE`` (``msjgym/JobScheduling-v0``, :mod:`msjgym.systems.msj.job_control`): as ``MODE_START``, but a
  decision epoch is any instant at which some job waits (the job-scheduling layer takes the decisions).
* ``MODE_SET`` (preemptive): after every event the agent chooses the jobs in service anew, one class at a time
  ("add the oldest not yet chosen job of class c"), then commits; the choice replaces the jobs in service
  (preempt-resume).

Control state, per system (``ControlState``): ``ints[b, X_*]``, ``floats[b, F_*]``, and the window's job slots.
Rewards (``X_REWARD``): ``REWARD_JOBS`` (the default), −∫ (jobs in system) dt over the time a step advanced
(``REWARD_WAIT``: −∫ (waiting jobs) dt; ``REWARD_BUSY``: +∫ (busy servers) dt); or
``REWARD_BSLD``, −max(1, response / max(run time, τ)) for each job that completed during the step (its bounded
slowdown, τ the threshold ``params.floats[P_TAU]``; Feitelson, Rudolph, Schwiegelshohn, Sevcik & Wong, "Theory and
practice in parallel job scheduling", JSSPP 1997), so an episode's return is −Σ bounded slowdowns of the jobs it
completed: the objective of RLScheduler (Zhang, Dai, Bao, Xie & Lu, "RLScheduler: an automated HPC batch job
scheduler using reinforcement learning", SC'20, §3).

Trace windows (``X_TRACE_JOBS`` = M > 0, a replayed trace only): each episode replays M consecutive jobs of the
trace from a start drawn uniformly from the system's stream at reset (``S_TRACE0``), and runs until they all
completed (no later job arrives): :mod:`msjgym.systems.msj.trace.arrivals`.

An episode starts in an initial state: time 0, no job, every action allowed and all of them equivalent (the first
step runs the system to its first decision epoch). Generic tools that take a random action right after a reset (the
environment checkers) then always take a valid one; afterwards a masked action is an error, never a silent fix.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from msjgym.core import rng
from msjgym.core.jit import njit
from msjgym.systems.msj.state import (
    C_BOUND, C_HEAD, C_N, C_TAIL, C_X, DONE, J_ARR, J_CLS, J_EST, J_HPOS, J_NEXT, J_PREV, J_SEQ, J_SIZE,
    NEED_CAPACITY, P_K, P_LAMBDA, P_SERVERS, P_TAU, P_TRACE, RUNNING, S_BATCH, S_BUSY,
    S_NARR, S_NEXT_CHK, S_NFREE, S_NJOBS, S_NSERV, S_STATUS, T_NEXT_ARR, T_NOW, apply_targets, next_completion_time,
    start_next, unlink)
from msjgym.systems.msj import observation as ob
from msjgym.systems.msj.transitions import _record_admission
from msjgym.core.plug import ref
from msjgym.systems.msj.loop import NO_HOOKS, _arrival, _completions, end_event, end_replay, finish_job
from msjgym.systems.msj.trace.arrivals import close_window, first_job
from msjgym.systems.msj.state import MODE_QUEUE, MODE_SET, MODE_START  # noqa: F401  (defined with the state layout)

# ctl.ints[b, :]
X_MODE = 0
X_PENDING = 1  # slot of the last arrival, its admission not yet recorded (-1: none)
X_NEED_EVENT = 2  # the agent waited / committed: process an event before the next decision
X_TRUNCATED = 3  # the step ended at the horizon
X_MAX_ARRIVALS = 4  # horizon in arrivals (0: none)
X_WINDOW = 5  # window size W (MODE_START) or sequence length L (MODE_SET)
X_CHOSEN = 6  # MODE_SET: servers chosen so far
X_INITIAL = 7  # the episode's initial state (time 0, empty): every action is allowed and starts the clock
X_POST = 8  # an event was processed; its admission record, count, checkpoint and end check wait for the decisions
X_ESTIMATES = 9  # 1: the observation ends with the window's requested run times
X_REWARD = 10  # REWARD_JOBS or REWARD_BSLD
X_TRACE_JOBS = 11  # > 0: a trace's episodes are windows of this many consecutive jobs from a random start
NX = 12

REWARD_JOBS = 0  # −∫ (jobs in system) dt
REWARD_BSLD = 1  # −(bounded slowdown) of each job at its completion
REWARD_WAIT = 2  # −∫ (waiting jobs) dt
REWARD_BUSY = 3  # +∫ (busy servers) dt (msjgym/JobScheduling-v0's utilization reward is built on it)

# ctl.floats[b, :]
F_MAX_TIME = 0  # horizon in time (inf: none)
F_REWARD = 1  # reward accumulated since the last step
F_DT = 2  # time advanced since the last step
NF = 3

ControlState = namedtuple("ControlState", "ints floats slots")
ControlState.__doc__ = "Per-system control state: ints[B, NX], floats[B, NF], slots[B, W] (the window's job slots)."


def new_control(batch: int, mode: int, window: int, max_time: float, max_arrivals: int,
                estimates: bool = False, reward: int = REWARD_JOBS, trace_jobs: int = 0) -> ControlState:
    ints = np.zeros((batch, NX), dtype=np.int64)
    ints[:, X_ESTIMATES] = int(estimates)
    ints[:, X_REWARD] = reward
    ints[:, X_TRACE_JOBS] = trace_jobs
    ints[:, X_MODE] = mode
    ints[:, X_PENDING] = -1
    ints[:, X_MAX_ARRIVALS] = max_arrivals
    ints[:, X_WINDOW] = window
    floats = np.zeros((batch, NF), dtype=np.float64)
    floats[:, F_MAX_TIME] = max_time
    return ControlState(ints=ints, floats=floats, slots=np.full((batch, window), -1, dtype=np.int64))


observation_size = ob.observation_size  # the layout: msjgym.systems.msj.observation
action_count = ob.action_count


# ---------------------------------------------------------------- decisions
@njit
def _fits_somewhere(st, pr, b):
    """Does some waiting job fit the free servers?"""
    free = pr.ints[P_SERVERS] - st.sys_i[b, S_BUSY]
    for c in range(pr.ints[P_K]):
        if st.cls_i[b, c, C_BOUND] >= 0 and pr.need[c] <= free:
            return True
    return False


@njit
def _record_pending(st, ctl, b):
    j = ctl.ints[b, X_PENDING]
    if j >= 0:
        _record_admission(st, b, j)
        ctl.ints[b, X_PENDING] = -1


@njit
def advance(st, pr, ctl, b):
    """Process events until the agent must decide, the run is over, or the horizon is reached.

    Returns the system's status (RUNNING, DONE, NEED_CAPACITY); ``ctl.ints[b, X_TRUNCATED]`` is set at the horizon.
    Accumulates the step's reward (−∫ N dt, or −bounded slowdown per completion) and elapsed time in ``ctl.floats``.
    """
    mode = ctl.ints[b, X_MODE]
    kind = ctl.ints[b, X_REWARD]
    per_job = kind == REWARD_BSLD
    while True:
        if st.sys_i[b, S_STATUS] != RUNNING:
            _record_pending(st, ctl, b)
            return st.sys_i[b, S_STATUS]
        if not ctl.ints[b, X_NEED_EVENT]:
            if mode == MODE_SET or (mode == MODE_QUEUE and st.sys_i[b, S_NJOBS] > st.sys_i[b, S_NSERV]) or (
                    mode == MODE_START and _fits_somewhere(st, pr, b)):
                return RUNNING
        if ctl.ints[b, X_POST]:  # the decisions at the last event's instant are taken: close that event as the
            ctl.ints[b, X_POST] = 0  # loop does after its scheduler (loop.end_event: admission, count, checkpoint, end)
            joined = ctl.ints[b, X_PENDING]
            ctl.ints[b, X_PENDING] = -1
            end_event(st, pr, b, joined)
            continue
        t_completion = next_completion_time(st, b)
        t_arrival = st.sys_f[b, T_NEXT_ARR]
        arrival = t_arrival < t_completion
        t_event = t_arrival if arrival else t_completion
        if t_event == np.inf:  # a replayed trace has ended
            _record_pending(st, ctl, b)
            end_replay(st, pr, b)
            return DONE
        max_time = ctl.floats[b, F_MAX_TIME]
        max_arrivals = ctl.ints[b, X_MAX_ARRIVALS]
        if t_event >= max_time or (arrival and 0 < max_arrivals <= st.sys_i[b, S_NARR]):
            _record_pending(st, ctl, b)
            if t_event >= max_time:  # count the reward up to the horizon
                dt = max_time - st.sys_f[b, T_NOW]
                ctl.floats[b, F_REWARD] -= _cost_rate(st, b, kind) * dt
                ctl.floats[b, F_DT] += dt
            ctl.ints[b, X_TRUNCATED] = 1
            return RUNNING
        if arrival and st.sys_i[b, S_NFREE] == 0:
            return NEED_CAPACITY
        dt = t_event - st.sys_f[b, T_NOW]
        ctl.floats[b, F_REWARD] -= _cost_rate(st, b, kind) * dt
        ctl.floats[b, F_DT] += dt
        if arrival:
            ctl.ints[b, X_PENDING] = _arrival(st, pr, b, NO_HOOKS, (ref(st), ref(pr), False))
            close_window(st, b, ctl.ints[b, X_TRACE_JOBS])
        elif per_job:
            _bsld_completions(st, pr, ctl, b, t_completion)
        else:
            _completions(st, pr, b, t_completion, NO_HOOKS, (ref(st), ref(pr), False))
        ctl.ints[b, X_NEED_EVENT] = 0
        ctl.ints[b, X_POST] = 1


@njit(inline="always")
def _cost_rate(st, b, kind):
    """The reward's cost per unit time now (the step's reward is −∫ of it): jobs in system (``REWARD_JOBS``), waiting
    jobs (``REWARD_WAIT``), minus the busy servers (``REWARD_BUSY``), or 0 (``REWARD_BSLD``: a reward per job)."""
    if kind == REWARD_JOBS:
        return float(st.sys_i[b, S_NJOBS])
    if kind == REWARD_WAIT:
        return float(st.sys_i[b, S_NJOBS] - st.sys_i[b, S_NSERV])
    if kind == REWARD_BUSY:
        return -float(st.sys_i[b, S_BUSY])
    return 0.0


@njit
def _bsld_completions(st, pr, ctl, b, now):
    """``_completions`` (the same transitions, in the same order), crediting each completing job's bounded slowdown
    max(1, response / max(run time, τ)) to the step's reward with a minus sign (the formula of the per-job
    statistics, ``loop.finish_job``)."""
    st.sys_f[b, T_NOW] = now
    tau = pr.floats[P_TAU]
    while next_completion_time(st, b) == now:
        j = st.heap[b, 0]
        ctl.floats[b, F_REWARD] -= max(1.0, (now - st.job_f[b, j, J_ARR]) / max(st.job_f[b, j, J_SIZE], tau))
        finish_job(st, pr, b, j, NO_HOOKS, (ref(st), ref(pr), False))


@njit
def start_job(st, pr, ctl, b, j):
    """MODE_START: start waiting job j now (it must fit). If it is not the oldest waiting job of its class, it is
    moved ahead of the others in the class list (its served jobs stay a prefix)."""
    c = st.job_i[b, j, J_CLS]
    bound = st.cls_i[b, c, C_BOUND]
    if j != bound:
        unlink(st, b, c, j)
        prev = st.job_i[b, bound, J_PREV]
        st.job_i[b, j, J_PREV] = prev
        st.job_i[b, j, J_NEXT] = bound
        st.job_i[b, bound, J_PREV] = j
        if prev < 0:
            st.cls_i[b, c, C_HEAD] = j
        else:
            st.job_i[b, prev, J_NEXT] = j
        st.cls_i[b, c, C_BOUND] = j
    start_next(st, pr, b, c)


@njit
def wait(ctl, b):
    """MODE_START: let time run to the next event."""
    ctl.ints[b, X_NEED_EVENT] = 1


@njit
def choose(st, pr, ctl, b, c):
    """MODE_SET: add the oldest not yet chosen class-c job to the set to serve (it must fit what is left)."""
    st.scratch[b, c] += 1
    ctl.ints[b, X_CHOSEN] += pr.need[c]


@njit
def commit(st, pr, ctl, b):
    """MODE_SET: serve the chosen jobs (preempting the others), then run to the next event."""
    apply_targets(st, pr, b)
    for c in range(pr.ints[P_K]):
        st.scratch[b, c] = 0
    ctl.ints[b, X_CHOSEN] = 0
    ctl.ints[b, X_NEED_EVENT] = 1


# ---------------------------------------------------------------- observations and masks
@njit
def observe(st, pr, ctl, b, obs, mask):
    """Write system b's observation into ``obs`` (float32[D]) and its valid actions into ``mask`` (bool[A]).

    Wait (commit) is always allowed but when no event can come any more (a replayed trace has ended, nothing would
    run) and a job could start: it would strand the waiting jobs, and end the episode with jobs never completed."""
    if ctl.ints[b, X_MODE] == MODE_START:
        _observe_start(st, pr, ctl, b, obs, mask)
    else:
        _observe_set(st, pr, ctl, b, obs, mask)


@njit
def _oldest(st, pr, b, ptr_base):
    """The class whose walk pointer (scratch[b, ptr_base + c]) holds the oldest job, or -1."""
    best = -1
    best_seq = 0
    for c in range(pr.ints[P_K]):
        j = st.scratch[b, ptr_base + c]
        if j >= 0 and (best < 0 or st.job_i[b, j, J_SEQ] < best_seq):
            best = c
            best_seq = st.job_i[b, j, J_SEQ]
    return best


@njit
def _observe_start(st, pr, ctl, b, obs, mask):
    """[free/n; per class: waiting, in service, age of its oldest waiting job; per window slot: present, need/n,
    age, class one-hot; with X_ESTIMATES, per window slot: requested run time] (offsets:
    ``msjgym.systems.msj.observation``); mask: window slots that fit, classes whose oldest waiting job fits, wait."""
    K = pr.ints[P_K]
    n = pr.ints[P_SERVERS]
    W = ctl.ints[b, X_WINDOW]
    now = st.sys_f[b, T_NOW]
    free = n - st.sys_i[b, S_BUSY]
    obs[:] = 0.0
    mask[:] = False
    obs[ob.FREE] = free / n
    ptr = K  # scratch[b, K + c]: next waiting class-c job of the merge
    for c in range(K):
        head = st.cls_i[b, c, C_BOUND]
        st.scratch[b, ptr + c] = head
        at = ob.class_at(MODE_START, c)
        obs[at + ob.WAITING] = st.cls_i[b, c, C_N] - st.cls_i[b, c, C_X]
        obs[at + ob.IN_SERVICE] = st.cls_i[b, c, C_X]
        if head >= 0:
            obs[at + ob.OLDEST_AGE] = now - st.job_f[b, head, J_ARR]
            mask[ob.class_action(W, c)] = pr.need[c] <= free
    for i in range(W):
        c = _oldest(st, pr, b, ptr)
        if c < 0:
            ctl.slots[b, i] = -1
            continue
        j = st.scratch[b, ptr + c]
        st.scratch[b, ptr + c] = st.job_i[b, j, J_NEXT]
        ctl.slots[b, i] = j
        row = ob.slot_at(MODE_START, K, i)
        obs[row + ob.SLOT_PRESENT] = 1.0
        obs[row + ob.SLOT_NEED] = pr.need[c] / n
        obs[row + ob.SLOT_AGE] = now - st.job_f[b, j, J_ARR]
        obs[row + ob.SLOT_CLASS + c] = 1.0
        if ctl.ints[b, X_ESTIMATES]:
            obs[ob.estimates_at(MODE_START, K, W) + i] = st.job_f[b, j, J_EST]
        mask[i] = pr.need[c] <= free
    wait_at = ob.wait_action(MODE_START, K, W)
    mask[wait_at] = True
    if st.sys_i[b, S_NSERV] == 0 and st.sys_f[b, T_NEXT_ARR] == np.inf and mask[:wait_at].any():
        mask[wait_at] = False  # a replayed trace has ended and nothing runs: waiting would strand the waiting jobs


@njit
def _observe_set(st, pr, ctl, b, obs, mask):
    """[capacity left/n, sequence truncated; per class: jobs in system, chosen, in service; per sequence slot (the
    oldest L jobs in system, in arrival order): present, in service, class one-hot; with X_ESTIMATES, per sequence
    slot: requested run time] (offsets: ``msjgym.systems.msj.observation``); mask: classes with an unchosen job that
    fits what is left, commit."""
    K = pr.ints[P_K]
    n = pr.ints[P_SERVERS]
    L = ctl.ints[b, X_WINDOW]
    left = n - ctl.ints[b, X_CHOSEN]
    obs[:] = 0.0
    mask[:] = False
    obs[ob.LEFT] = left / n
    obs[ob.TRUNCATED] = 1.0 if st.sys_i[b, S_NJOBS] > L else 0.0
    ptr = K
    for c in range(K):
        st.scratch[b, ptr + c] = st.cls_i[b, c, C_HEAD]
        at = ob.class_at(MODE_SET, c)
        obs[at + ob.PRESENT] = st.cls_i[b, c, C_N]
        obs[at + ob.CHOSEN] = st.scratch[b, c]
        obs[at + ob.SERVING] = st.cls_i[b, c, C_X]
        mask[c] = st.scratch[b, c] < st.cls_i[b, c, C_N] and pr.need[c] <= left
    for i in range(L):
        c = _oldest(st, pr, b, ptr)
        if c < 0:
            break
        j = st.scratch[b, ptr + c]
        st.scratch[b, ptr + c] = st.job_i[b, j, J_NEXT]
        row = ob.slot_at(MODE_SET, K, i)
        obs[row + ob.SEQ_PRESENT] = 1.0
        obs[row + ob.SEQ_IN_SERVICE] = 1.0 if st.job_i[b, j, J_HPOS] >= 0 else 0.0
        obs[row + ob.SEQ_CLASS + c] = 1.0
        if ctl.ints[b, X_ESTIMATES]:
            obs[ob.estimates_at(MODE_SET, K, L) + i] = st.job_f[b, j, J_EST]
    commit_at = ob.wait_action(MODE_SET, K, L)
    mask[commit_at] = True
    if ctl.ints[b, X_CHOSEN] == 0 and st.sys_f[b, T_NEXT_ARR] == np.inf and mask[:commit_at].any():
        mask[commit_at] = False  # a replayed trace has ended: serving nothing would strand the jobs present


# ---------------------------------------------------------------- steps of a batch
@njit
def begin_step(ctl, b):
    ctl.floats[b, F_REWARD] = 0.0
    ctl.floats[b, F_DT] = 0.0
    ctl.ints[b, X_TRUNCATED] = 0


@njit
def apply_action(st, pr, ctl, b, action):
    """Carry out a (valid) action of system b; returns False for an action outside the mask."""
    K = pr.ints[P_K]
    if ctl.ints[b, X_MODE] == MODE_START:
        W = ctl.ints[b, X_WINDOW]
        free = pr.ints[P_SERVERS] - st.sys_i[b, S_BUSY]
        if action == ob.wait_action(MODE_START, K, W):
            wait(ctl, b)
            return True
        if action < W:
            j = ctl.slots[b, action]
            if j < 0 or pr.need[st.job_i[b, j, J_CLS]] > free:
                return False
            start_job(st, pr, ctl, b, j)
            return True
        c = action - ob.class_action(W, 0)
        if c >= K or st.cls_i[b, c, C_BOUND] < 0 or pr.need[c] > free:
            return False
        start_next(st, pr, b, c)
        return True
    if action == ob.wait_action(MODE_SET, K, 0):
        commit(st, pr, ctl, b)
        return True
    if action < 0 or action > K or st.scratch[b, action] >= st.cls_i[b, action, C_N] \
            or pr.need[action] > pr.ints[P_SERVERS] - ctl.ints[b, X_CHOSEN]:
        return False
    choose(st, pr, ctl, b, action)
    return True


@njit
def reset_system(st, pr, ctl, b):
    """Empty system b at time 0, in the episode's initial state (its random stream continues)."""
    K = pr.ints[P_K]
    cap = st.job_i.shape[1]
    for c in range(K):
        st.cls_i[b, c, :] = 0
        st.cls_i[b, c, C_HEAD] = -1
        st.cls_i[b, c, C_TAIL] = -1
        st.cls_i[b, c, C_BOUND] = -1
        st.cls_f[b, c, :] = 0.0
        st.scratch[b, c] = 0
    st.sys_i[b, :] = 0
    st.sys_i[b, S_NFREE] = cap
    st.sys_i[b, S_BATCH] = -1
    st.sys_i[b, S_NEXT_CHK] = 1024
    st.sys_f[b, :] = 0.0
    for i in range(cap):
        st.slots[b, i] = cap - 1 - i
    st.bstat[b, :, :, :] = 0.0
    st.bsys[b, :, :] = 0.0
    st.hist[b, :, :, :] = 0
    st.chk[b, :, :] = 0.0
    if pr.ints[P_TRACE]:
        first_job(st, pr, b, ctl.ints[b, X_TRACE_JOBS])
    else:
        st.sys_f[b, T_NEXT_ARR] = rng.exponential(st.rng, b) / pr.floats[P_LAMBDA]
    ctl.ints[b, X_PENDING] = -1
    ctl.ints[b, X_NEED_EVENT] = 0
    ctl.ints[b, X_CHOSEN] = 0
    ctl.ints[b, X_INITIAL] = 1
    ctl.ints[b, X_POST] = 0
    begin_step(ctl, b)


@njit
def step_system(st, pr, ctl, b, action, obs, mask):
    """One agent step of system b: the action, then events up to the next decision, then the observation.

    Returns 0 (done), 1 (the action is not allowed: nothing changed) or 2 (out of job slots: grow the state and call
    ``resume_system``).
    """
    begin_step(ctl, b)
    if ctl.ints[b, X_INITIAL]:
        ctl.ints[b, X_INITIAL] = 0
    elif not apply_action(st, pr, ctl, b, action):
        return 1
    return resume_system(st, pr, ctl, b, obs, mask)


@njit
def resume_system(st, pr, ctl, b, obs, mask):
    """Events up to the next decision, then the observation; 0, or 2 when out of job slots (grow, call again)."""
    if advance(st, pr, ctl, b) == NEED_CAPACITY:
        return 2
    observe(st, pr, ctl, b, obs, mask)
    return 0


@njit
def step_batch(st, pr, ctl, actions, reset_first, obs, masks, codes):
    """``step_system`` for every system b (``reset_system`` first where ``reset_first[b]``); codes[b] as there."""
    for b in range(actions.size):
        if reset_first[b]:
            reset_system(st, pr, ctl, b)
            observe(st, pr, ctl, b, obs[b], masks[b])
            masks[b, :] = True
            codes[b] = 0
        else:
            codes[b] = step_system(st, pr, ctl, b, actions[b], obs[b], masks[b])


@njit
def resume_batch(st, pr, ctl, which, obs, masks, codes):
    for b in range(which.size):
        if which[b]:
            codes[b] = resume_system(st, pr, ctl, b, obs[b], masks[b])
