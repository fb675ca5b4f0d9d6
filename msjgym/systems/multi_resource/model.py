"""The multi-resource model: identical nodes with a capacity vector over named resources, K job classes, each job
holding a demand vector on one node for its whole service; Poisson arrivals (MSJ's).

Resources are named (``cores``, ``gpus``, ``memory``, ...), amounts are non-negative integers in the resource's own
unit (memory in GB, say), a node's capacity of each is > 0. A class-k job holds ``demand[k, r]`` of each resource r
on one node, for its service duration S_k (MSJ's laws); it demands something (some amount > 0) and fits an empty
node. Arrivals: Poisson of total rate λ, a job of class k with probability p_k (MSJ's arrival machinery).

The model *is* an :class:`msjgym.systems.msj.model.MSJModel` (a subclass), so the multiserver-job family's engine,
arrival machinery and statistics run it:

* with one resource on one node (``resources = {servers = n}``) it is exactly the MSJ model: ``servers`` = n and each
  class's ``need`` = its demand (the twin of the multiserver-job family, bit for bit);
* otherwise ``need`` = 1 for every class and ``servers`` = :func:`jobs_bound`, a bound on the jobs in service at once
  (the size of MSJ's completion heap and of the policies' per-running-job areas); the resources themselves are
  counted in the record's resource area (:mod:`msjgym.systems.multi_resource.state`).

Load (:attr:`MultiResourceModel.load`): the bottleneck resource's offered load, ρ = max_r ρ_r with
ρ_r = Σ_k λ_k d_kr E[S_k] / (nodes · C_r), the long-run fraction of resource r held under any stable policy; no
policy is stable at ρ >= 1 (ρ < 1 is necessary, not sufficient: docs/families/multi_resource.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from msjgym.core.limits import MAX_SERVERS
from msjgym.errors import ScenarioError
from msjgym.systems.msj.model import MSJModel

MAX_RESOURCES = 64
"""Resources per node: the policies scan the demand vector at every decision."""
MAX_NODES = 4096
"""Identical nodes: the policies scan the nodes at every placement."""


def jobs_bound(capacity: np.ndarray, demand: np.ndarray, nodes: int) -> int:
    """An upper bound on the jobs in service at once: every job holds at least one unit of some resource r it
    demands, so at most nodes · Σ_r ⌊C_r / (the least positive demand of r)⌋ jobs fit (``capacity``: ``int64[R]``,
    ``demand``: ``int64[K, R]``)."""
    total = 0
    for r in range(len(capacity)):
        positive = demand[:, r][demand[:, r] > 0]
        if positive.size:
            total += int(capacity[r]) // int(positive.min())
    return max(1, nodes * total)


def checked_servers(names: tuple[str, ...], capacity: np.ndarray, demand: np.ndarray, nodes: int) -> int:
    """MSJ's ``servers`` of the machine (module docstring: one node's capacity with one resource on one node, else
    :func:`jobs_bound`), at most :data:`~msjgym.core.limits.MAX_SERVERS`; else a ``ScenarioError`` naming the
    resource that lets the most jobs fit (``names``: the resources' names)."""
    twin = len(capacity) == 1 and nodes == 1
    servers = int(capacity[0]) if twin else jobs_bound(capacity, demand, nodes)
    if servers <= MAX_SERVERS:
        return servers
    if twin:
        raise ScenarioError(f"resources.{names[0]} = {servers:,}: must be at most {MAX_SERVERS:,} (one resource on one "
                            "node is the multiserver-job system, a server per unit: the engine keeps per-server "
                            "state): give the amounts in coarser units")
    fits = [int(capacity[r]) // max(1, int(min((d for d in demand[:, r] if d > 0), default=0)))
            if np.any(demand[:, r] > 0) else 0 for r in range(len(capacity))]
    r = int(np.argmax(fits))
    least = int(min(d for d in demand[:, r] if d > 0))
    raise ScenarioError(f"resources.{names[r]} = {int(capacity[r]):,}: {nodes:,} node(s) of it fit "
                        f"{nodes * fits[r]:,} jobs of the smallest {names[r]} demand ({least:,}) at once; the jobs in "
                        f"service at once must be at most {MAX_SERVERS:,} (the engine keeps per-job state): give the "
                        "amounts in coarser units")


@dataclass(frozen=True)
class MultiResourceModel(MSJModel):
    """MSJ's model (servers, arrival rate, classes, estimate law) with a resource vector per node and per class.

    Attributes (beyond :class:`MSJModel`'s):
        resources: the resources' names, in the scenario's order (R of them).
        capacity: one node's capacity of each resource, R positive integers.
        demands: each class's demand of each resource, K tuples of R non-negative integers.
        nodes: identical nodes (a job is placed within one node).
    """

    resources: tuple[str, ...] = ("servers",)
    capacity: tuple[int, ...] = ()
    demands: tuple[tuple[int, ...], ...] = ()
    nodes: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        R, K = len(self.resources), self.num_classes
        if not 1 <= R <= MAX_RESOURCES:
            raise ScenarioError(f"resources: {R} resources; must be 1 to {MAX_RESOURCES}")
        if not isinstance(self.nodes, (int, np.integer)) or isinstance(self.nodes, bool) \
                or not 1 <= self.nodes <= MAX_NODES:
            raise ScenarioError(f"nodes = {self.nodes!r}: must be an integer in [1, {MAX_NODES}]")
        if len(self.capacity) != R or any(not _integer(v) or v < 1 for v in self.capacity):
            raise ScenarioError(f"resources = {dict(zip(self.resources, self.capacity))}: each capacity must be an "
                                "integer >= 1")
        if len(self.demands) != K or any(len(d) != R for d in self.demands):
            raise ScenarioError(f"classes[*].demand: one amount per resource ({', '.join(self.resources)}) per class")
        for k, d in enumerate(self.demands):
            for r, v in enumerate(d):
                if not _integer(v) or not 0 <= v <= self.capacity[r]:
                    raise ScenarioError(f"classes[{k}].demand.{self.resources[r]} = {v!r}: must be an integer in "
                                        f"[0, {self.capacity[r]}] (a node's capacity)")
            if not any(d):
                raise ScenarioError(f"classes[{k}].demand: demands nothing; at least one amount must be > 0")
        twin = self.is_msj
        needs = [int(d[0]) for d in self.demands] if twin else [1] * K
        if [c.need for c in self.classes] != needs or self.servers != (
                int(self.capacity[0]) if twin else jobs_bound(self.capacity_array, self.demand, self.nodes)):
            raise ScenarioError("servers / classes[*].need: derived from the resources (build the model with "
                                "msjgym.systems.multi_resource.model.multi_resource_model)")

    def trace_classes(self) -> np.ndarray:
        """int64[n]: the class of each job of the replayed trace, the class of its demand vector
        (:meth:`msjgym.systems.multi_resource.trace.ResourceTrace.class_index`)."""
        return self.trace.class_index(self.demand)

    @property
    def is_msj(self) -> bool:
        """One resource on one node: the model is the multiserver-job model (its twin)."""
        return len(self.resources) == 1 and self.nodes == 1

    @property
    def capacity_array(self) -> np.ndarray:
        """One node's capacity C_r, ``int64[R]``."""
        return np.array(self.capacity, dtype=np.int64)

    @property
    def demand(self) -> np.ndarray:
        """The demand d_kr of a class-k job, ``int64[K, R]``."""
        return np.array(self.demands, dtype=np.int64).reshape(self.num_classes, len(self.resources))

    @property
    def arrival_rates(self) -> np.ndarray:
        """λ_k = λ p_k, jobs per unit time, ``float64[K]``."""
        return self.class_arrival_rates

    @property
    def mean_sizes(self) -> np.ndarray:
        """E[S_k], time units, ``float64[K]``."""
        return self.mean_service

    @property
    def resource_loads(self) -> np.ndarray:
        """ρ_r = Σ_k λ_k d_kr E[S_k] / (nodes · C_r): the long-run fraction of resource r held under any stable
        policy, ``float64[R]``."""
        with np.errstate(over="ignore"):
            work = (self.arrival_rates * self.mean_sizes) @ self.demand
        return work / (self.nodes * self.capacity_array)

    @property
    def bottleneck(self) -> int:
        """The index of the resource with the largest offered load (the first of equals)."""
        return int(np.argmax(self.resource_loads))

    @property
    def load(self) -> float:
        """ρ = max_r ρ_r, the bottleneck resource's offered load (MSJ's λ Σ p m E[S] / n with one resource on one
        node); the scenario's own value when it gave the load."""
        if self.is_msj or self.given_load is not None:
            return super().load
        return float(self.resource_loads.max())


def _integer(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def multi_resource_model(base: MSJModel, resources: tuple[str, ...], capacity: tuple[int, ...],
                         demands: tuple[tuple[int, ...], ...], nodes: int = 1, load: float | None = None
                         ) -> MultiResourceModel:
    """The model of ``base``'s arrivals, classes (their names, probabilities, service laws) and estimate law on the
    machine ``nodes`` × ``capacity`` with the classes' ``demands``. ``load``: the bottleneck load ρ to set λ from
    (λ = ρ / max_r Σ_k p_k d_kr E[S_k] / (nodes · C_r)); None keeps ``base``'s λ. With one resource on one node the
    classes' needs and the servers are the demands and the capacity (``base`` is then taken as it is: its λ from a
    load is MSJ's own, to the bit)."""
    R = len(resources)
    if len(capacity) != R or len(demands) != base.num_classes:
        raise ScenarioError("resources / classes[*].demand: one capacity per resource, one demand vector per class")
    twin = R == 1 and nodes == 1
    cap = np.array(capacity, dtype=np.int64)
    dem = np.array(demands, dtype=np.int64).reshape(base.num_classes, R)
    classes = tuple(c if twin else type(c)(c.name, 1, c.probability, c.service) for c in base.classes)
    servers = checked_servers(tuple(resources), cap, dem, nodes)
    rate = base.arrival_rate
    given = base.given_load if twin else load
    if load is not None and not twin:
        p = base.probabilities
        per_job = max(math.fsum(p[k] * dem[k, r] * base.classes[k].service.mean for k in range(base.num_classes))
                      / (nodes * int(cap[r])) for r in range(R))
        rate = load / per_job
    return MultiResourceModel(servers=servers, arrival_rate=rate, classes=classes, trace=base.trace,
                              estimate=base.estimate, given_load=given, resources=tuple(resources),
                              capacity=tuple(int(v) for v in capacity),
                              demands=tuple(tuple(int(v) for v in d) for d in demands), nodes=int(nodes))
