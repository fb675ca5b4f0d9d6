"""Dispatching policies of the loss system with adaptive multiserver jobs (``msjgym.systems.loss.kernel``).

A policy sees what the arrival's sample shows, m = min(l, d) (l idle servers among the k sampled, d the maximum
width), and returns the job's width: 0 = block, 1..m = run on that many idle sampled servers.

* ``greedy``: width min(d, l) = m (GMGM §2, the paper's scheme); blocked only when no sampled server is idle.
* ``fixed-width``: exactly d servers or block (a rigid multiserver job; for comparison, not in GMGM).
* ``random-width``: a width uniform on {1..m} (for comparison, not in GMGM; draws from the replication's stream).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from msjgym.errors import PolicyError

GMGM = "Ghanbarian, Mukhopadhyay, Guillemin & Mazumdar, 'Large Loss Systems with Adaptive Multiserver Jobs'"


@dataclass(frozen=True)
class LossPolicy:
    """A built-in loss-system policy with a compiled kernel (``msjgym.systems.loss.kernel.policy_width``).

    Attributes:
        name: command-line name; summary: one line for ``msjgym list``; source: where it comes from.
        deterministic: whether the width is a function of the observation (the agent twin reproduces the kernel).
    """

    name: str
    summary: str
    source: str
    deterministic: bool

    def width(self, m: int, d: int, rng: np.random.Generator | None = None) -> int:
        """The width for a sample showing m = min(l, d) idle servers (0 = block)."""
        if self.name == "greedy":
            return m
        if self.name == "fixed-width":
            return d if m == d else 0
        if m == 0:
            return 0
        if rng is None:
            raise PolicyError("random-width: needs a random generator outside the compiled kernel")
        return int(rng.integers(1, m + 1))

    def agent(self, d: int, seed: int | None = None):
        """This policy as an agent of ``msjgym/AdaptiveLoss-v0``: ``act(observation) -> width`` (observation[0] = m)."""
        gen = np.random.default_rng(seed)
        policy = self

        class _Agent:
            name = policy.name

            def act(self, observation: np.ndarray) -> int:
                return policy.width(int(round(float(observation[0]))), d, gen)

            __call__ = act

        return _Agent()


GREEDY = LossPolicy("greedy", "loss systems: use min(d, idle sampled) servers, block if none (GMGM §2)",
                    f"{GMGM} §2", True)
FIXED_WIDTH = LossPolicy("fixed-width", "loss systems: exactly d servers or block (rigid jobs; comparison)",
                         "msjgym (comparison baseline)", True)
RANDOM_WIDTH = LossPolicy("random-width", "loss systems: a width uniform on 1..min(d, idle sampled) (comparison)",
                          "msjgym (comparison baseline)", False)
LOSS_POLICIES: dict[str, LossPolicy] = {p.name: p for p in (GREEDY, FIXED_WIDTH, RANDOM_WIDTH)}


def get_loss_policy(name: str) -> LossPolicy:
    """The loss-system policy called ``name``; ``PolicyError`` listing the valid names otherwise."""
    try:
        return LOSS_POLICIES[name]
    except KeyError:
        raise PolicyError(f"--policy {name!r}: unknown policy for a loss scenario; valid: "
                          f"{', '.join(LOSS_POLICIES)}") from None
