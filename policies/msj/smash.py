"""SMASH(w): non-preemptive; among the w oldest waiting jobs, start the one with the largest need that fits.

Among the w oldest waiting jobs, the job with the largest need that fits in the free servers starts (the oldest
among equal needs); then the window moves on (the w oldest jobs still waiting) and this repeats until no job among
the w oldest waiting fits. ``w = 1`` is FCFS with head-of-line blocking; a window at least as long as the queue is
non-preemptive Most Servers First (``msf-nonpreemptive``). Both limits hold decision for decision, so they give the
same runs bit for bit (``tests/test_smash.py``).

Source: the windowed SMASH policy of the multiserver-job simulator of D. Olliaro, A. Anggraito, M. Ajmone Marsan,
S. Balsamo and A. Marin (their studies of scheduling in multiserver-job systems, e.g. "The saturated multiserver job
queuing model with two classes of jobs: exact and approximate results", Performance Evaluation, 2023, and the
follow-up work on SMASH scheduling). The window rule above is msjgym's statement of it.

This file is the whole policy: its compiled kernel, its agent form, its declaration (see ``docs/extending.md``).
"""
from __future__ import annotations

import numpy as np

from msjgym.core.policy_registry import Param
from msjgym.core.jit import njit
from msjgym.systems.msj import observation as ob
from msjgym.systems.msj.state import C_BOUND, C_N, C_X, J_NEXT, J_SEQ, P_ARG, P_K, P_SERVERS, S_BUSY, start_next
from msjgym.systems.msj.contract import Policy

from .agent_forms import StartAgent


# ---------------------------------------------------------------- compiled kernel
@njit
def schedule(st, pr, b):
    """Start, while one fits, the largest-need job among the w oldest waiting (w = ``pr.ints[P_ARG]``).

    A plain call rather than inlined into the event loop: inlining an eleventh kernel this size made every policy's
    loop about 3 % slower (``benchmarks/bench_events.py``); the call costs SMASH alone.

    Per started job: O(K) when the queue holds at most w jobs, else an O(w·K) merge of the classes' waiting lists
    in arrival order. Scratch: ``[K, 2K)`` walk pointers, ``[2K, 3K)`` whether a class's oldest waiting job is in
    the window.
    """
    K = pr.ints[P_K]
    n = pr.ints[P_SERVERS]
    w = pr.ints[P_ARG]
    sc = st.scratch
    while True:
        free = n - st.sys_i[b, S_BUSY]
        waiting = 0
        for c in range(K):
            waiting += st.cls_i[b, c, C_N] - st.cls_i[b, c, C_X]
        if waiting == 0:
            return
        for c in range(K):
            sc[b, 2 * K + c] = 0
        if waiting <= w:  # the whole queue is in the window
            for c in range(K):
                if st.cls_i[b, c, C_BOUND] >= 0:
                    sc[b, 2 * K + c] = 1
        else:  # merge the waiting lists by arrival order, w jobs deep
            for c in range(K):
                sc[b, K + c] = st.cls_i[b, c, C_BOUND]
            for _ in range(w):
                oldest = -1
                for c in range(K):
                    j = sc[b, K + c]
                    if j >= 0 and (oldest < 0 or st.job_i[b, j, J_SEQ] < st.job_i[b, sc[b, K + oldest], J_SEQ]):
                        oldest = c
                sc[b, 2 * K + oldest] = 1
                sc[b, K + oldest] = st.job_i[b, sc[b, K + oldest], J_NEXT]
        best = -1
        best_s = 0
        for c in range(K):
            if sc[b, 2 * K + c] == 0 or pr.need[c] > free:
                continue
            s = st.job_i[b, st.cls_i[b, c, C_BOUND], J_SEQ]
            if best < 0 or pr.need[c] > pr.need[best] or (pr.need[c] == pr.need[best] and s < best_s):
                best = c
                best_s = s
        if best < 0:
            return
        start_next(st, pr, b, best)


# ---------------------------------------------------------------- agent form
class SmashAgent(StartAgent):
    """``smash``: among the classes whose oldest waiting job is among the w oldest waiting jobs, start the oldest
    job of the class with the largest need that fits (the oldest head among equal needs), or wait.

    With an environment window W >= w the w oldest waiting jobs are shown. With W < w and more than W jobs waiting,
    a class whose oldest waiting job is not shown is placed by bounds on its rank from the per-class ages and counts;
    where they cannot settle it, the agent raises (make the environment with ``window >= w``).
    """

    policy_name = "smash"

    def __init__(self, spec, policy=None) -> None:
        super().__init__(spec, policy)
        self.w = int(self.policy.value("w"))

    def pick(self, obs: np.ndarray, free: int, waiting: list[int]) -> int:
        fit = [c for c in range(self.K) if waiting[c] > 0 and self.need[c] <= free]
        if not fit:
            return -1
        total = sum(waiting)
        if total > self.w:
            shown = self._window_classes(obs)
            if len(shown) >= self.w:
                fit = [c for c in fit if c in set(shown[:self.w])]
            else:
                fit = [c for c in fit if c in set(shown) or self._in_window(obs, c, shown, waiting)]
        if not fit:
            return -1
        best = max(self.need[c] for c in fit)
        return self._oldest_head(obs, [c for c in fit if self.need[c] == best], waiting)

    def _in_window(self, obs: np.ndarray, c: int, shown: list[int], waiting: list[int]) -> bool:
        """Whether class c's oldest waiting job (not among the W shown) is among the w oldest waiting jobs."""
        age = float(obs[self.cls[c] + ob.OLDEST_AGE])
        low = high = len(shown)  # every shown job is older than it
        for other in range(self.K):
            if other == c or waiting[other] == 0:
                continue
            beyond = waiting[other] - shown.count(other)  # its waiting jobs not shown: some may be older
            other_age = float(obs[self.cls[other] + ob.OLDEST_AGE])
            if other in shown or other_age >= age:
                high += beyond
                if other not in shown and other_age > age:
                    low += 1  # its oldest waiting job is older
        if low >= self.w:
            return False
        if high < self.w:
            return True
        raise self._not_enough(f"whether the oldest waiting class-{c} job is among the w = {self.w} oldest waiting "
                               f"jobs lies beyond the window")


# ---------------------------------------------------------------- declaration
SMASH = Policy(
    name="smash",
    summary="SMASH(w), non-preemptive: among the w oldest waiting jobs start the largest need that fits; repeat",
    preemptive=False,
    source="Olliaro, Anggraito, Ajmone Marsan, Balsamo & Marin: the windowed SMASH policy of their multiserver-job "
           "simulator",
    params=(Param("w", 4, "window: how many of the oldest waiting jobs are considered (1: FCFS; at least the queue "
                          "length: non-preemptive MSF)", low=1, integer=True),),
    schedule=schedule,
    agent_class=SmashAgent,
)
