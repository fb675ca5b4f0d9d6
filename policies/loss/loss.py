"""Dispatching policies of the loss system with adaptive multiserver jobs (``msjgym.systems.loss.kernel``).

A policy sees what the arrival's sample shows, m = min(l, d) (l idle servers among the k sampled, d the maximum
width), and returns the job's width: 0 = block, 1..m = run on that many idle sampled servers.

* ``greedy``: width min(d, l) = m (GMGM §2, the paper's scheme); blocked only when no sampled server is idle.
* ``fixed-width``: exactly d servers or block (a rigid multiserver job; for comparison, not in GMGM).
* ``random-width``: a width uniform on {1..m} (for comparison, not in GMGM; draws from the replication's stream).

Each declaration carries its rule (``rule(m, d, rng) -> width``, the agent form) and its compiled kernels: the width,
and the per-state probabilities of blocking and of width d that the loss kernel integrates (GMGM's identities). Each
kernel is compiled on its own, on first use, for the signature the loss event loop calls it with
(``msjgym.systems.loss.kernel.WIDTH``, ``.PROBABILITY``), cached by this file; the loop, compiled once per machine,
calls it at its address.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from msjgym.core import rng as streams
from msjgym.core.jit import njit
from msjgym.errors import PolicyError
from msjgym.policies import BuiltinPolicy

GMGM = "Ghanbarian, Mukhopadhyay, Guillemin & Mazumdar, 'Large Loss Systems with Adaptive Multiserver Jobs'"


@dataclass(frozen=True, kw_only=True)
class LossPolicy(BuiltinPolicy):
    """A built-in loss-system policy with its compiled kernels (called by ``msjgym.systems.loss.kernel.run``).

    Attributes (beyond :class:`msjgym.api.PolicySpec`'s):
        rule: ``rule(m, d, rng) -> width``, the policy's decision for a sample showing m = min(l, d) idle servers
            (0 = block); ``rng`` is a ``numpy.random.Generator`` (None: the rule must not need one).
        width: its compiled twin ``width(m, d, s, b)`` (``s``: the replications' random streams, ``b``: this one).
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


# ---------------------------------------------------------------- compiled kernels
@njit
def width_greedy(m, d, s, b):
    return m


@njit
def width_fixed(m, d, s, b):
    return d if m == d else 0


@njit
def width_uniform(m, d, s, b):
    if m == 0:
        return 0
    return 1 + streams.below(s, b, m)


@njit
def block_if_none_idle(pmf, b, d):
    """Blocked when the sample shows no idle server: P(m = 0)."""
    return pmf[b, 0]


@njit
def block_if_fewer_than_d(pmf, b, d):
    """Blocked unless the sample shows d idle servers: 1 − P(m = d)."""
    return 1.0 - pmf[b, d]


@njit
def width_d_if_d_idle(pmf, b, d):
    """Width d exactly when the sample shows d idle servers: P(m = d)."""
    return pmf[b, d]


@njit
def width_d_uniform(pmf, b, d):
    """A uniform width on 1..m is d only when m = d, with probability 1/d: P(m = d)/d."""
    return pmf[b, d] / d


# ---------------------------------------------------------------- rules (the agent form) and declarations
def _greedy(m: int, d: int, rng: Any) -> int:
    return m


def _fixed_width(m: int, d: int, rng: Any) -> int:
    return d if m == d else 0


def _random_width(m: int, d: int, rng: np.random.Generator | None) -> int:
    if m == 0:
        return 0
    if rng is None:
        raise PolicyError("random-width: needs a random generator outside the compiled kernel")
    return int(rng.integers(1, m + 1))


GREEDY = LossPolicy(name="greedy", summary="loss systems: use min(d, idle sampled) servers, block if none (GMGM §2)",
                    source=f"{GMGM} §2", rule=_greedy, width_kernel=width_greedy,
                    block_probability=block_if_none_idle, full_width_probability=width_d_if_d_idle)
FIXED_WIDTH = LossPolicy(name="fixed-width",
                         summary="loss systems: exactly d servers or block (rigid jobs; comparison)",
                         source="msjgym (comparison baseline)", rule=_fixed_width, width_kernel=width_fixed,
                         block_probability=block_if_fewer_than_d, full_width_probability=width_d_if_d_idle)
RANDOM_WIDTH = LossPolicy(name="random-width",
                          summary="loss systems: a width uniform on 1..min(d, idle sampled) (comparison)",
                          source="msjgym (comparison baseline)", rule=_random_width, width_kernel=width_uniform,
                          block_probability=block_if_none_idle, full_width_probability=width_d_uniform,
                          deterministic=False)
