"""Evaluate any dispatcher like a built-in one: :func:`evaluate_dispatcher` (and :func:`dispatcher`, which loads
one), whose home is the dispatch family's agent path, :mod:`msjgym.systems.dispatch.agent`.

    >>> from msjgym.envs.dispatch_agent_runner import evaluate_dispatcher
    >>> res = evaluate_dispatcher("examples/my_dispatcher.py:JoinBelowThreshold", servers=100, lam=0.9,
    ...                           observation="sampled", d=2, arrivals=100_000, reps=5, seed=1)
"""
from __future__ import annotations

from msjgym.systems.dispatch.agent import dispatcher, evaluate_dispatcher

__all__ = ["dispatcher", "evaluate_dispatcher"]
