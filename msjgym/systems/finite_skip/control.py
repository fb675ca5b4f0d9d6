"""Agent control of the finite-skip systems (``msjgym/FiniteSkip-v0``): B systems stepped by one compiled call.

The system is the rate model of :mod:`msjgym.systems.finite_skip.simulate` (capacity 1, jobs in arrival order, each
served at a rate that is a fraction of the capacity; Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method
for multiserver analysis", §§2, 4–7), with the same random streams drawn in the same order (first interarrival; per
arrival: class, size, next interarrival), so an agent that allocates as a built-in policy does reproduces that
policy's compiled trajectory (``tests/test_finite_skip_env.py``).

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

import numpy as np

from msjgym.core.jit import njit
from msjgym.core.rng import exponential, uniform
from msjgym.core.sampling import sample
from msjgym.systems.finite_skip.contract import HET, LPS, MSJ, THRESHOLD

# observation layout
FREE, JOBS, TRUNCATED = 0, 1, 2
HEAD = 3
SLOT_PRESENT, SLOT_CHOSEN, SLOT_PARAM, SLOT_AGE, SLOT_CLASS = 0, 1, 2, 3, 4

# ints[b, :]
I_N = 0  # jobs present
I_SEQ = 1  # arrivals so far in the episode
I_EVENTS = 2  # events (arrivals and completions) so far in the episode
I_CHOSEN = 3  # jobs chosen at this epoch
I_FREE = 4  # idle servers at this epoch (HET: count; THRESHOLD, MSJ: servers)
I_OVERFLOW = 5  # 1 if the job arrays were full at an arrival (the episode ended there)
NI = 6
# flts[b, :]
F_TIME = 0
F_NEXT = 1  # time of the next arrival
F_AREA = 2  # ∫ N dt over the current step
NF = 3


def slot_size(classes: int) -> int:
    return SLOT_CLASS + classes


def observation_size(classes: int, window: int) -> int:
    return HEAD + window * slot_size(classes)


@njit
def _can_choose(system, b, i, ints, cls, chosen, prm, k, window):
    if i >= window or i >= ints[b, I_N] or chosen[b, i]:
        return False
    if system == LPS:
        return ints[b, I_CHOSEN] < k
    if system == MSJ:
        return prm[cls[b, i]] <= ints[b, I_FREE]
    return ints[b, I_FREE] > 0


@njit
def observe(system, b, ints, flts, cls, arr, chosen, rates, prm, k, classes, window, obs, mask):
    """Write copy b's observation and mask; return whether any job can be chosen (else the commit is automatic)."""
    n = ints[b, I_N]
    size = SLOT_CLASS + classes
    for j in range(obs.shape[1]):
        obs[b, j] = 0.0
    used = 0.0
    for j in range(n):
        used += rates[b, j]
    if system == LPS:
        used = ints[b, I_CHOSEN] / k
    elif system != HET:
        used = (k - ints[b, I_FREE]) / k
    obs[b, FREE] = max(0.0, 1.0 - used)
    obs[b, JOBS] = n
    obs[b, TRUNCATED] = 1.0 if n > window else 0.0
    t = flts[b, F_TIME]
    for i in range(min(n, window)):
        base = HEAD + i * size
        obs[b, base + SLOT_PRESENT] = 1.0
        obs[b, base + SLOT_CHOSEN] = 1.0 if chosen[b, i] else 0.0
        obs[b, base + SLOT_PARAM] = prm[cls[b, i]] / k
        obs[b, base + SLOT_AGE] = t - arr[b, i]
        obs[b, base + SLOT_CLASS + cls[b, i]] = 1.0
    any_job = False
    for i in range(window):
        ok = _can_choose(system, b, i, ints, cls, chosen, prm, k, window)
        mask[b, i] = ok
        any_job = any_job or ok
    mask[b, window] = True
    return any_job


@njit
def new_epoch(b, ints, chosen, rates, taken, k):
    """Start copy b's allocation from nothing: no job chosen, every rate 0, every server free."""
    for j in range(chosen.shape[1]):
        chosen[b, j] = False
        rates[b, j] = 0.0
    for s in range(taken.shape[1]):
        taken[b, s] = False
    ints[b, I_CHOSEN] = 0
    ints[b, I_FREE] = k


@njit
def choose(system, b, i, ints, cls, chosen, rates, taken, prm, speeds, k):
    """Give window slot i (the i-th oldest job) its share (the caller checked the mask)."""
    chosen[b, i] = True
    ints[b, I_CHOSEN] += 1
    if system == HET:
        s = 0
        while taken[b, s]:
            s += 1
        taken[b, s] = True
        rates[b, i] = speeds[s]
        ints[b, I_FREE] -= 1
    elif system == LPS:
        pass  # shares are set at the commit
    else:
        p = prm[cls[b, i]]
        q = min(p, ints[b, I_FREE])
        rates[b, i] = q / k
        ints[b, I_FREE] -= q


@njit
def _event(system, b, ints, flts, cls, rem, arr, chosen, rates, cumprob, scale, dkind, dstart, ddata, lam, horizon,
           rng):
    """Run copy b with its committed rates to its next event and process it; return True if the episode ended
    (the ``horizon``-th arrival, or an arrival with the job arrays full)."""
    n = ints[b, I_N]
    if system == LPS and ints[b, I_CHOSEN] > 0:
        share = 1.0 / ints[b, I_CHOSEN]
        for j in range(n):
            rates[b, j] = share if chosen[b, j] else 0.0
    t = flts[b, F_TIME]
    dt = flts[b, F_NEXT] - t
    who = -1
    for j in range(n):
        if rates[b, j] > 0.0:
            d = rem[b, j] / rates[b, j]
            if d < dt:
                dt = d
                who = j
    if dt < 0.0:
        dt = 0.0
    flts[b, F_AREA] += n * dt
    for j in range(n):
        if rates[b, j] > 0.0:
            rem[b, j] -= rates[b, j] * dt
    flts[b, F_TIME] = t + dt
    ints[b, I_EVENTS] += 1
    if who < 0:  # arrival
        if n == cls.shape[1]:
            ints[b, I_OVERFLOW] = 1
            return True
        u = uniform(rng, b)
        nk = cumprob.shape[0]
        c = nk - 1
        for i in range(nk - 1):
            if u < cumprob[i]:
                c = i
                break
        s = scale[c] * sample(dkind[c], ddata, dstart[c], rng, b)
        cls[b, n] = c
        rem[b, n] = s
        arr[b, n] = flts[b, F_TIME]
        ints[b, I_N] = n + 1
        ints[b, I_SEQ] += 1
        flts[b, F_NEXT] = flts[b, F_TIME] + exponential(rng, b) / lam
        return ints[b, I_SEQ] >= horizon
    for j in range(who, n - 1):  # completion of job `who`
        cls[b, j] = cls[b, j + 1]
        rem[b, j] = rem[b, j + 1]
        arr[b, j] = arr[b, j + 1]
    ints[b, I_N] = n - 1
    return False


@njit
def step_batch(system, k, lam, cumprob, prm, scale, dkind, dstart, ddata, speeds, classes, window, horizon,
               ints, flts, cls, rem, arr, chosen, rates, taken, rng, actions, resetting, obs, masks, rewards, dts,
               ended):
    """Advance every copy b: reset it (``resetting[b]``: an empty system, run to its first decision epoch) or apply
    ``actions[b]`` (a window slot to choose, or ``window`` to commit; already checked against the mask) and, after a
    commit, run to the next decision epoch. ``ended[b]``: the episode ended at this step."""
    for b in range(ints.shape[0]):
        rewards[b] = 0.0
        dts[b] = 0.0
        ended[b] = False
        t0 = flts[b, F_TIME]
        flts[b, F_AREA] = 0.0
        run = True
        if resetting[b]:
            for j in range(ints.shape[1]):
                ints[b, j] = 0
            flts[b, F_TIME] = 0.0
            flts[b, F_NEXT] = exponential(rng, b) / lam
            t0 = 0.0
            new_epoch(b, ints, chosen, rates, taken, k)
        else:
            a = actions[b]
            if a < window:
                choose(system, b, a, ints, cls, chosen, rates, taken, prm, speeds, k)
                run = not observe(system, b, ints, flts, cls, arr, chosen, rates, prm, k, classes, window, obs,
                                  masks)
        while run:
            if _event(system, b, ints, flts, cls, rem, arr, chosen, rates, cumprob, scale, dkind, dstart, ddata, lam,
                      horizon, rng):
                ended[b] = True
                new_epoch(b, ints, chosen, rates, taken, k)
                observe(system, b, ints, flts, cls, arr, chosen, rates, prm, k, classes, window, obs, masks)
                break
            new_epoch(b, ints, chosen, rates, taken, k)
            run = not observe(system, b, ints, flts, cls, arr, chosen, rates, prm, k, classes, window, obs, masks)
        rewards[b] = -flts[b, F_AREA]
        dts[b] = flts[b, F_TIME] - t0


def new_arrays(num: int, k: int, capacity: int) -> dict[str, np.ndarray]:
    """The state arrays of ``num`` copies with room for ``capacity`` jobs each."""
    return {"ints": np.zeros((num, NI), np.int64), "flts": np.zeros((num, NF)),
            "cls": np.zeros((num, capacity), np.int64), "rem": np.zeros((num, capacity)),
            "arr": np.zeros((num, capacity)), "chosen": np.zeros((num, capacity), np.bool_),
            "rates": np.zeros((num, capacity)), "taken": np.zeros((num, k), np.bool_)}
