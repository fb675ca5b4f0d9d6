"""Evaluate any scheduler — an object with ``act``, a callable, or a saved Stable-Baselines3 model — exactly like a
built-in one: the same replications, seeds, warm-up, statistics and scorecard as ``msjgym.evaluate``.

The policy is loaded by :func:`msjgym.core.user_policy.load_user_policy` (the contract of every family: a class is
built with the environment's :class:`~msjgym.envs._core.EnvSpec`) and sees what an agent of ``msjgym/MSJ-v0`` sees:
``act(observation, action_mask)`` (or ``act(observation)``). Anything a policy does wrong — it raises, returns
something that is not an action, or returns a masked action — stops the evaluation with one error naming the
replication, the step and the value (:func:`msjgym.core.user_policy.checked_action`).
"""
from __future__ import annotations

import secrets
import sys
import time

import numpy as np
from tqdm import tqdm

from msjgym.core.user_policy import Decide, checked_action, load_user_policy
from msjgym.envs._core import AGENT, EnvSpec, MSJBatch
from msjgym.evaluate import scorecard
from msjgym.evaluate.runner import EvaluationResult, _result
from msjgym.policies import Policy
from msjgym.systems.msj import control as msj_control
from msjgym.systems.msj.scenarios import Scenario

load_policy = load_user_policy
"""(display name, decide(observation, mask)) for ``FILE.py:NAME`` or ``sb3:MODEL.zip`` (the name used before the
one loader, :func:`msjgym.core.user_policy.load_user_policy`)."""


def evaluate_agent(scenario: Scenario, name: str, decide: Decide, *, mode: str = "start", window: int = 8,
                   reps: int = 10, jobs: int = 100_000, warmup: int | None = None, seed: int | None = None,
                   batches: int = 20, progress: bool = False) -> EvaluationResult:
    """Run ``decide`` as the scheduler of ``reps`` independent replications (the seeds ``msjgym.evaluate`` uses)."""
    if seed is None:
        seed = secrets.randbits(32)
    warmup = jobs // 10 if warmup is None else warmup
    spec = EnvSpec.make(scenario, mode, window, None, None, jobs, warmup, batches)
    batch = MSJBatch(spec, reps)
    batch.seed(np.random.SeedSequence(seed).spawn(reps))
    msj_control.step_batch(batch.sim.state, batch.sim.params, batch.ctl, np.zeros(reps, np.int64),
                           np.ones(reps, np.bool_), batch.obs, batch.masks, batch.codes)
    start = time.perf_counter()
    with tqdm(total=reps * (warmup + jobs), unit="job", unit_scale=True, delay=1.0, disable=not progress,
              file=sys.stderr, desc=name) as bar:
        for b in range(reps):
            _run_replication(batch, b, decide, name, bar)
    result = _result(scenario, Policy(name, "", False, AGENT.kernel_id, ""), batch.sim, reps, seed,
                     time.perf_counter() - start, 0.0)
    result.references = scorecard.judge(scorecard.references(scenario.model, AGENT), result)
    return result


def _run_replication(batch: MSJBatch, b: int, decide: Decide, name: str, bar: tqdm) -> None:
    state, params, ctl = batch.sim.state, batch.sim.params, batch.ctl
    steps = 0
    while not batch.ended_now()[b]:
        action = checked_action(decide, batch.obs[b], batch.masks[b], name, b, steps)
        batch.codes[b] = msj_control.step_system(state, params, ctl, b, action, batch.obs[b], batch.masks[b])
        batch.finish()
        state = batch.sim.state
        steps += 1
        if steps % 4096 == 0:
            bar.update(batch.sim.progress(b) + b * (batch.spec.config.warmup + batch.spec.config.jobs) - bar.n)
