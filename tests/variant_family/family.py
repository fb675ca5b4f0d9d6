"""``msj-resources``: multiserver jobs that request a vector of resources, allocated whole nodes (a derived family).

The machine is ``nodes`` identical nodes, each with the capacities ``node = {cores = 32, memory = 256, ...}`` (any
resource names, any units). A job class requests totals ``resources = {cores = 40, memory = 600}`` and is allocated
whole nodes, exclusively, as a batch scheduler with node-exclusive allocation does: it holds

    nodes(job) = max over resources r of ⌈request_r / capacity_r⌉      (at least 1)

nodes for its whole service. So a scenario of this family *is* a multiserver-job system over nodes (need = nodes(job)),
and everything else is the parent's: its model and validation, its compiled event loop, every built-in policy (with
``bind``), a policy of the user's through ``msjgym/MSJ-v0``'s agent path, the theory's references and the evaluator.
What this variant does not model: jobs sharing a node (vector packing inside a node).

A scenario file (``system = "msj-resources"``; every other key as in the parent's files, ``servers`` and ``need``
excepted)::

    system = "msj-resources"
    nodes = 8
    node = { cores = 32, memory = 256 }
    load = 0.7                      # the long-run fraction of nodes held (the parent's ρ over nodes)
    [[classes]]
    name = "wide"
    resources = { cores = 64, memory = 100 }
    probability = 0.5
    service = { dist = "exp", rate = 1.0 }
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from msjgym import api
from msjgym.errors import ScenarioError
from msjgym.systems.msj.family import MSJFamily
from msjgym.systems.msj.scenarios import load_scenario_file, scenario_system

NAME = "msj-resources"
_OWN_KEYS = ("nodes", "node")
_OWN_CLASS_KEYS = ("resources",)


def nodes_needed(request: Mapping[str, Any], capacity: Mapping[str, float], where: str) -> int:
    """⌈request_r / capacity_r⌉ maximised over the resources r (at least 1): the nodes a job holds.

    Args:
        request: the job's total request per resource (non-negative numbers; at least one positive).
        capacity: one node's capacity per resource (positive numbers).
        where: the key path of ``request``, for errors.
    """
    if not isinstance(request, Mapping) or not request:
        raise ScenarioError(f"{where} = {request!r}: must be a non-empty table of resource = amount")
    count = 0
    for resource, amount in request.items():
        if resource not in capacity:
            raise ScenarioError(f"{where}.{resource}: not a resource of the node; valid: {', '.join(capacity)}")
        if not isinstance(amount, (int, float)) or isinstance(amount, bool) or not 0 <= amount < math.inf:
            raise ScenarioError(f"{where}.{resource} = {amount!r}: must be a finite number >= 0")
        count = max(count, math.ceil(amount / capacity[resource]))
    if count == 0:
        raise ScenarioError(f"{where}: requests nothing; at least one amount must be > 0")
    return count


def to_msj(spec: dict) -> dict:
    """This family's scenario table as the parent's: ``servers = nodes``, each class's ``need`` = its nodes."""
    out = {k: v for k, v in spec.items() if k not in _OWN_KEYS and k != "system"}
    if "servers" in spec:
        raise ScenarioError("servers: not a key of an msj-resources scenario; give nodes = N and node = {...}")
    nodes = spec.get("nodes")
    if not isinstance(nodes, int) or isinstance(nodes, bool) or nodes < 1:
        raise ScenarioError(f"nodes = {nodes!r}: must be an integer >= 1 (the machine's identical nodes)")
    capacity = spec.get("node")
    if not isinstance(capacity, Mapping) or not capacity:
        raise ScenarioError(f"node = {capacity!r}: must be a non-empty table of resource = capacity per node")
    for resource, value in capacity.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value < math.inf:
            raise ScenarioError(f"node.{resource} = {value!r}: must be a finite number > 0")
    out["servers"] = nodes
    classes = spec.get("classes")
    if isinstance(classes, list):
        out["classes"] = [_class_to_msj(table, i, capacity, nodes) for i, table in enumerate(classes)]
    return out


def _class_to_msj(table: Any, index: int, capacity: Mapping[str, float], nodes: int) -> Any:
    where = f"classes[{index}]"
    if not isinstance(table, Mapping):
        return table  # the parent's validation names it
    if "need" in table:
        raise ScenarioError(f"{where}.need: not a key of an msj-resources class; give resources = {{...}}")
    if "resources" not in table:
        raise ScenarioError(f"{where}: missing key 'resources' (the job's total request per resource)")
    need = nodes_needed(table["resources"], capacity, f"{where}.resources")
    if need > nodes:
        raise ScenarioError(f"{where}.resources: needs {need} nodes; the machine has nodes = {nodes}")
    return {k: v for k, v in table.items() if k not in _OWN_CLASS_KEYS} | {"need": need}


class ResourceFamily(MSJFamily):
    """The multiserver-job family with resource-vector requests (see the module docstring): the parent's family
    with its own name and scenario files; every run, policy, check and reference is the parent's."""

    name = NAME
    title = "multi-resource jobs on whole nodes: each job requests a vector of resources (a variant of msj)"
    order = 90
    env_ids = ()

    def scenarios(self) -> list[tuple[str, str]]:
        return []

    def owns(self, name: str) -> bool:
        path = Path(name).expanduser()
        return path.is_file() and scenario_system(path) == self.name

    def load(self, name: str, overrides: Mapping[str, Any]) -> api.Scenario:
        return load_scenario_file(name, overrides, family=self.name, to_msj=to_msj)

    def scenario_of_model(self, model: Any) -> api.Scenario | None:
        return None  # a bare model is the parent's


FAMILY = ResourceFamily()
