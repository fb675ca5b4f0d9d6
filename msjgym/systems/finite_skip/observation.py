"""The observation of a finite-skip policy (the agent path, :mod:`msjgym.systems.finite_skip.agent`): its layout,
defined once (the agent path builds the observation with these keys), and the named view a policy reads it with.

A dict of two int arrays over the N jobs present, in arrival order: ``PARAMS`` ("params": each job's parallelism
threshold P in threshold systems, its need v in MSJ systems, else 1) and ``SERVERS`` ("servers": heterogeneous
M/G/k, the server each job holds, -1 for none, 0 = the fastest; else all -1). The action is N service rates
(fractions of capacity, summing to at most 1); nothing is masked.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from msjgym.core.observation import ObservationView

PARAMS = "params"
SERVERS = "servers"


def make_observation(params: np.ndarray, servers: np.ndarray) -> dict[str, np.ndarray]:
    """The observation of the jobs present (int arrays of N, in arrival order)."""
    return {PARAMS: params, SERVERS: servers}


@dataclass(frozen=True)
class FiniteSkipLayout:
    """The static facts of a finite-skip system's observations: k ``servers``, their ``speeds`` (fractions of
    capacity; heterogeneous systems, fastest first; else k × 1/k)."""

    servers: int
    speeds: tuple[float, ...]

    def describe(self) -> str:
        return f"finite-skip k={self.servers}"

    def view(self, observation: Mapping[str, Any]) -> FiniteSkipView:
        return FiniteSkipView(observation, self)


class FiniteSkipView(ObservationView):
    """The jobs present, in arrival order (frozen; the arrays are read-only views of the observation's). The action
    is one rate per job, e.g. ``np.zeros(view.jobs)`` filled in."""

    __slots__ = ("_params", "_servers")
    fields = ("jobs", "params", "servers_held")

    def __init__(self, observation: Mapping[str, Any], layout: FiniteSkipLayout) -> None:
        if not isinstance(observation, Mapping) or PARAMS not in observation or SERVERS not in observation:
            got = sorted(observation) if isinstance(observation, Mapping) else type(observation).__name__
            raise ValueError(f"observation {got}: expected a dict with keys {PARAMS!r} and {SERVERS!r} for "
                             f"{layout.describe()}")
        arrays = []
        for key in (PARAMS, SERVERS):
            a = np.asarray(observation[key]).view()
            if a.ndim != 1:
                raise ValueError(f"observation[{key!r}] of shape {a.shape}: expected (N,), one entry per job")
            a.flags.writeable = False
            arrays.append(a)
        if arrays[0].shape != arrays[1].shape:
            raise ValueError(f"observation[{PARAMS!r}] has {arrays[0].size} jobs, observation[{SERVERS!r}] "
                             f"{arrays[1].size}: expected the same N")
        for name, value in zip(("observation", "layout", "_params", "_servers"), (observation, layout, *arrays)):
            object.__setattr__(self, name, value)

    @property
    def jobs(self) -> int:
        """N, the jobs present."""
        return int(self._params.size)

    @property
    def params(self) -> np.ndarray:
        """int[N]: each job's parallelism threshold P (the most servers it can use; threshold systems), its need v
        (servers it holds; MSJ systems), else 1."""
        return self._params

    @property
    def servers_held(self) -> np.ndarray:
        """int[N]: heterogeneous servers: the server each job holds (-1: none; 0 = the fastest); else all -1."""
        return self._servers

    @property
    def capacity(self) -> int:
        """k, the servers (the rates the action gives are fractions of their total capacity)."""
        return self.layout.servers
