"""The multi-resource scenarios: TOML files with ``system = "multi-resource"``, and the built-ins.

A scenario file::

    system = "multi-resource"
    description = "a GPU cluster"                          # optional
    resources = { cores = 64, gpus = 8, memory = 512 }   # one node's capacity (the pool when nodes = 1)
    nodes = 1                                            # optional (default 1): identical nodes; a job runs on one
    load = 0.7            # ρ, the bottleneck resource's offered load; OR arrival_rate = λ; OR arrival_rate per class
    [[classes]]
    name = "gpu-train"
    demand = { cores = 8, gpus = 4, memory = 128 }       # a resource left out is demanded 0
    probability = 0.3
    service = { dist = "exp", rate = 1.0 }

Every other key, and its rules, is the multiserver-job family's (:mod:`msjgym.systems.msj.scenarios`: class names,
probabilities or per-class rates, service laws, ``estimate``), read by its loader
(:func:`msjgym.systems.msj.scenarios.load_scenario_file`) after :func:`to_msj` has translated the table; the family's
own keys are ``resources``, ``nodes`` and each class's ``demand`` (MSJ's ``servers`` and ``need`` are not keys here).
Amounts are non-negative integers in each resource's own unit (memory in GB, say); a capacity is >= 1; a class
demands something and fits an empty node. With one resource on one node the scenario is an MSJ scenario
(``servers`` = the capacity, ``need`` = the demand; λ from a load computed by MSJ's own rule), so its numbers are the
multiserver-job family's. ``--param`` overrides take dotted paths as in MSJ's files (``load``, ``resources.gpus``,
``classes.0.demand.memory``, ``nodes``), for files and built-ins alike.

A trace replay, ``arrivals = { trace = FILE, ... }``, is read by
:func:`msjgym.systems.multi_resource.trace.trace_model` (its module docstring: SWF logs with requested memory, CSV
traces with a column per resource); its classes are its distinct demand vectors.
"""
from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from msjgym import api
from msjgym.core.paths import is_regular_file
from msjgym.core.validation import show
from msjgym.errors import ScenarioError, UnknownParameter, prefixed
from msjgym.systems.msj.scenarios import (
    apply_file_overrides, load_scenario_file, model_from_spec, scenario_system)
from msjgym.systems.multi_resource.contract import FAMILY
from msjgym.systems.multi_resource.model import (MAX_NODES, MultiResourceModel, checked_servers,
                                                 multi_resource_model)

_OWN_KEYS = ("resources", "nodes")

_EXP = {"dist": "exp", "rate": 1.0}

BUILTINS: dict[str, tuple[str, dict]] = {
    "gpu-cluster": (
        "a GPU cluster node: 64 cores, 8 GPUs, 512 GB; CPU-only, GPU-training and memory-heavy jobs, load 0.7",
        {"system": FAMILY, "resources": {"cores": 64, "gpus": 8, "memory": 512}, "load": 0.7, "classes": [
            {"name": "cpu", "demand": {"cores": 4, "memory": 16}, "probability": 0.6, "service": dict(_EXP)},
            {"name": "gpu-train", "demand": {"cores": 8, "gpus": 2, "memory": 64}, "probability": 0.25,
             "service": {"dist": "exp", "rate": 0.5}},
            {"name": "mem-heavy", "demand": {"cores": 8, "memory": 192}, "probability": 0.15,
             "service": dict(_EXP)}]}),
    "one-resource": (
        "one resource, 10 units: jobs of 1 (p = 0.9) or 10 (p = 0.1), load 0.7 (the multiserver-job system)",
        {"system": FAMILY, "resources": {"servers": 10}, "load": 0.7, "classes": [
            {"name": "one", "demand": {"servers": 1}, "probability": 0.9, "service": dict(_EXP)},
            {"name": "all", "demand": {"servers": 10}, "probability": 0.1, "service": dict(_EXP)}]}),
}
"""name -> (one line, the scenario table)."""


def _amount(value: object, path: str, low: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ScenarioError(f"{path} = {show(value)}: must be an integer >= {low} (amounts are whole units of the "
                            "resource)")
    return value


class Machine:
    """What :func:`to_msj` read of the family's own keys: the resources' names and one node's capacities, the
    nodes, each class's demand vector."""

    def __init__(self) -> None:
        self.names: tuple[str, ...] = ()
        self.capacity: tuple[int, ...] = ()
        self.nodes = 1
        self.demands: list[tuple[int, ...]] = []

    @property
    def twin(self) -> bool:
        return len(self.names) == 1 and self.nodes == 1


def to_msj(spec: Mapping, machine: Machine) -> dict:
    """This family's scenario table as the multiserver-job family's (``machine`` receives the resources): with one
    resource on one node, ``servers`` = the capacity and ``need`` = the demand; otherwise ``need`` = 1 and ``servers``
    the bound on the jobs in service at once (:func:`msjgym.systems.multi_resource.model.jobs_bound`)."""
    for key, why in (("servers", "give resources = { NAME = capacity, ... }"),
                     ("arrivals", "trace arrivals are not read by this family yet; give classes and a rate")):
        if key in spec:
            raise ScenarioError(f"{key}: not a key of a multi-resource scenario; {why}")
    resources = spec.get("resources")
    if not isinstance(resources, Mapping) or not resources:
        raise ScenarioError(f"resources = {show(resources)}: must be a non-empty table NAME = capacity of one node "
                            "(e.g. resources = {cores = 64, gpus = 8, memory = 512})")
    machine.names = tuple(str(k) for k in resources)
    machine.capacity = tuple(_amount(v, f"resources.{k}", 1) for k, v in resources.items())
    nodes = spec.get("nodes", 1)
    if not isinstance(nodes, int) or isinstance(nodes, bool) or not 1 <= nodes <= MAX_NODES:
        raise ScenarioError(f"nodes = {show(nodes)}: must be an integer in [1, {MAX_NODES}] (identical nodes)")
    machine.nodes = nodes
    out = {k: copy.deepcopy(v) for k, v in spec.items() if k not in _OWN_KEYS and k != "system"}
    out["servers"] = 1  # set below from the resources (the classes' errors are then MSJ's own)
    classes = spec.get("classes")
    if isinstance(classes, list):
        out["classes"] = [_class_to_msj(t, i, machine) for i, t in enumerate(classes)]
        if len(machine.demands) == len(classes):
            out["servers"] = checked_servers(machine.names, np.array(machine.capacity),
                                             np.array(machine.demands).reshape(len(classes), -1), machine.nodes)
    if machine.twin:
        out["servers"] = checked_servers(machine.names, np.array(machine.capacity), np.ones((0, 1), np.int64), 1)
    return out


def _class_to_msj(table: Any, index: int, machine: Machine) -> Any:
    where = f"classes[{index}]"
    if not isinstance(table, Mapping):
        return table  # MSJ's validation names it
    if "need" in table:
        raise ScenarioError(f"{where}.need: not a key of a multi-resource class; give demand = {{NAME = amount, ...}}")
    demand = table.get("demand")
    if not isinstance(demand, Mapping) or not demand:
        raise ScenarioError(f"{where}.demand = {show(demand)}: must be a non-empty table NAME = amount over the "
                            f"resources ({', '.join(machine.names)})")
    for name in demand:
        if name not in machine.names:
            raise ScenarioError(f"{where}.demand.{name}: not a resource; valid: {', '.join(machine.names)}")
    vector = tuple(_amount(demand.get(n, 0), f"{where}.demand.{n}", 0) for n in machine.names)
    for n, v, cap in zip(machine.names, vector, machine.capacity):
        if v > cap:
            raise ScenarioError(f"{where}.demand.{n} = {v}: must be at most a node's capacity resources.{n} = {cap}")
    if not any(vector):
        raise ScenarioError(f"{where}.demand: demands nothing; at least one amount must be > 0")
    machine.demands.append(vector)
    need = vector[0] if machine.twin else 1
    return {k: v for k, v in table.items() if k != "demand"} | {"need": need}


_OWN_PATHS = re.compile(r"nodes|resources\.[^.]+|classes\.[0-9]{1,9}\.demand\.[^.]+")
"""The overrides of this family's own keys, which may add the key (a node count, a resource, a demand left out)."""


def _split(overrides: Mapping[str, Any]) -> tuple[dict, dict]:
    """(this family's own overrides, the others: MSJ's loader applies those)."""
    own = {k: v for k, v in overrides.items() if _OWN_PATHS.fullmatch(k)}
    return own, {k: v for k, v in overrides.items() if k not in own}


def _apply_own(spec: Mapping, own: Mapping[str, Any]) -> dict:
    """``spec`` with this family's own overrides set (``nodes``, ``resources.R``, ``classes.N.demand.R``), adding the
    key if the table has none."""
    out = copy.deepcopy(dict(spec))
    for key, value in own.items():
        parts = key.split(".")
        node: Any = out
        for depth, part in enumerate(parts[:-1]):
            here = ".".join(parts[:depth + 1])
            if isinstance(node, list):
                if int(part) >= len(node):
                    raise ScenarioError(f"override {key}: no entry {here} (list indices are 0-based, {len(node)} "
                                        "entries)")
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                raise UnknownParameter(f"override {key}: no key {here} in the scenario", key=key)
        if not isinstance(node, dict):
            raise ScenarioError(f"override {key}: {'.'.join(parts[:-1])} is not a table")
        node[parts[-1]] = copy.deepcopy(value)
    return out


def _model(spec: Mapping, base: Any, machine: Machine) -> MultiResourceModel:
    load = spec.get("load") if not machine.twin else None
    return multi_resource_model(base, machine.names, machine.capacity, tuple(machine.demands), machine.nodes,
                                load=load)


def summary(model: MultiResourceModel) -> str:
    """One line: the machine, the rate and load, the classes."""
    machine = ", ".join(f"{n} = {c}" for n, c in zip(model.resources, model.capacity))
    classes = "; ".join(f"{c.name}: {dict(zip(model.resources, d))}, p = {c.probability:.3g}, {c.service}"
                        for c, d in zip(model.classes, model.demands))
    nodes = f"{model.nodes} × " if model.nodes > 1 else ""
    return (f"multi-resource: {nodes}{{{machine}}}, λ = {model.arrival_rate:.4g}, ρ = {model.load:.3g}; "
            f"classes {classes}")


def load(name: str, overrides: Mapping[str, Any] | None = None) -> api.Scenario:
    """A built-in (:data:`BUILTINS`) or a TOML file of this family, with ``--param`` overrides (dotted paths; this
    family's own keys ``nodes``, ``resources.R`` and ``classes.N.demand.R`` may be added)."""
    own, rest = _split(dict(overrides or {}))
    machine = Machine()
    if name in BUILTINS:
        description, table = BUILTINS[name]
        try:
            spec = _apply_own(apply_file_overrides(table, rest), own)
            model = _model(spec, model_from_spec(to_msj(spec, machine)), machine)
        except ScenarioError as exc:
            raise prefixed(exc, f"{name}: ") from None
        return api.Scenario(name, FAMILY, description, spec, model)
    final: list[dict] = []

    def translate(spec: dict) -> dict:
        final.append(_apply_own(spec, own))
        return to_msj(final[-1], machine)

    scenario = load_scenario_file(name, rest, family=FAMILY, to_msj=translate,
                                  build=lambda spec, base_dir: _trace_model(_apply_own(spec, own), base_dir))
    if not final:  # a trace replay (arrivals = { trace = FILE, ... }), built by _trace_model
        model = scenario.model
        return api.Scenario(name, FAMILY, scenario.params.get("description") or trace_summary(model),
                            scenario.params, model)
    spec = final[-1]
    try:
        model = _model(spec, scenario.model, machine)
    except ScenarioError as exc:
        raise prefixed(exc, f"{name}: ") from None
    return api.Scenario(name, FAMILY, spec.get("description") or summary(model), spec, model)


def trace_summary(model: MultiResourceModel) -> str:
    """One line for a trace replay: the file, its jobs and classes, the machine (its classes may be thousands)."""
    machine = ", ".join(f"{n} = {c}" for n, c in zip(model.resources, model.capacity))
    return (f"multi-resource trace {model.trace.source}: {len(model.trace):,} jobs, {model.num_classes:,} demand "
            f"vectors, on {{{machine}}}")


def _trace_model(spec: Mapping, base_dir: Path) -> MultiResourceModel | None:
    """A scenario file whose arrivals replay a trace (:func:`msjgym.systems.multi_resource.trace.trace_model`)."""
    if "arrivals" not in spec:
        return None
    from msjgym.systems.multi_resource.trace import trace_model
    return trace_model(spec, base_dir)


def owns(name: str) -> bool:
    """A built-in of this family, or a scenario file with ``system = "multi-resource"``."""
    if name in BUILTINS:
        return True
    path = Path(name).expanduser()
    return is_regular_file(path) and scenario_system(path) == FAMILY
