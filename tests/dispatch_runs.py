"""Dispatch runs for the tests: through ``msjgym.evaluate``, with a bare dispatch setting (any job-size law, e.g.
``Erlang(k=3, rate=3.0)``) as the scenario; the engine's own knobs (completions from a heap or from competing clocks,
the initial array sizes) through the family's replication runner,
:class:`~msjgym.systems.dispatch.simulation.DispatchReplications`, which the evaluator drives."""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

import msjgym
from msjgym.core.distributions import Distribution, Exponential
from msjgym.core.estimates import Estimate
from msjgym.systems.dispatch.model import DispatchModel
from msjgym.systems.dispatch.simulation import DispatchReplications
from msjgym.systems.dispatch.scenarios import DispatchSetting


@dataclass
class Run:
    """A dispatch run: its model, its replications (the metrics as attributes, and ``queue_length_distribution``:
    P[Q = k], k = 0, 1, ...) and, when it went through ``msjgym.evaluate``, its result."""

    model: DispatchModel
    replications: list[Any]
    result: Any = None

    @property
    def response_time(self) -> Estimate:
        return self.result.metrics["response_time"]

    @property
    def estimates(self) -> dict[str, Estimate]:
        return self.result.metrics

    @property
    def queue_length_distribution(self) -> np.ndarray:
        """P[Q = k], k = 0, 1, ..., the mean over the replications."""
        top = max(r.queue_length_distribution.size for r in self.replications)
        return np.mean([np.pad(r.queue_length_distribution, (0, top - r.queue_length_distribution.size))
                        for r in self.replications], axis=0)

    def tail(self) -> np.ndarray:
        """The fraction of servers with at least i jobs, i = 0, 1, ... (mean over the replications)."""
        return self.queue_length_distribution[::-1].cumsum()[::-1]


def replication(values: dict[str, float]) -> SimpleNamespace:
    """One replication of ``msjgym.evaluate``'s result (its metrics) as attributes, P(Q=k) as an array."""
    levels = sorted(int(k[4:-1]) for k in values if k.startswith("P(Q="))
    pmf = np.array([values[f"P(Q={k})"] for k in levels])
    top = int(np.flatnonzero(pmf)[-1]) + 1 if pmf.any() else 1
    plain = {k: v for k, v in values.items() if not k.startswith("P(Q=")}
    return SimpleNamespace(**plain, queue_length_distribution=pmf[:top])


def setting(servers: int, lam: float, dist: Distribution | None = None, **params: Any) -> DispatchSetting:
    """A bare dispatch setting: N = ``servers``, λ, ``dist`` (default Exp(1)) and the policies' parameters
    (``d``, ``delta``, ``delta0``, ``delta1``, ``batch_size``, ``p``, ``remove``, ``fast_fraction``,
    ``speed_ratio``)."""
    dist = Exponential(rate=1.0) if dist is None else dist
    return DispatchSetting(servers=servers, dist_name=str(dist), dist=dist, lam=lam, **params)


def simulate(policy: Any, servers: int, lam: float, dist: Distribution | None = None, *, arrivals: int = 100_000,
             reps: int = 20, seed: int = 1, warmup: int | None = None, observation: str | None = None,
             levels: int | None = None, completions: str = "auto", array_levels: int = 256, **params: Any) -> Run:
    """``reps`` replications of ``policy`` (a built-in's name, or a dispatcher of the user's deciding through
    ``observation`` with ``levels``) through ``msjgym.evaluate`` (``arrivals`` per replication, warm-up included;
    ``warmup``: arrivals not measured, default 10 %);
    with the engine's knobs ``completions`` and ``array_levels`` (the arrays' initial largest queue length), a
    built-in's replications through the family's replication runner."""
    where = setting(servers, lam, dist, **params)
    options = {key: value for key, value in (("observation", observation), ("levels", levels)) if value is not None}
    warmup = int(round(0.1 * arrivals)) if warmup is None else warmup
    if completions == "auto" and array_levels == 256:  # evaluate's jobs: the measured arrivals, the warm-up on top
        result = msjgym.evaluate(where, policy, reps=reps, jobs=arrivals - warmup, warmup=warmup, seed=seed,
                                 references=False, **options)
        model = where.model(policy) if isinstance(policy, str) and not options else None
        return Run(model, [replication(r) for r in result.replications], result)
    runs = DispatchReplications(where.model(policy), arrivals, warmup, reps, seed, array_levels, completions)
    return Run(runs.model, [runs.run(b) for b in range(reps)])
