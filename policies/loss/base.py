"""What every built-in loss-system policy shares: the declaration class :class:`LossPolicy` and the per-state
probability kernels several policies use.

A policy sees what the arrival's sample shows, m = min(l, d) (l idle servers among the k sampled, d the maximum
width), and returns the job's width: 0 = block, 1..m = run on that many idle sampled servers. Each policy is one file
of this package (``greedy.py``, ``fixed_width.py``, ``random_width.py``) holding its declaration, its compiled
kernels and its rule (the agent form). Each kernel is compiled on its own, on first use, for the signature the loss
event loop calls it with (``msjgym.systems.loss.kernel.WIDTH``, ``.PROBABILITY``), cached by its file; the loop,
compiled once per machine, calls it at its address.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from msjgym.core.jit import njit
from msjgym.policies import BuiltinPolicy

GMGM = "Ghanbarian, Mukhopadhyay, Guillemin & Mazumdar, 'Large Loss Systems with Adaptive Multiserver Jobs'"


@dataclass(frozen=True, kw_only=True)
class LossPolicy(BuiltinPolicy):
    """A built-in loss-system policy with its compiled kernels (called by ``msjgym.systems.loss.kernel.run``).

    Attributes (beyond :class:`msjgym.api.PolicySpec`'s):
        rule: ``rule(m, d, rng) -> width``, the policy's decision for a sample showing m = min(l, d) idle servers
            (0 = block); ``rng`` is a ``numpy.random.Generator`` (None: the rule must not need one).
        width_kernel: its compiled twin ``width(m, d, s, b, pmf)`` (``s``: the replications' random streams, ``b``: this
            one, ``pmf``: the state's table of P(m = j | state), whose last columns hold a compiled rule's parameters;
            built-ins ignore it).
        block_probability, full_width_probability: compiled ``(pmf, b, d)``: P(block | state) and P(width d | state)
            from ``pmf[b, j]`` = P(m = j | state).
        deterministic: whether the width is a function of the observation (the agent twin reproduces the kernel).
    """

    family: str = "loss"
    preemptive: bool = False
    rule: Callable[[int, int, Any], int]
    width_kernel: Any
    block_probability: Any
    full_width_probability: Any
    deterministic: bool = True

    def width(self, m: int, d: int, rng: np.random.Generator | None = None) -> int:
        """The width for a sample showing m = min(l, d) idle servers (0 = block)."""
        return self.rule(m, d, rng)

    def agent(self, d: int, seed: int | None = None):
        """This policy as an agent of ``msjgym/AdaptiveLoss-v0``: ``act(observation) -> width`` (from m, the idle
        servers the sample shows: ``msjgym.systems.loss.observation``)."""
        from msjgym.systems.loss.observation import IDLE_SAMPLED  # the layout (the family imports the policies)

        gen = np.random.default_rng(seed)
        policy = self

        class _Agent:
            name = policy.name

            def act(self, observation: np.ndarray) -> int:
                return policy.width(round(float(observation[IDLE_SAMPLED])), d, gen)

            __call__ = act

        return _Agent()


@njit
def block_if_none_idle(pmf, b, d):
    """Blocked when the sample shows no idle server: P(m = 0)."""
    return pmf[b, 0]


@njit
def width_d_if_d_idle(pmf, b, d):
    """Width d exactly when the sample shows d idle servers: P(m = d)."""
    return pmf[b, d]
