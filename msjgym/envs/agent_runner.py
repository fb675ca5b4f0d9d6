"""Evaluate any scheduler — an object with ``act``, a callable, or a saved Stable-Baselines3 model — exactly like a
built-in one: the same replications, seeds, warm-up, statistics and scorecard as ``msjgym.evaluate``.

The policy is loaded by :func:`msjgym.core.user_policy.load_user_policy` (the contract of every family: a class is
built with the environment's :class:`~msjgym.envs._core.EnvSpec`) and sees what an agent of ``msjgym/MSJ-v0`` sees:
``act(observation, action_mask)`` (or ``act(observation)``). Anything a policy does wrong — it raises, returns
something that is not an action, or returns a masked action — stops the evaluation with one error naming the
replication, the step and the value (:func:`msjgym.core.user_policy.checked_action`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from msjgym.api import Scenario
from msjgym.core.user_policy import Decide, checked_action, load_user_policy
from msjgym.envs._core import EnvSpec, MSJBatch
from msjgym.systems.msj import control as msj_control

load_policy = load_user_policy
"""(display name, decide(observation, mask)) for ``FILE.py:NAME``, ``sb3:MODEL.zip`` or a policy object (the name
used before the one loader, :func:`msjgym.core.user_policy.load_user_policy`)."""


class AgentReplications:
    """``reps`` replications of a multiserver-job scenario scheduled by ``policy`` (``FILE.py:NAME``,
    ``sb3:MODEL.zip`` or a policy object) through ``msjgym/MSJ-v0``'s interface, with the seeds of the built-in path
    (replication r: ``SeedSequence(seed).spawn(reps)[r]``). Advanced one replication at a time by
    :func:`msjgym.evaluate.evaluate`."""

    def __init__(self, scenario: Scenario, policy: Any, *, mode: str = "start", window: int = 8, reps: int = 10,
                 jobs: int = 100_000, warmup: int = 0, batches: int = 20, seed: int = 0) -> None:
        spec = EnvSpec.make(scenario, mode, window, None, None, jobs, warmup, batches)
        self.name, self.decide = load_policy(policy, spec)
        self.batch = batch = MSJBatch(spec, reps)
        batch.seed(np.random.SeedSequence(seed).spawn(reps))
        msj_control.step_batch(batch.sim.state, batch.sim.params, batch.ctl, np.zeros(reps, np.int64),
                               np.ones(reps, np.bool_), batch.obs, batch.masks, batch.codes)
        self.steps = [0] * reps

    def advance(self, b: int, max_steps: int) -> int:
        """Let the policy take up to ``max_steps`` decisions in replication b; returns its simulation status."""
        batch = self.batch
        for _ in range(max_steps):
            if batch.ended_now()[b]:
                break
            action = checked_action(self.decide, batch.obs[b], batch.masks[b], self.name, b, self.steps[b])
            batch.codes[b] = msj_control.step_system(batch.sim.state, batch.sim.params, batch.ctl, b, action,
                                                     batch.obs[b], batch.masks[b])
            batch.finish()
            self.steps[b] += 1
        return batch.sim.status(b)


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

