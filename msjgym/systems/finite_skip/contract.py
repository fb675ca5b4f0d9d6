"""The contract between the finite-skip systems and their policies: the system codes, the declaration class
:class:`FiniteSkipPolicy`, the agent form's runner :class:`FiniteSkipAgent`, the kernel signature :data:`ALLOCATE` and
the event loop's slot table :data:`KERNELS`.

Source: Grosof, Harchol-Balter & Scheller-Wolf, "The finite-skip method for multiserver analysis" (§§4.2, 5.2, 6.3,
7.2–7.3). Each policy file of ``policies/finite_skip/`` holds, side by side, a policy's compiled kernel (``allocate``,
compiled on its own on first use for :data:`ALLOCATE`, cached by its file, and called at its address by the family's
event loop, :mod:`msjgym.systems.finite_skip.loop`, after every arrival and completion), its declaration, and its agent
form (``rates``: plain Python written from the paper's definitions, independent of the kernel it must agree with; twin
test ``tests/test_finite_skip_agents.py``). A policy sees the jobs in arrival order (their class, and for
heterogeneous servers the server each holds), never sizes or ages, and gives each job a service rate as a fraction of
the system's capacity (rates sum to at most 1).

The kernel ``allocate(n, cls, prm, srv, speeds, k, levels, taken, rates, rng)`` is called for the n >= 1 jobs present
(job j of class ``cls[j]``, threshold or need ``prm[cls[j]]``, server ``srv[j]`` on heterogeneous servers, which the
kernel may reassign), the k servers' speeds ``speeds[0..k-1]`` (fastest first; a compiled rule of the user's finds its
parameters after them), the distinct thresholds ``levels`` (largest first), a scratch array ``taken`` and the random
stream ``rng`` (row 0); it writes each job's rate into ``rates`` (zeroed before the call).

The agent form's observation (a dict, :mod:`msjgym.systems.finite_skip.observation`):

============  =====================================================================================================
key           value
============  =====================================================================================================
``params``    int array [N]: each job's threshold P (threshold parallelism) or need v (MSJ); 1 otherwise
``servers``   int array [N]: heterogeneous M/G/k: the server each job holds (-1: none; 0 = fastest), else all -1
============  =====================================================================================================

Static facts come from the constructor: k and, for heterogeneous servers, the speeds (fastest first). Heterogeneous
agents also return the new server assignment (``last_servers``). ``random`` draws from a ``numpy.random.Generator``.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import types

from msjgym.core.contract import KernelTable, Slot
from msjgym.core.policy_registry import BuiltinPolicy, registered

# systems
HET = 0
LPS = 1
THRESHOLD = 2
MSJ = 3
SYSTEM_NAMES = {HET: "heterogeneous M/G/k", LPS: "LPS(k)", THRESHOLD: "threshold parallelism", MSJ: "multiserver-job"}
SYSTEM_KINDS = {HET: "heterogeneous", LPS: "lps", THRESHOLD: "threshold", MSJ: "msj"}
"""Each system's name as the theory (:mod:`msjgym.theory.finite_skip`) reads it (``FiniteSkipModel.kind``)."""

# the policies the simulator and the theory treat apart, by name
FSF = "fsf"
FSF_MINMIG = "fsf-minmig"
SF_EXP = "server-filling"
SF_DIV = "server-filling-divisible"

GHS = "Grosof, Harchol-Balter & Scheller-Wolf, finite-skip"

_I, _I1, _F1 = types.int64, types.int64[::1], types.float64[::1]
ALLOCATE = types.void(_I, _I1, _I1, _I1, _F1, _I, _I1, _I1, _F1, types.uint64[:, ::1])
"""The signature a policy's kernel ``allocate(n, cls, prm, srv, speeds, k, levels, taken, rates, rng)`` is compiled
for, on its own (cached by its file); the event loop calls it at its address."""

KERNELS = KernelTable(family="finite-skip", loop_label="the finite-skip event loop", policy_label="policy",
                      slots=(Slot("allocate", ALLOCATE),))
"""The event loop's one kernel slot: a policy's ``allocate``."""

Rates = Callable[["FiniteSkipAgent", list[int], list[int]], np.ndarray]
"""An agent form: ``rates(agent, params, servers) -> float64[N]`` (``agent`` gives k, the speeds, the generator, and
keeps ``last_servers``)."""


@dataclass(frozen=True, kw_only=True)
class FiniteSkipPolicy(BuiltinPolicy):
    """A built-in policy of a finite-skip system.

    Attributes (beyond :class:`msjgym.api.PolicySpec`'s name, summary, preemptive, source):
        system: the system code it runs on (HET, LPS, THRESHOLD, MSJ);
        wcfs: the paper proves it work-conserving finite-skip (Cor. 3.8 bounds apply);
        allocate: its compiled kernel ``allocate(n, cls, prm, srv, speeds, k, levels, taken, rates, rng)`` (called
            for n >= 1 jobs, with ``rates`` zeroed); None for a policy that is not a built-in (a user's agent);
        rates: its agent form (:data:`Rates`), called by :class:`FiniteSkipAgent`; None for a user's agent.
    """

    family: str = "finite-skip"
    system: int
    wcfs: bool
    allocate: Any = None
    rates: Rates | None = None


class FiniteSkipAgent:
    """Policy ``name`` on a system with ``k`` servers (``speeds``: heterogeneous speeds, any order), as an agent:
    ``act(observation) -> rates`` (the policy's own agent form, ``FiniteSkipPolicy.rates``)."""

    def __init__(self, name: str, k: int, speeds: Sequence[float] = (), rng: np.random.Generator | None = None):
        policies = registered("finite-skip")
        if name not in policies:
            raise ValueError(f"unknown finite-skip policy {name!r}; valid: {', '.join(policies)}")
        self.name, self.k = name, int(k)
        self.policy = policies[name]
        self.speeds = sorted(speeds, reverse=True) if speeds else [1.0 / k] * k
        self.rng = rng or np.random.default_rng(0)
        self.last_servers: list[int] = []

    def __call__(self, observation: Mapping[str, np.ndarray]) -> np.ndarray:
        return self.act(observation)

    def act(self, observation: Mapping[str, np.ndarray]) -> np.ndarray:
        return self.policy.rates(self, [int(x) for x in observation["params"]],
                                 [int(s) for s in observation["servers"]])


__all__ = ["HET", "LPS", "THRESHOLD", "MSJ", "SYSTEM_NAMES", "SYSTEM_KINDS", "FSF", "FSF_MINMIG", "SF_EXP", "SF_DIV",
           "GHS", "ALLOCATE", "KERNELS", "Rates", "FiniteSkipPolicy", "FiniteSkipAgent"]
