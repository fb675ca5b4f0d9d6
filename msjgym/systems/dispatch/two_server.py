"""Dispatching to two exponential servers of different speeds: the optimal mean response time and any switching
rule's, by value iteration on the two-queue Markov decision process. [exact, up to the truncation and the stopping
tolerance, both reported]

Two FCFS servers with speeds s₀ (the first, "fast") and s₁, Poisson arrivals at rate Λ, Exp(1) job sizes (a job
of size x takes x / s time units); each arrival joins queue 0 or 1 on seeing (q₀, q₁). The average number in system
g is minimised by relative value iteration on the uniformised chain (rate Λ + s₀ + s₁), and E[R] = g / Λ by Little's
law. The optimal rule is a switching curve (Hajek, "Optimal control of two interacting service stations", IEEE
Trans. Automatic Control 29(6):491–499, 1984); shortest expected delay, (q + 1)/s, is one such
curve (Selen, Adan, Kapodistria & van Leeuwaarden, Queueing Systems 84(3), 2016, who analyse its steady state).

Truncation: each queue holds at most ``cap`` jobs; an arrival that would exceed it is sent to the other queue (both
full: lost). ``TwoServerValue.mass_at_cap`` is the stationary probability of a full queue under the rule, so the
truncation's effect is visible (keep it below ~1e-6).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from msjgym.core.validation import check_number
from msjgym.errors import ScenarioError

Rule = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""rule(q0, q1) -> the probability that an arrival seeing (q0, q1) joins queue 0 (bool or float arrays over the grid
of states; 1/2 for a uniform tie-break)."""


@dataclass(frozen=True)
class TwoServerValue:
    """A rule's (or the optimum's) long-run performance.

    Attributes:
        response_time: E[R] = E[number in system] / Λ (time units).
        number_in_system: the time-average number of jobs g.
        to_first: float[cap + 1, cap + 1], the probability that the rule sends an arrival to queue 0 (0 or 1 for the
            optimal rule of :func:`optimum`).
        mass_at_cap: stationary probability that a queue is at its cap (the truncation's reach).
        iterations: value-iteration sweeps until the span of the update fell below the tolerance.
    """

    response_time: float
    number_in_system: float
    to_first: np.ndarray
    mass_at_cap: float
    iterations: int

    def threshold(self, q1: int) -> int | None:
        """The least q₀ at which an arrival seeing (q₀, q₁) may join queue 1 (None: never within the cap)."""
        col = self.to_first[:, q1] < 1.0
        return int(np.argmax(col)) if col.any() else None


def sed_rule(s0: float, s1: float) -> Rule:
    """Shortest expected delay: join the queue with the smaller (q + 1)/s; a tie (equal in float64, as the
    simulator's ``sed`` and ``sed-d`` compare) either way with probability 1/2, as they break it."""
    def rule(q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
        e0, e1 = (q0 + 1) / s0, (q1 + 1) / s1
        return np.where(e0 < e1, 1.0, np.where(e0 == e1, 0.5, 0.0))
    return rule


def _check(arrival_rate: float, s0: float, s1: float, cap: int) -> None:
    for name, value in (("arrival_rate", arrival_rate), ("s0", s0), ("s1", s1)):
        check_number(name, value, 0.0, open_low=True, why="a rate per unit time", error=ScenarioError)
    if not arrival_rate < s0 + s1:
        raise ScenarioError(f"arrival_rate = {arrival_rate:g}: must be in (0, s0 + s1) = (0, {s0 + s1:g}) (stability)")
    check_number("cap", cap, 4, 2000, integer=True, why="jobs per queue in the truncated state space",
                 error=ScenarioError)


def _solve(arrival_rate: float, s0: float, s1: float, cap: int, rule: Rule | None, tol: float,
           max_iter: int) -> TwoServerValue:
    _check(arrival_rate, s0, s1, cap)
    lam, u = arrival_rate, arrival_rate + s0 + s1
    q = np.arange(cap + 1)
    q0, q1 = np.meshgrid(q, q, indexing="ij")
    cost = (q0 + q1).astype(np.float64)
    full0, full1 = q0 == cap, q1 == cap
    fixed = None if rule is None else np.asarray(rule(q0, q1), np.float64)
    h = np.zeros((cap + 1, cap + 1))
    g = 0.0
    for it in range(1, max_iter + 1):
        up0 = np.vstack([h[1:], h[-1:]])
        up1 = np.hstack([h[:, 1:], h[:, -1:]])
        join0 = np.where(full0, np.where(full1, h, up1), up0)   # a full queue sends the arrival to the other one
        join1 = np.where(full1, np.where(full0, h, up0), up1)
        first = (join0 <= join1).astype(np.float64) if fixed is None else fixed
        arrive = first * join0 + (1.0 - first) * join1
        down0 = np.vstack([h[:1], h[:-1]])
        down1 = np.hstack([h[:, :1], h[:, :-1]])
        new = (cost + lam * arrive + s0 * down0 + s1 * down1) / u
        diff = new - h
        g = float(new[0, 0])
        h = new - g
        if it % 50 == 0 and float(diff.max() - diff.min()) < tol:
            break
    g = g * u  # the average cost per unit time (the uniformised chain's g is per transition)
    pi = _stationary(lam, s0, s1, first, full0, full1)
    number = float((pi * cost).sum())
    return TwoServerValue(number / lam, number, first, float(pi[full0 | full1].sum()), it)


def _stationary(lam: float, s0: float, s1: float, first: np.ndarray, full0: np.ndarray,
                full1: np.ndarray) -> np.ndarray:
    """The stationary distribution of the truncated chain under the rule ``first`` (power iteration on the
    uniformised chain)."""
    u = lam + s0 + s1
    pi = np.zeros(first.shape)
    pi[0, 0] = 1.0
    to0 = np.where(full0, 0.0, np.where(full1, 1.0, first))
    lost = full0 & full1
    for _ in range(200_000):
        new = np.zeros_like(pi)
        new += np.where(lost, pi, 0.0) * (lam / u)
        a0 = np.where(lost, 0.0, pi * to0) * (lam / u)
        a1 = np.where(lost, 0.0, pi * (1.0 - to0)) * (lam / u)
        new[1:] += a0[:-1]
        new[:, 1:] += a1[:, :-1]
        new[:-1] += pi[1:] * (s0 / u)
        new[0] += pi[0] * (s0 / u)
        new[:, :-1] += pi[:, 1:] * (s1 / u)
        new[:, 0] += pi[:, 0] * (s1 / u)
        if np.abs(new - pi).sum() < 1e-13:
            return new
        pi = new
    return pi


def optimum(arrival_rate: float, s0: float, s1: float, cap: int = 120, tol: float = 1e-9,
            max_iter: int = 200_000) -> TwoServerValue:
    """The optimal dispatching rule and its E[R] (time units)."""
    return _solve(arrival_rate, s0, s1, cap, None, tol, max_iter)


def evaluate_rule(rule: Rule, arrival_rate: float, s0: float, s1: float, cap: int = 120, tol: float = 1e-9,
                  max_iter: int = 200_000) -> TwoServerValue:
    """E[R] (time units) of the switching rule ``rule(q0, q1) -> join queue 0`` (e.g. :func:`sed_rule`)."""
    return _solve(arrival_rate, s0, s1, cap, rule, tol, max_iter)
