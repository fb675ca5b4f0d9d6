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
    name, decide = dispatcher(policy, spec)
    root = np.random.SeedSequence(seed)
    batch = DispatchBatch(spec, reps)
    batch.seed(root.spawn(reps))
    start = time.perf_counter()
    batch.step(np.zeros(reps, np.int64), np.ones(reps, np.bool_))
    alive = ~batch.ended
    actions = np.full(reps, dc.SKIP, np.int64)
    step = 0
    bar = tqdm(total=spec.arrivals, desc=name, unit="arrival", unit_scale=True, disable=not progress,
               file=sys.stderr, leave=False)
    while alive.any():
        if step % PROGRESS_EVERY == 0:
            bar.update(min(step, spec.arrivals) - bar.n)  # the run drains past the last arrival
        for b in np.flatnonzero(alive):
            actions[b] = checked_action(decide, batch.obs[b], batch.masks[b], name, int(b), step)
        actions[~alive] = dc.SKIP  # finished replications stay as they are
        batch.step(actions, np.zeros(reps, np.bool_))
        alive &= ~batch.ended
        step += 1
    bar.close()
    seconds = (time.perf_counter() - start) / reps
    out = [batch.replication(b, seconds) for b in range(reps)]
    result = summarise(spec.model, spec.arrivals, spec.warmup, int(root.entropy), out)
    return dataclasses.replace(result, agent=name)

