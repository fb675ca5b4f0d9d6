"""Evaluate any policy on a loss scenario exactly like a built-in one (``msjgym evaluate loss-... --policy
FILE.py:NAME`` or ``sb3:MODEL.zip``): same replications, seeds, warm-up, statistics and scorecard as a built-in policy.

The policy sees what an agent of ``msjgym/AdaptiveLoss-v0`` sees: ``act(observation)`` (or ``act(observation,
action_mask)``) with observation [m, busy/n, jobs/n] and returns the width (0 = block, 1..m). A class is built with
the scenario's :class:`~msjgym.systems.loss.model.LossModel` if its constructor takes an argument. A masked or
malformed action stops the evaluation with one error naming the replication, the step and the action.
"""
from __future__ import annotations

import numpy as np

from msjgym.envs._loss_core import LossBatch
from msjgym.envs.agent_runner import load_policy
from msjgym.errors import PolicyError
from msjgym.systems.loss import control as lc


class LossAgentReplications:
    """``reps`` replications of a loss scenario whose widths ``policy`` (``FILE.py:NAME`` or ``sb3:MODEL.zip``)
    decides; replication r uses ``SeedSequence(seed).spawn(reps)[r]``, the streams of the compiled path, so a
    built-in policy's agent reproduces its compiled trajectory. Advanced one replication at a time by
    :func:`msjgym.evaluate.evaluate`."""

    def __init__(self, scenario, policy: str, *, reps: int, jobs: int, warmup: int, batches: int, seed: int) -> None:
        self.name, self.decide = load_policy(policy, scenario.model)
        self.reps = reps
        self.batch = LossBatch(scenario, warmup + jobs, 0.0, reps, {}, warmup=warmup, batches=batches)
        self.batch.seed(np.random.SeedSequence(seed).spawn(reps))
        self.batch.step(np.zeros(reps, np.int64), np.ones(reps, np.bool_))
        self.steps = np.zeros(reps, np.int64)
        self._actions = np.zeros(reps, np.int64)
        self._no_reset = np.zeros(reps, np.bool_)

    def ended(self, rep: int) -> bool:
        return bool(self.batch.ended[rep])

    def advance(self, rep: int, max_steps: int) -> bool:
        """Let the policy decide up to ``max_steps`` arrivals of replication ``rep``; True when it has ended."""
        batch, actions = self.batch, self._actions
        for _ in range(max_steps):
            if batch.ended[rep]:
                break
            raw = self.decide(batch.obs[rep].copy(), batch.masks[rep].copy())
            actions[:] = lc.SKIP  # the other replications stay as they are
            actions[rep] = _as_width(raw, batch.masks[rep], self.name, rep, int(self.steps[rep]))
            batch.step(actions, self._no_reset)
            self.steps[rep] += 1
        return self.ended(rep)


def _as_width(raw, mask: np.ndarray, name: str, b: int, step: int) -> int:
    try:
        value = np.asarray(raw).reshape(-1)
        if value.size != 1 or not float(value[0]).is_integer():
            raise ValueError
        width = int(value[0])
    except (TypeError, ValueError):
        raise PolicyError(f"--policy {name!r}: replication {b}, step {step}: returned {raw!r}, not a width "
                          f"(an integer 0..d)") from None
    if not (0 <= width < mask.size) or not mask[width]:
        raise PolicyError(f"--policy {name!r}: replication {b}, step {step}: width {width} is not allowed now "
                          f"(allowed: {np.flatnonzero(mask).tolist()})")
    return width
