"""Evaluate any dispatcher — an object with ``act``, a callable, ``FILE.py:NAME`` or ``sb3:MODEL.zip`` — on the
large-scale dispatch system with the paper's protocol, returning the ``DispatchResult`` that
:func:`msjgym.systems.dispatch.simulate.simulate` returns for a built-in policy (so the same tables and scorecard apply).

    >>> from msjgym.envs.dispatch_agent_runner import evaluate_dispatcher
    >>> res = evaluate_dispatcher("examples/my_dispatcher.py:JoinBelowThreshold", servers=100, lam=0.9,
    ...                           observation="sampled", d=2, arrivals=100_000, reps=5, seed=1)
    >>> res.response_time            # Estimate(mean, ci95), time units

The dispatcher sees what an agent of ``msjgym/Dispatch-v0`` sees (``act(observation, action_mask)``, or
``act(observation)``); it is loaded by :func:`msjgym.core.user_policy.load_user_policy` (a class is built with the
environment's :class:`~msjgym.envs._dispatch_core.DispatchSpec` if its constructor takes an argument). Replication r runs on ``SeedSequence(seed).spawn(reps)[r]``, the stream ``simulate`` gives it, so a
built-in policy's agent (:mod:`msjgym.policies.load_balancing_agents`) reproduces ``simulate`` exactly. Anything the
dispatcher does wrong stops the evaluation with one error naming the replication, the step and the action.
"""
from __future__ import annotations

import dataclasses
import sys
import time
from typing import Any

import numpy as np
from tqdm import tqdm

from msjgym.core.distributions import Distribution
from msjgym.core.user_policy import Decide, checked_action, load_user_policy
from msjgym.envs._dispatch_core import DispatchBatch, DispatchSpec
from msjgym.errors import PolicyError
from msjgym.systems.dispatch import control as dc
from msjgym.systems.dispatch.simulate import DispatchResult, summarise

PROGRESS_EVERY = 4096
"""Decisions between progress-bar updates."""


def dispatcher(policy: Any, spec: DispatchSpec) -> tuple[str, Decide]:
    """(display name, decide(observation, mask)) for ``FILE.py:NAME``, ``sb3:MODEL.zip``, an object with ``act``,
    a class or a callable: :func:`msjgym.core.user_policy.load_user_policy` with the environment's spec."""
    return load_user_policy(policy, spec)


def evaluate_dispatcher(policy: Any, servers: int, lam: float, dist: Distribution | str | None = None, *,
                        observation: str = "histogram", d: int | None = None, information: str = "push",
                        delta: float | None = None, delta0: float | None = None, delta1: float | None = None,
                        levels: int = 8, arrivals: int | None = None, warmup_fraction: float = 0.1, reps: int = 20,
                        seed: int | None = None, progress: bool = False) -> DispatchResult:
    """Run ``policy`` as the dispatcher of ``reps`` independent replications of the paper's protocol.

    Args:
        policy: ``FILE.py:NAME``, ``sb3:MODEL.zip``, an object with ``act(observation)``, a class or a callable.
        servers, lam, dist, observation, d, information, delta, delta0, delta1, levels: the environment
            (``msjgym/Dispatch-v0``'s arguments; the information model is jsq-d's sampling, jsq's exact queue
            lengths, or push / pull).
        arrivals: jobs per replication (default N·10⁴, as ``simulate``); the first ``warmup_fraction`` not measured.
        reps: replications (>= 1; CIs need >= 2); seed: root of ``SeedSequence`` (None: fresh entropy, reported).
        progress: a progress bar (on stderr) over the decisions of the replications, which run side by side.

    Returns the ``DispatchResult`` of ``simulate``: ``model`` is the information model, ``agent`` the policy's name.
    """
    if not (isinstance(reps, (int, np.integer)) and reps >= 1):
        raise PolicyError(f"reps = {reps!r}: must be an integer >= 1")
    spec = DispatchSpec.make(servers, lam, dist, observation, d, information, delta, delta0, delta1, levels,
                             arrivals=servers * 10_000 if arrivals is None else arrivals,
                             warmup_fraction=warmup_fraction)
    runs = DispatchAgentReplications(spec, policy, reps, seed)
    bar = tqdm(total=reps * spec.arrivals, desc=runs.name, unit="arrival", unit_scale=True, disable=not progress,
               file=sys.stderr, leave=False)
    start = time.perf_counter()
    for b in range(reps):
        while not runs.advance(b, PROGRESS_EVERY):
            bar.update(min(runs.progress(b), spec.arrivals) + b * spec.arrivals - bar.n)
    bar.close()
    seconds = (time.perf_counter() - start) / reps
    out = [runs.batch.replication(b, seconds) for b in range(reps)]
    result = summarise(spec.model, spec.arrivals, spec.warmup, runs.seed, out)
    return dataclasses.replace(result, agent=runs.name)


class DispatchAgentReplications:
    """``reps`` replications of ``spec``'s system whose arrivals ``policy`` dispatches, advanced one replication at a
    time (replication r: ``SeedSequence(seed).spawn(reps)[r]``, the stream ``simulate`` gives it)."""

    def __init__(self, spec: DispatchSpec, policy: Any, reps: int, seed: int | None) -> None:
        self.spec, self.reps = spec, reps
        self.name, self.decide = dispatcher(policy, spec)
        root = np.random.SeedSequence(seed)
        self.seed = int(root.entropy)
        self.batch = DispatchBatch(spec, reps)
        self.batch.seed(root.spawn(reps))
        self.batch.step(np.zeros(reps, np.int64), np.ones(reps, np.bool_))
        self.steps = np.zeros(reps, np.int64)
        self._actions = np.full(reps, dc.SKIP, np.int64)
        self._no_reset = np.zeros(reps, np.bool_)

    def ended(self, b: int) -> bool:
        return bool(self.batch.ended[b])

    def progress(self, b: int) -> int:
        """Decisions taken in replication b (one per arrival)."""
        return int(self.steps[b])

    def advance(self, b: int, max_steps: int) -> bool:
        """Let the dispatcher place up to ``max_steps`` arrivals of replication b; True when it has ended."""
        batch, actions = self.batch, self._actions
        for _ in range(max_steps):
            if batch.ended[b]:
                break
            actions[:] = dc.SKIP  # the other replications stay as they are
            actions[b] = checked_action(self.decide, batch.obs[b], batch.masks[b], self.name, b, int(self.steps[b]))
            batch.step(actions, self._no_reset)
            self.steps[b] += 1
        return self.ended(b)
