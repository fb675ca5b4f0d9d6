"""The generators of synthetic traces (``Trace.generator``): callables ``generator(jobs, seed_sequence) → Trace``
that draw another trace from the same workload model, on the same machine, scaled and estimated alike.

They are module-level frozen dataclasses, not closures, so that a scenario holding one pickles: ``msjgym sweep``
sends each task's scenario to a worker process (``--workers``, ``--backend ray``), and a closure cannot be pickled.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from msjgym.systems.msj.trace.files import Trace

Generator = Callable[[int, "int | np.random.SeedSequence"], Trace]


@dataclass(frozen=True)
class LublinDraw:
    """``jobs`` jobs of the Lublin–Feitelson model (:mod:`msjgym.systems.msj.trace.lublin`) on ``processors``
    processors, drawn from a seed (an int or a SeedSequence); the trace's own generator is this draw."""

    processors: int

    def __call__(self, jobs: int, seed: int | np.random.SeedSequence) -> Trace:
        from msjgym.systems.msj.trace import lublin

        submit, size, run, _ = lublin.generate(jobs, self.processors, seed)
        return Trace(arrival=submit, need=size, duration=run.astype(np.float64),
                     source=f"the Lublin-Feitelson model ({jobs:,} jobs, {self.processors} processors)",
                     machine=self.processors, generator=self)


@dataclass(frozen=True)
class ScaledDraw:
    """``draw``'s trace (of a ``machine``-processor model) scaled to ``servers`` servers and ``time_scale``
    (:meth:`Trace.scaled`)."""

    draw: Generator
    machine: int
    servers: int
    time_scale: float

    def __call__(self, jobs: int, seed: int | np.random.SeedSequence) -> Trace:
        return replace(self.draw(jobs, seed), machine=self.machine).scaled(self.servers, self.time_scale)


@dataclass(frozen=True)
class EstimatedDraw:
    """``draw``'s trace with its requested times from ``estimates`` (``estimates(trace, rng) → trace``; a picklable
    callable): each drawn trace gets its own, from the generator ``default_rng([model_seed, *the draw's seed
    sequence's first two words])``, so two draws of one seed get the same estimates."""

    draw: Generator
    estimates: Callable[[Trace, np.random.Generator | None], Trace]
    model_seed: int

    def __call__(self, jobs: int, seed: int | np.random.SeedSequence) -> Trace:
        sequence = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        rng = np.random.default_rng([self.model_seed, *sequence.generate_state(2).tolist()])
        return self.estimates(self.draw(jobs, seed), rng)
