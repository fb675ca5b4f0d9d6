"""Evaluate any policy on a loss scenario exactly like a built-in one (``msjgym evaluate loss-... --policy
FILE.py:NAME`` or ``sb3:MODEL.zip``): same replications, seeds, warm-up, statistics and scorecard as a built-in policy.

The policy sees what an agent of ``msjgym/AdaptiveLoss-v0`` sees: ``act(observation, action_mask)`` (or
``act(observation)``) with observation [m, busy/n, jobs/n] and returns the width (0 = block, 1..m). It is loaded by
:func:`msjgym.core.user_policy.load_user_policy` with the environment's :class:`~msjgym.envs._loss_core.LossSpec`
(:func:`loss_spec`); a masked or malformed action stops the evaluation with one error naming the replication, the
step and the value (:func:`msjgym.core.user_policy.checked_action`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from msjgym.core.user_policy import Decide, checked_action, load_user_policy
from msjgym.envs._loss_core import LossBatch, LossSpec
from msjgym.systems.loss import control as lc


def loss_spec(scenario) -> LossSpec:
    """The spec a policy of the user's is built with on a loss scenario (``load_user_policy(text, loss_spec(sc))``)."""
    return LossSpec.make(scenario)


def evaluate_loss_agent(scenario, name: str, decide: Decide, *, reps: int = 10, jobs: int = 100_000,
                        warmup: int | None = None, seed: int | None = None, batches: int = 20):
    """:func:`msjgym.evaluate.evaluate` of ``decide(observation, mask) -> width`` (shown as ``name``) on a loss
    scenario: replication r on ``SeedSequence(seed).spawn(reps)[r]``, the streams of the compiled path."""
    from msjgym.envs.agent_runner import _Named
    from msjgym.evaluate.evaluator import evaluate

    return evaluate(scenario, _Named(name, decide), reps=reps, jobs=jobs, warmup=warmup, seed=seed, batches=batches)


class LossAgentReplications:
    """``reps`` replications of a loss scenario whose widths ``policy`` (``FILE.py:NAME`` or ``sb3:MODEL.zip``)
    decides; replication r uses ``SeedSequence(seed).spawn(reps)[r]``, the streams of the compiled path, so a
    built-in policy's agent reproduces its compiled trajectory. Advanced one replication at a time by
    :func:`msjgym.evaluate.evaluate`."""

    def __init__(self, scenario, policy: Any, *, reps: int, jobs: int, warmup: int, batches: int, seed: int) -> None:
        self.name, self.decide = load_user_policy(policy, loss_spec(scenario))
        self.reps = reps
        self.batch = LossBatch(LossSpec.make(scenario, warmup + jobs, 0.0), reps, warmup=warmup, batches=batches)
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
            actions[:] = lc.SKIP  # the other replications stay as they are
            actions[rep] = checked_action(self.decide, batch.obs[rep], batch.masks[rep], self.name, rep,
                                          int(self.steps[rep]))
            batch.step(actions, self._no_reset)
            self.steps[rep] += 1
        return self.ended(rep)

