"""The Python handle of the loss event loop: B independent replications of a loss model under a compiled policy (a
built-in, or a compiled width rule of the user's), advanced by :func:`msjgym.systems.loss.loop.run` (the count chain
for Exp(1) sizes) or :func:`~msjgym.systems.loss.loop.run_general` (a completion heap, any other law of mean 1).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from msjgym.systems.loss.contract import KERNELS
from msjgym.systems.loss.loop import RUN, reset_all, run, run_general
from msjgym.systems.loss.model import LossModel
from msjgym.systems.loss.state import I_EVENTS, I_TRACE, LossParams, LossState, new_params, new_state


class LossSimulation:
    """B independent replications of a loss model under a compiled policy.

    Args:
        model: the system.
        policy: a policy's declaration (:class:`msjgym.systems.loss.contract.LossPolicy`, e.g. from
            :func:`msjgym.api.policy_spec`; its kernels decide the widths and give the per-state blocking
            probability P(block | x) in the statistics).
        warmup: arrivals discarded.
        jobs: arrivals measured.
        batches: measurement batches.
        streams: ``uint64[B, 4]`` RNG states (``msjgym.core.rng.spawn_states``).
        trace_events: events recorded per replication (0: none).

    Attributes:
        state: the replications' :class:`~msjgym.systems.loss.state.LossState`.
        params: their :class:`~msjgym.systems.loss.state.LossParams` (the kernel addresses once :meth:`prepare` ran).
    """

    def __init__(self, model: LossModel, policy: Any, warmup: int, jobs: int, batches: int, streams: np.ndarray,
                 trace_events: int = 0) -> None:
        if jobs < batches:
            raise ValueError(f"jobs = {jobs}: must be >= batches = {batches}")
        self.model = model
        self.policy = policy
        self.params: LossParams = new_params(model, warmup, jobs, batches)
        self.state: LossState = new_state(model, streams, batches, trace_events)
        reset_all(self.state, self.params)
        row = getattr(policy, "parameter_row", None)  # a compiled width rule's parameters (loss.compiled)
        if row is not None:
            self.state.pmf[:, self.model.d + 1:] = row()
        self._loop = run if model.service is None else run_general

    def units(self) -> list:
        """What this simulation needs compiled (:class:`msjgym.core.compiling.Unit`): the event loop (once per
        machine) and the policy's kernels (:data:`msjgym.systems.loss.contract.KERNELS`)."""
        return KERNELS.units(self.policy, loops=[(self._loop, RUN)])

    def prepare(self) -> None:
        """Compile (or load from the cache) the event loop and the policy's kernels."""
        from msjgym.core.compiling import compile_units

        compile_units(self.units())
        self.params = self.params._replace(kernels=KERNELS.addresses(self.policy))

    def advance(self, b: int, max_arrivals: int) -> bool:
        """Run replication b for up to ``max_arrivals`` arrivals; True when its window is done."""
        if not self.params.kernels[0]:
            self.prepare()
        return bool(self._loop(self.state, self.params, b, max_arrivals))

    def events(self, b: int) -> int:
        """Events (arrivals and departures) of replication b so far."""
        return int(self.state.ints[b, I_EVENTS])

    def trace(self, b: int = 0) -> np.ndarray:
        """Recorded events of replication b: rows (event, busy servers after, jobs on < d servers after)."""
        return self.state.trace[b, :self.state.ints[b, I_TRACE]]
