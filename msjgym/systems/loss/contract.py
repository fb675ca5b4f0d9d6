"""What the loss system and its policies share: the declaration class :class:`LossPolicy`, the per-state probability
kernels several policies use, the kernel signatures the event loop calls, and the family's table of kernel slots
:data:`KERNELS`.

A policy sees what the arrival's sample shows, m = min(l, d) (l idle servers among the k sampled, d the maximum
width), and returns the job's width: 0 = block, 1..m = run on that many idle sampled servers. Each built-in policy is
one file of ``msjgym.policies.loss`` (``greedy.py``, ``fixed_width.py``, ``random_width.py``) holding its declaration,
its compiled kernels and its rule (the agent form); a compiled width rule of the user's
(:mod:`msjgym.systems.loss.compiled`) is the same declaration. Each kernel is compiled on its own, on first use, for
its slot's signature (:data:`WIDTH`, :data:`PROBABILITY`), cached by its file; the loss event loop
(:mod:`msjgym.systems.loss.loop`), compiled once per machine, calls it at its address.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from numba import types

from msjgym.core.contract import KernelTable, Slot
from msjgym.core.jit import njit
from msjgym.core.policy_registry import BuiltinPolicy
from msjgym.systems.loss.observation import IDLE_SAMPLED
from msjgym.systems.loss.state import NARG

GMGM = "Ghanbarian, Mukhopadhyay, Guillemin & Mazumdar, 'Large Loss Systems with Adaptive Multiserver Jobs'"

WIDTH = types.int64(types.int64, types.int64, types.uint64[:, ::1], types.int64, types.float64[:, ::1])
"""``width(m, d, s, b, pmf)``: the width (0 = block) for a sample showing m idle servers (``LossPolicy.width_kernel``);
``s``: the replications' random streams, ``b``: this one; ``pmf`` is the state's table of P(m = j | state), whose
last :data:`NARG` columns hold a compiled rule's parameters (built-ins ignore it; :mod:`msjgym.systems.loss.compiled`)."""
PROBABILITY = types.float64(types.float64[:, ::1], types.int64, types.int64)
"""``p(pmf, b, d)``: P(block | state), P(width d | state) (``LossPolicy.block_probability``,
``.full_width_probability``), from ``pmf[b, j]`` = P(m = j | state), j = 0..d."""

KERNELS = KernelTable(family="loss", loop_label="the loss event loop", policy_label="policy",
                      slots=(Slot("width_kernel", WIDTH), Slot("block_probability", PROBABILITY),
                             Slot("full_width_probability", PROBABILITY)))
"""The loss event loop's kernel slots, in the order of ``LossParams.kernels``: the width, P(block | state) and P(width
d | state) (both integrated over time by the statistics, for GMGM eqs. (2), (9))."""


@dataclass(frozen=True, kw_only=True)
class LossPolicy(BuiltinPolicy):
    """A loss-system policy with its compiled kernels (called by :func:`msjgym.systems.loss.loop.run`).

    Attributes (beyond :class:`msjgym.api.PolicySpec`'s):
        rule: ``rule(m, d, rng) -> width``, the policy's decision for a sample showing m = min(l, d) idle servers
            (0 = block); ``rng`` is a ``numpy.random.Generator`` (None: the rule must not need one).
        width_kernel: its compiled twin ``width(m, d, s, b, pmf)`` (:data:`WIDTH`).
        block_probability, full_width_probability: compiled ``(pmf, b, d)``: P(block | state) and P(width d | state)
            from ``pmf[b, j]`` = P(m = j | state) (:data:`PROBABILITY`).
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


__all__ = ["GMGM", "KERNELS", "LossPolicy", "NARG", "PROBABILITY", "WIDTH", "block_if_none_idle",
           "width_d_if_d_idle"]
