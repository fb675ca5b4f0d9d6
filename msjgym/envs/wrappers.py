"""Wrappers for msjgym's environments (every one reports ``info["dt"]``, the time a step advanced).

``ContinuousDiscount``: continuous-time discounting e^{−βt} for agents that take a discount per step.
``MaskFallback``: a forbidden action becomes the highest-numbered allowed one, whatever the wrapped environment's
``invalid_action`` (the environments do this by themselves by default; the wrapper remains for older RL Zoo configs
and for an environment made with ``invalid_action="raise"``).
"""
from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from msjgym.core.actions import fallback_action

__all__ = ["ContinuousDiscount", "MaskFallback", "RunningAverageCost"]


class ContinuousDiscount(gym.Wrapper):
    """Discount at rate β per unit of (simulated) time: ``info["discount"] = exp(−β·dt)`` and the reward rescaled.

    An environment's step spans an interval of length dt = ``info["dt"]`` (possibly 0) and its reward is
    r = −∫_0^dt N(s) ds, N the number of jobs in system, piecewise constant. The discounted reward of the step is

        r_β = −∫_0^dt e^{−βs} N(s) ds,

    so that with D_k = Π_{j<k} discount_j = e^{−β t_k} (t_k the time at which step k starts) the per-step
    discounted return Σ_k D_k r_β,k is −∫ e^{−βt} N(t) dt over the episode.

    **What is computed.** The environment reports only the step's integral r and its length dt, not when N changed
    within the step. This wrapper returns

        reward = r · (1 − e^{−β·dt}) / (β·dt)       (= r when dt = 0, where r = 0 too)

    which is r_β with N replaced by its average over the step, r/dt. It is **exact when N is constant over the
    step**: a step that processed at most one event (that event ends the step) — the common case: "wait for the
    next event", or a start decision followed by another at once (dt = 0). When several events fall inside one step
    (in ``mode="start"``, events after which no waiting job fits are processed without a decision), it is an
    approximation: since N ≥ 0 and e^{−βs} ∈ [e^{−β·dt}, 1], both the exact r_β and this value lie between r and
    e^{−β·dt}·r, so the error is at most (1 − e^{−β·dt})·|r| ≤ β·dt·|r| (relative error ≤ β·dt).

    ``info["discount_exact"]`` is True when the step provably had a constant N: no event (dt = 0, or a run to the
    time horizon), or one event and the episode did not end (conservative: it may be False for an exact step).
    It needs ``info["events"]`` (the cumulative event count every msjgym environment reports); without it the key is
    absent.
    ``info["undiscounted_reward"]`` keeps r.

    To make it exact, the environment would have to accumulate r_β itself, segment by segment (N is constant
    between events): in ``msj_control.advance``, next to ``F_REWARD -= N·dt_i``, add
    ``F_DREWARD -= N · e^{−β·F_DT} · (1 − e^{−β·dt_i}) / β`` (before ``F_DT += dt_i``; β a per-system control
    parameter), and report it as ``info["discounted_reward"]``.
    """

    def __init__(self, env: gym.Env, beta: float) -> None:
        super().__init__(env)
        if not isinstance(beta, (int, float, np.floating)) or not math.isfinite(beta) or beta <= 0:
            raise ValueError(f"beta = {beta!r}: must be a finite number > 0 (discount rate per unit time)")
        self.beta = float(beta)
        self._events: int | None = None

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        obs, info = self.env.reset(**kwargs)
        self._events = info.get("events")
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        dt = float(info["dt"])
        x = self.beta * dt
        info["discount"] = math.exp(-x)
        info["undiscounted_reward"] = reward
        if "events" in info:
            events = int(info["events"])
            k = events - self._events if self._events is not None else None
            self._events = events
            info["discount_exact"] = k is not None and (k == 0 or (k == 1 and not (terminated or truncated)))
        return obs, discounted_step_reward(reward, dt, self.beta), terminated, truncated, info


def discounted_step_reward(reward: float, dt: float, beta: float) -> float:
    """reward · (1 − e^{−β·dt}) / (β·dt): the step's reward discounted over the step as if N were constant on it."""
    x = beta * dt
    return float(reward) if x == 0 else float(reward) * -math.expm1(-x) / x


class MaskFallback(gym.Wrapper):
    """Any action in range is accepted: one the action mask forbids is replaced by the highest-numbered allowed
    action, and ``info["fallback"]`` says whether it was.

    The same rule (:func:`msjgym.core.actions.fallback_action`) as every environment's default
    ``invalid_action="fallback"``, which makes this wrapper unnecessary: it stays so that RL Zoo runs
    whose ``config.yml`` names it still train and evaluate, and to add the fallback to an environment made with
    ``invalid_action="raise"``. The highest-numbered action is "wait for the next
    event" in ``msjgym/MSJ-v0``'s mode "start" and "commit" in mode "preemptive" (both always allowed), so there a
    forbidden action means doing nothing now; in ``msjgym/Dispatch-v0`` it is the highest allowed level (the longest
    queues of the histogram). The rule is part of the trained policy: ``msjgym evaluate --policy sb3:MODEL.zip``
    applies the same rule (the model's most likely action, replaced the same way if forbidden) when the model's RL
    Zoo ``config.yml`` names this wrapper (:mod:`msjgym.core.user_policy`).

    The mask is read from the wrapped environment's ``action_masks()`` before the step.
    """

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        mask = np.asarray(self.env.unwrapped.action_masks(), dtype=bool)
        chosen = fallback_action(action, mask)
        obs, reward, terminated, truncated, info = self.env.step(chosen)
        info["fallback"] = chosen != action
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The wrapped environment's mask (what the allowed actions are; every action in range is accepted here)."""
        return self.env.unwrapped.action_masks()


class RunningAverageCost:
    """ρ, the running time-average cost Σ cost / Σ dt with exponential forgetting at ``rate`` per update: the centre
    of the average-cost (differential) reward −∫ (N − ρ) dt of ``msjgym.envs.sb3.AverageCostReward`` (per vector
    step) and ``msjgym.envs.rllib.AverageCost`` (per step of one copy). ρ starts at 0."""

    def __init__(self, rate: float) -> None:
        self.rate, self.rho = float(rate), 0.0
        self._cost = self._time = 0.0

    def update(self, cost: float, dt: float) -> float:
        """Add a step's ``cost`` (−reward) over ``dt`` time units; the new ρ (unchanged while no time has passed)."""
        self._cost = (1 - self.rate) * self._cost + cost
        self._time = (1 - self.rate) * self._time + dt
        if self._time > 0:
            self.rho = self._cost / self._time
        return self.rho
