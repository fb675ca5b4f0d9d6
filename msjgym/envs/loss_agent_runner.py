"""Evaluate any policy on a loss scenario exactly like a built-in one (``msjgym evaluate loss-... --policy
FILE.py:NAME`` or ``sb3:MODEL.zip``): same replications, seeds, warm-up, statistics and scorecard as
:func:`msjgym.systems.loss.runner.evaluate_loss`.

The policy sees what an agent of ``msjgym/AdaptiveLoss-v0`` sees: ``act(observation, action_mask)`` (or
``act(observation)``) with observation [m, busy/n, jobs/n] and returns the width (0 = block, 1..m). It is loaded by
:func:`msjgym.core.user_policy.load_user_policy` with the environment's :class:`~msjgym.envs._loss_core.LossSpec`
(:func:`loss_spec`); a masked or malformed action stops the evaluation with one error naming the replication, the
step and the value (:func:`msjgym.core.user_policy.checked_action`).
"""
from __future__ import annotations

import secrets
import time

import numpy as np

from msjgym.core.user_policy import Decide, checked_action
from msjgym.envs._loss_core import LossBatch, LossSpec
from msjgym.evaluate.runner import EvaluationResult
from msjgym.systems.loss import control as lc
from msjgym.systems.loss.runner import default_warmup, summarize_loss


def loss_spec(scenario) -> LossSpec:
    """The spec a policy of the user's is built with on a loss scenario (``load_user_policy(text, loss_spec(sc))``)."""
    return LossSpec.make(scenario)


def evaluate_loss_agent(scenario, name: str, decide: Decide, *, reps: int = 10, jobs: int = 100_000,
                        warmup: int | None = None, seed: int | None = None, batches: int = 20) -> EvaluationResult:
    """Run ``decide`` as the dispatcher of ``reps`` replications (replication r: ``SeedSequence(seed).spawn(reps)[r]``,
    the streams of the compiled path, so a built-in policy's agent reproduces its compiled trajectory)."""
    model = scenario.model
    warmup = default_warmup(model, jobs) if warmup is None else warmup
    seed = secrets.randbits(32) if seed is None else seed
    batch = LossBatch(LossSpec.make(scenario, warmup + jobs, 0.0), reps, warmup=warmup, batches=batches)
    batch.seed(np.random.SeedSequence(seed).spawn(reps))
    start = time.perf_counter()
    batch.step(np.zeros(reps, np.int64), np.ones(reps, np.bool_))
    alive = np.ones(reps, np.bool_)
    actions = np.zeros(reps, np.int64)
    step = 0
    while alive.any():
        for b in np.flatnonzero(alive):
            actions[b] = checked_action(decide, batch.obs[b], batch.masks[b], name, int(b), step)
        actions[~alive] = lc.SKIP  # finished replications stay as they are
        batch.step(actions, np.zeros(reps, np.bool_))
        alive &= ~batch.ended
        step += 1
    wall = time.perf_counter() - start
    events = int(batch.state.ints[:, 1].sum())
    result = summarize_loss(scenario, name, batch.state.stats, reps, jobs, warmup, batches, seed, events, wall, 0.0,
                            policy_known=False)
    from msjgym.evaluate import scorecard
    from msjgym.systems.loss import scorecard as loss_scorecard
    result.references = scorecard.judge(loss_scorecard.references(model, None), result)
    return result
