"""Evaluate any scheduler — an object with ``act``, a callable, or a saved Stable-Baselines3 model — exactly like a
built-in one: the same replications, seeds, warm-up, statistics and scorecard as ``msjgym.evaluate``.

The policy is loaded by :func:`msjgym.core.user_policy.load_user_policy` (the contract of every family: a class is
built with the environment's :class:`~msjgym.systems.msj.agent.EnvSpec`; the replications:
:class:`~msjgym.systems.msj.agent.AgentReplications`) and sees what an agent of ``msjgym/MSJ-v0`` sees:
``act(observation, action_mask)`` (or ``act(observation)``). Anything a policy does wrong — it raises, returns
something that is not an action, or returns a masked action — stops the evaluation with one error naming the
replication, the step and the value (:func:`msjgym.core.user_policy.checked_action`).
"""
from __future__ import annotations

from msjgym.api import Scenario
from msjgym.core.user_policy import Decide, load_user_policy

load_policy = load_user_policy
"""(display name, decide(observation, mask)) for ``FILE.py:NAME``, ``sb3:MODEL.zip`` or a policy object (the name
used before the one loader, :func:`msjgym.core.user_policy.load_user_policy`)."""


def evaluate_agent(scenario: Scenario, name: str, decide: Decide, *, mode: str = "start", window: int = 8,
                   reps: int = 10, jobs: int = 100_000, warmup: int | None = None, seed: int | None = None,
                   batches: int = 20, progress: bool = False):
    """:func:`msjgym.evaluate.evaluate` of ``decide(observation, mask) -> action`` (shown as ``name``)."""
    from msjgym.evaluate.evaluator import evaluate

    return evaluate(scenario, _Named(name, decide), mode=mode, window=window, reps=reps, jobs=jobs, warmup=warmup,
                    seed=seed, batches=batches, progress=progress)


class _Named:
    """A decide function with a display name."""

    def __init__(self, name: str, decide: Decide) -> None:
        self.name, self.act = name, decide

