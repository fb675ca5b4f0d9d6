"""Replications of a multi-resource model under a built-in policy: MSJ's Python handle
(:class:`msjgym.systems.msj.simulation.MSJSimulation`) on this family's record, and the evaluator's runs
(:class:`MultiResourceRuns`, MSJ's :class:`~msjgym.systems.msj.family.BuiltinRuns` with this family's metrics).

What differs from MSJ's: the record (MSJ's with the resource area, :mod:`msjgym.systems.multi_resource.state`), the
kernel table (:data:`msjgym.systems.multi_resource.contract.KERNELS`: the same slots on this family's types), and,
beyond one resource on one node (where every number is MSJ's, bit for bit), the metrics: ``utilization`` is the
bottleneck resource's (:attr:`MultiResourceModel.bottleneck`), ``utilization_NAME`` each resource's (a row of its
own: a bracketed name would read as a class), and MSJ's server diagnostics of the zero-queueing analysis
(``high_occupancy_probability``, ``server_deficit[*]``) are left out (they count servers).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from msjgym import api
from msjgym.systems.msj.family import BuiltinRuns
from msjgym.systems.msj.metrics import invariants, open_metrics, saturated_metrics
from msjgym.systems.msj.simulation import MSJSimulation, RunConfig
from msjgym.systems.msj.state import B_AREA_X, B_NDONE, B_SUM_T, B_SUM_W, BS_TIME
from msjgym.systems.multi_resource import loop
from msjgym.systems.multi_resource.contract import KERNELS, MultiResourcePolicy
from msjgym.systems.multi_resource.model import MultiResourceModel
from msjgym.systems.msj.trace.replay import replay_invariants
from msjgym.systems.multi_resource.state import grow, with_resource_params, with_resources
from msjgym.systems.multi_resource.trace import resource_loop_integrals, resource_replay_metrics

__all__ = ["MultiResourceRuns", "MultiResourceSimulation", "RunConfig"]


class MultiResourceSimulation(MSJSimulation):
    """B independent replications of a multi-resource model under one built-in policy (MSJ's handle: its
    arguments, :meth:`advance`, statistics and direct control), on this family's record."""

    def __init__(self, model: MultiResourceModel, policy: MultiResourcePolicy, config: RunConfig,
                 streams: np.ndarray, capacity: int = 1024) -> None:
        super().__init__(model, policy, config, streams, capacity)  # MSJ's record, parameters and first arrivals
        self.units = KERNELS.units(policy, loops=[(loop.run, loop.signature()["run"])]) + self.check_units(
            loop.signature())
        table = None if policy.table is None else policy.table(model)
        self.params = with_resource_params(self.params, model.capacity_array, model.demand, table)
        self.state = with_resources(self.state, model.nodes, len(model.resources))

    def grow(self) -> None:
        self.state = grow(self.state, self.own)

    def prepare(self) -> float:
        """Compile (or load from the cache) the loop on this family's record and the policy's kernels."""
        from msjgym.core.compiling import compile_units
        seconds = compile_units(self.units)
        self.hooks = KERNELS.addresses(self.policy)
        self.arm_checks(loop.signature())
        return seconds

    @staticmethod
    def _entry(name: str):
        from msjgym.core.compiling import compile_units
        compile_units(KERNELS.loop_units([(getattr(loop, name), loop.signature()[name])]))
        return getattr(loop, name)


def demand_columns(model: MultiResourceModel, trace: Any) -> dict[str, np.ndarray]:
    """A replay's per-job demand columns: ``demand_NAME`` (int64) for each of ``model``'s resources, in their order,
    from ``trace.demand`` (n, R)."""
    return {f"demand_{name}": np.asarray(trace.demand[:, r], dtype=np.int64) for r, name in enumerate(model.resources)}


def per_job_header(model: MultiResourceModel, policy: str, scenario: str) -> dict[str, Any]:
    """What a schedule file's header says (msjgym/core/schedule.py): the first resource is the one an SWF schedule
    and a schedule plot show (``processors``: its column; ``servers``: the machine's amount of it, all nodes)."""
    first = model.resources[0]
    return {"servers": int(model.nodes * model.capacity_array[0]), "processors": f"demand_{first}",
            "resource": first, "policy": policy, "scenario": scenario}


class MultiResourceRuns(BuiltinRuns):
    """The evaluator's replications of a built-in policy (MSJ's, on :class:`MultiResourceSimulation`)."""

    simulation_class = MultiResourceSimulation

    def _unit_metrics(self, bstat: np.ndarray, bsys: np.ndarray, hist: np.ndarray) -> dict[str, float]:
        m = self.model
        if m.is_msj:
            return super()._unit_metrics(bstat, bsys, hist)
        demand, total = m.demand, m.nodes * m.capacity_array
        k = m.bottleneck
        if self.config.saturated:
            out = saturated_metrics(bstat, bsys, demand[:, k], int(total[k]), self.class_names)
        else:
            out = open_metrics(bstat, bsys, hist, demand[:, k], int(total[k]), self.class_names)
            out = {key: v for key, v in out.items()
                   if key != "high_occupancy_probability" and not key.startswith("server_deficit[")}
        for r, name in enumerate(m.resources):
            out[f"utilization_{name}"] = _utilization(bstat, bsys, demand[:, r], int(total[r]))
        return out

    def job_demand(self, trace: Any) -> dict[str, np.ndarray]:
        """Each job's whole demand vector, one column per resource: ``demand_NAME``."""
        return demand_columns(self.model, trace)

    def per_job_header(self) -> dict[str, Any]:
        return per_job_header(self.model, self.name, self.scenario.name)

    def replay_metrics(self, trace, completion: np.ndarray, wait: np.ndarray) -> dict[str, float]:
        if self.model.is_msj:
            return super().replay_metrics(trace, completion, wait)
        return resource_replay_metrics(self.model, trace, completion, wait, self.warmup, self.config.bsld_threshold)

    def check_values(self, rep: int, batch: int | None = None) -> dict[str, float]:
        m = self.model
        if m.trace is not None and not m.is_msj:
            if self.warmup or self.config.saturated:
                return {}
            sim, b = self._at(rep)
            return resource_loop_integrals(m, sim.state, b)
        if m.is_msj or self.config.saturated:
            return super().check_values(rep, batch)
        st = self._sim.state
        bstat = st.bstat[rep].sum(axis=0) if batch is None else st.bstat[rep, batch]
        k = m.bottleneck
        done = float(bstat[:, B_NDONE].sum())
        work = float(np.sum(m.demand[:, k] * (bstat[:, B_SUM_T] - bstat[:, B_SUM_W])))
        total = m.nodes * int(m.capacity[k])
        return {"sampled_load": m.arrival_rate * work / (done * total) if done > 0 else math.nan}

    def invariants(self) -> list[api.Invariant]:
        """MSJ's (the sampled load and the utilization against ρ, the bottleneck's here; each class's response
        against its mean service; Little's law)."""
        if self.config.saturated:
            return []
        if self.model.trace is not None:
            return replay_invariants() if self.warmup == 0 else []
        return invariants(self.model)


def _utilization(bstat: np.ndarray, bsys: np.ndarray, demand: np.ndarray, total: int) -> float:
    """The time-average fraction of a resource held: Σ_k d_k ∫ (class-k jobs in service) dt / (total · time)."""
    time = bsys[BS_TIME]
    return float(np.sum(bstat[:, B_AREA_X] * demand)) / (time * total) if time > 0 else math.nan
