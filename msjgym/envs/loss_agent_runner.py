"""Evaluate any policy on a loss scenario exactly like a built-in one (``msjgym evaluate loss-... --policy
FILE.py:NAME`` or ``sb3:MODEL.zip``): same replications, seeds, warm-up, statistics and scorecard as a built-in policy.

The policy sees what an agent of ``msjgym/AdaptiveLoss-v0`` sees: ``act(observation, action_mask)`` (or
``act(observation)``) with observation [m, busy/n, jobs/n] and returns the width (0 = block, 1..m). It is loaded by
:func:`msjgym.core.user_policy.load_user_policy` with the environment's spec
(:func:`~msjgym.systems.loss.agent.loss_spec`); a masked or malformed action stops the evaluation with one error naming
the replication, the step and the value (:func:`msjgym.core.user_policy.checked_action`).
"""
from __future__ import annotations

from msjgym.core.user_policy import Decide
from msjgym.systems.loss.agent import loss_spec  # noqa: F401  (kept here for imports of it)


def evaluate_loss_agent(scenario, name: str, decide: Decide, *, reps: int = 10, jobs: int = 100_000,
                        warmup: int | None = None, seed: int | None = None, batches: int = 20):
    """:func:`msjgym.evaluate.evaluate` of ``decide(observation, mask) -> width`` (shown as ``name``) on a loss
    scenario: replication r on ``SeedSequence(seed).spawn(reps)[r]``, the streams of the compiled path."""
    from msjgym.envs.agent_runner import _Named
    from msjgym.evaluate.evaluator import evaluate

    return evaluate(scenario, _Named(name, decide), reps=reps, jobs=jobs, warmup=warmup, seed=seed, batches=batches)
