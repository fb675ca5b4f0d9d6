"""Agent control of the finite-skip systems (``msjgym/FiniteSkip-v0``): B systems stepped by one compiled call, on the
event loop itself (:func:`msjgym.systems.finite_skip.loop.run` in its modes RESET, ADVANCE and EPOCH) and its state
record (:mod:`msjgym.systems.finite_skip.state`).

The system is the rate model of :mod:`msjgym.systems.finite_skip.model` (capacity 1, jobs in arrival order, each
served at a rate that is a fraction of the capacity; Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method
for multiserver analysis", §§2, 4–7), with the same random streams drawn in the same order (the same compiled code),
so an agent that allocates as a built-in policy does reproduces that policy's compiled trajectory
(``tests/test_finite_skip_env.py``).

**Decision epochs.** After every arrival and completion the allocation is rebuilt from nothing (preemptive): the
agent chooses jobs one at a time among the W oldest present (the window), each choice at the same instant (dt = 0),
and then commits; the system runs with those rates to its next event. Choosing window slot i gives job i

* heterogeneous M/G/k (HET): the fastest idle server (rate = its speed; speeds fastest first);
* LPS(k): a share of the capacity (at most k jobs; the chosen jobs share it equally at the commit);
* threshold parallelism: min(P, idle servers) servers, rate q/k;
* multiserver jobs: its v servers, rate v/k (allowed only if they are idle).

Action ``W`` commits (always allowed). When nothing more can be chosen the commit is automatic, and so is the run
through a moment with no job present. The reward of a step is −∫ N dt over the time it advanced.

Observation (float32, offsets below): ``[FREE]`` the capacity still free (fraction of 1), ``[JOBS]`` N, the jobs
present, ``[TRUNCATED]`` 1 if N > W; then W slots (the i-th oldest job present): ``SLOT_PRESENT``, ``SLOT_CHOSEN``,
``SLOT_PARAM`` (P or v, / k; 1/k in HET and LPS), ``SLOT_AGE`` (time since its arrival), then a one-hot class (K).
"""
from __future__ import annotations

from msjgym.core.jit import njit
from msjgym.systems.finite_skip.contract import HET, LPS, MSJ
from msjgym.systems.finite_skip.loop import ADVANCE, EPOCH, RESET
from msjgym.systems.finite_skip.loop import run as loop_run
from msjgym.systems.finite_skip.model import P_K, P_SYSTEM
from msjgym.systems.finite_skip.state import (A_UNSTABLE, F_DT, F_TIME, I_CHOSEN, I_EVENTS, I_FREE, I_N, I_SEQ,
                                              system)

# observation layout
FREE, JOBS, TRUNCATED = 0, 1, 2
HEAD = 3
SLOT_PRESENT, SLOT_CHOSEN, SLOT_PARAM, SLOT_AGE, SLOT_CLASS = 0, 1, 2, 3, 4


def slot_size(classes: int) -> int:
    return SLOT_CLASS + classes


def observation_size(classes: int, window: int) -> int:
    return HEAD + window * slot_size(classes)


@njit
def _can_choose(st, pr, b, i, window):
    if i >= window or i >= st.ints[b, I_N] or st.chosen[b, i]:
        return False
    system_ = pr.ints[P_SYSTEM]
    if system_ == LPS:
        return st.ints[b, I_CHOSEN] < pr.ints[P_K]
    if system_ == MSJ:
        return pr.prm[st.cls[b, i]] <= st.ints[b, I_FREE]
    return st.ints[b, I_FREE] > 0


@njit
def observe(st, pr, b, classes, window, obs, mask):
    """Write system b's observation and mask into row b of ``obs`` and ``mask``; return whether any job can be chosen
    (else the commit is automatic)."""
    n = st.ints[b, I_N]
    k = pr.ints[P_K]
    system_ = pr.ints[P_SYSTEM]
    size = SLOT_CLASS + classes
    for j in range(obs.shape[1]):
        obs[b, j] = 0.0
    used = 0.0
    for j in range(n):
        used += st.rates[b, j]
    if system_ == LPS:
        used = st.ints[b, I_CHOSEN] / k
    elif system_ != HET:
        used = (k - st.ints[b, I_FREE]) / k
    obs[b, FREE] = max(0.0, 1.0 - used)
    obs[b, JOBS] = n
    obs[b, TRUNCATED] = 1.0 if n > window else 0.0
    t = st.flts[b, F_TIME]
    for i in range(min(n, window)):
        base = HEAD + i * size
        obs[b, base + SLOT_PRESENT] = 1.0
        obs[b, base + SLOT_CHOSEN] = 1.0 if st.chosen[b, i] else 0.0
        obs[b, base + SLOT_PARAM] = pr.prm[st.cls[b, i]] / k
        obs[b, base + SLOT_AGE] = t - st.arr[b, i]
        obs[b, base + SLOT_CLASS + st.cls[b, i]] = 1.0
    any_job = False
    for i in range(window):
        ok = _can_choose(st, pr, b, i, window)
        mask[b, i] = ok
        any_job = any_job or ok
    mask[b, window] = True
    return any_job


@njit
def new_epoch(st, pr, b):
    """Start system b's allocation from nothing: no job chosen, every rate 0, every server free (the entries past
    the N jobs present are never read: an arrival's entry is cleared at the epoch that follows it)."""
    for j in range(st.ints[b, I_N]):
        st.chosen[b, j] = False
        st.rates[b, j] = 0.0
    for s in range(st.taken.shape[1]):
        st.taken[b, s] = 0
    st.ints[b, I_CHOSEN] = 0
    st.ints[b, I_FREE] = pr.ints[P_K]


@njit
def choose(st, pr, b, i):
    """Give window slot i (the i-th oldest job) of system b its share (the caller checked the mask)."""
    st.chosen[b, i] = True
    st.ints[b, I_CHOSEN] += 1
    system_ = pr.ints[P_SYSTEM]
    k = pr.ints[P_K]
    if system_ == HET:
        s = 0
        while st.taken[b, s] != 0:
            s += 1
        st.taken[b, s] = 1
        st.rates[b, i] = pr.speeds[s]
        st.ints[b, I_FREE] -= 1
    elif system_ == LPS:
        pass  # shares are set at the commit
    else:
        p = pr.prm[st.cls[b, i]]
        q = min(p, st.ints[b, I_FREE])
        st.rates[b, i] = q / k
        st.ints[b, I_FREE] -= q


@njit
def commit(st, pr, b):
    """Complete system b's allocation: LPS(k) shares the capacity equally among the chosen jobs (the other systems'
    rates are set by each choice)."""
    chosen = st.ints[b, I_CHOSEN]
    if pr.ints[P_SYSTEM] == LPS and chosen > 0:
        share = 1.0 / chosen
        for j in range(st.ints[b, I_N]):
            st.rates[b, j] = share if st.chosen[b, j] else 0.0


@njit
def step_batch(st, pr, classes, window, horizon, lo, hi, actions, resetting, obs, masks, rewards, dts, ended):
    """Advance every system b in [lo, hi): reset it (``resetting[b]``: an empty system, run to its first decision
    epoch) or apply ``actions[b]`` (a window slot to choose, or ``window`` to commit; already checked against the
    mask) and, after a commit, run it to its next decision epoch with the event loop's transitions. ``ended[b]``: the
    episode ended at this step (the ``horizon``-th arrival, or an arrival that found the job arrays full)."""
    for b in range(lo, hi):
        rewards[b] = 0.0
        dts[b] = 0.0
        ended[b] = False
        s = system(st, b)
        t0 = st.flts[b, F_TIME]
        area = 0.0
        run = True
        if resetting[b]:
            loop_run(s, pr, 0, RESET)
            t0 = 0.0
            new_epoch(st, pr, b)
        else:
            a = actions[b]
            if a < window:
                choose(st, pr, b, a)
                run = not observe(st, pr, b, classes, window, obs, masks)
        while run:
            commit(st, pr, b)
            n = st.ints[b, I_N]
            going = loop_run(s, pr, 0, ADVANCE)
            area += n * st.flts[b, F_DT]
            if not going or st.ints[b, I_SEQ] >= horizon:
                ended[b] = True
                new_epoch(st, pr, b)
                observe(st, pr, b, classes, window, obs, masks)
                break
            loop_run(s, pr, 0, EPOCH)
            new_epoch(st, pr, b)
            run = not observe(st, pr, b, classes, window, obs, masks)
        rewards[b] = -area
        dts[b] = st.flts[b, F_TIME] - t0


def info(st, b: int) -> dict:
    """System b's ``info`` entries (time, events, arrivals, jobs present, overflow)."""
    return {"time": float(st.flts[b, F_TIME]), "events": int(st.ints[b, I_EVENTS]),
            "arrivals": int(st.ints[b, I_SEQ]), "jobs": int(st.ints[b, I_N]),
            "overflow": bool(st.acc[b, A_UNSTABLE] > 0.0)}
