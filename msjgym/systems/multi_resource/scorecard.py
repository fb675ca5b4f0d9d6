"""The multi-resource scorecard: what the theory says of a scenario and policy before any simulation.

``references(model, policy)`` lists (each judged by :func:`msjgym.core.references.judge` after the run):

* per resource r, its offered load ρ_r = Σ_k λ_k d_kr E[S_k] / (nodes · C_r) against 1 (necessary for any policy);
* the capacity region (:func:`msjgym.theory.multi_resource.capacity_region`, the LP over a node's maximal
  configurations; left out when a node has more than its cap of them): its verdict inside / outside / boundary, the region's load 1/θ* (the margin), the packing
  efficiency (< 1: the region is strictly smaller than the bottleneck bound) and the critical arrival rate λθ*;
  outside, no policy is stable;
* for a policy known to be throughput-optimal (:data:`THROUGHPUT_OPTIMAL`), with exponential sizes: stable iff
  inside the region;
* for ``fcfs`` on one node with exponential sizes: its own stability threshold, the saturated FCFS throughput
  μ_sat (:func:`msjgym.theory.multi_resource.fcfs_saturated_throughput`): stable iff λ < μ_sat, which can fall
  inside the region (head-of-line blocking);
* for ``maxweight`` with exponential sizes on a small instance: exact means from its truncated Markov chain
  (:func:`msjgym.theory.multi_resource.maxweight_ctmc`), when the truncation's boundary probability is negligible.

A replayed trace has none: the theory is about stationary Poisson systems.
"""
from __future__ import annotations

import math

from msjgym.core.distributions import Exponential
from msjgym.core.references import Reference
from msjgym.theory import multi_resource as theory

THROUGHPUT_OPTIMAL = {
    "maxweight": "Maguluri, Srikant & Ying, INFOCOM 2012 (preemptive MaxWeight over configurations)",
    "msr": "Chen, Grosof & Berg, SIGMETRICS 2025 (MSR policies; time fractions from the capacity LP)",
}
"""The built-in policies known to be throughput-optimal (stable at every load inside the capacity region), with
Poisson arrivals and exponential sizes, and where it is proved. FCFS, first-fit, best-fit, Tetris, DRF and EASY are
not (Maguluri, Srikant & Ying 2012 show Best-Fit is not; FCFS already loses with one resource)."""
_REGION_SOURCE = ("Maguluri, Srikant & Ying, INFOCOM 2012 (the region: N·conv of a node's configurations); "
                  "LP over maximal configurations (msjgym.theory.multi_resource)")
MAX_CHAIN_STATES = 60_000
"""Largest truncated chain the scorecard solves (about a second)."""
CHAIN_TRUNCATIONS = (20, 40, 80, 160)
"""The truncations tried in turn, until the boundary probability is below :data:`CHAIN_BOUNDARY`."""
CHAIN_BOUNDARY = 1e-9
MAX_FCFS_CONFIGURATIONS = 2_000
"""FCFS's saturated chain is solved when a node has at most this many maximal configurations (its states are the
feasible configurations times the head's class)."""
_SATURATION = ("Grosof & Ayhan, 'Multiserver-job response time under multilevel scaling', §3.1–3.2 (saturated "
               "system), with vector demands")


def _arrays(model) -> tuple:
    return model.capacity_array, model.nodes, model.demand, model.arrival_rates, model.mean_sizes


def _exponential(model) -> bool:
    return all(isinstance(c.service, Exponential) for c in model.classes)


def region_of(model) -> theory.CapacityRegion:
    """The capacity-region LP's answer for ``model`` (the scorecard's verdict is this one)."""
    return theory.capacity_region(*_arrays(model))


def _resources(model, utilization) -> list[Reference]:
    refs = []
    lam = model.arrival_rate
    for r, name in enumerate(model.resources):
        util = float(utilization[r])
        refs.append(Reference(
            quantity="stability", kind="condition",
            description=f"resource {name}: offered load ρ_{name} = {util:.4g} {'<' if util < 1 else '>='} 1 "
                        "(no policy is stable at >= 1)",
            source="standard (a stable system holds resource r a fraction Σ_k λ_k d_kr E[S_k]/(N C_r) of the time)",
            value=util, upper=1.0, predicts_stable=None if util < 1 else False,
            threshold=lam / util if util > 0 else math.inf))
    return refs


def _region(model, region: theory.CapacityRegion) -> Reference:
    mix = ", ".join(f"{frac:.3g}×{list(conf)}" for conf, frac in region.mixture[:3])
    more = f" +{len(region.mixture) - 3} more" if len(region.mixture) > 3 else ""
    return Reference(
        quantity="stability", kind="condition",
        description=(f"capacity region (LP over the {region.configurations.shape[0]} maximal configuration(s) of a "
                     f"node, × {model.nodes} node(s)): {region.verdict}, region load 1/θ* = {region.region_load:.4g}, "
                     f"packing efficiency {region.packing_efficiency:.4g}"
                     + (" (smaller than the bottleneck bound)" if region.fragmented else "")
                     + (f"; time-sharing {mix}{more}" if mix else "") + "; no policy is stable outside"),
        source=_REGION_SOURCE, value=region.region_load, upper=1.0,
        predicts_stable=False if region.verdict == "outside" else None,
        threshold=model.arrival_rate * region.theta)


def _throughput_optimal(model, policy, region: theory.CapacityRegion) -> list[Reference]:
    if policy.name not in THROUGHPUT_OPTIMAL:
        return []
    exp = _exponential(model)
    predicts = False if region.verdict == "outside" else True if region.verdict == "inside" and exp else None
    proved = "" if exp else " (proved for exponential sizes: says nothing inside with these laws)"
    return [Reference(
        quantity="stability", kind="condition",
        description=f"{policy.name} is throughput-optimal: stable iff inside the capacity region (region load "
                    f"{region.region_load:.4g}){proved}",
        source=THROUGHPUT_OPTIMAL[policy.name], value=region.region_load, upper=1.0, predicts_stable=predicts,
        threshold=model.arrival_rate * region.theta)]


def _fcfs(model, policy, region: theory.CapacityRegion) -> list[Reference]:
    if policy.name != "fcfs" or model.nodes != 1 or not _exponential(model) \
            or region.configurations.shape[0] > MAX_FCFS_CONFIGURATIONS:
        return []
    mu = theory.fcfs_saturated_throughput(model.capacity_array, model.demand, model.probabilities, model.mean_sizes)
    ratio = model.arrival_rate / mu
    within = "inside" if region.verdict == "inside" else region.verdict
    return [Reference(
        quantity="stability", kind="condition",
        description=f"FCFS stability threshold μ_sat = {mu:.6g} jobs/time (saturated FCFS, one node): λ/μ_sat = "
                    f"{ratio:.4g} (the region allows λ < {model.arrival_rate * region.theta:.6g}; this load is "
                    f"{within} it)",
        source=_SATURATION, value=ratio, upper=1.0, predicts_stable=ratio < 1, threshold=mu)]


def _maxweight_exact(model, policy, region: theory.CapacityRegion) -> list[Reference]:
    if policy.name != "maxweight" or region.verdict != "inside" or not _exponential(model):
        return []
    K = model.num_classes
    values = None
    for b in CHAIN_TRUNCATIONS:
        if (b + 1) ** K > MAX_CHAIN_STATES:
            break
        values = theory.maxweight_ctmc(*_arrays(model), truncation=b, max_states=MAX_CHAIN_STATES)
        if values.boundary_probability < CHAIN_BOUNDARY:
            break
    if values is None or values.boundary_probability >= CHAIN_BOUNDARY:
        return []
    label = (f"preemptive MaxWeight's Markov chain (exponential sizes), truncated at {values.truncation} jobs per "
             f"class, boundary probability {values.boundary_probability:.1g}")
    source = "exact CTMC (msjgym.theory.multi_resource.maxweight_ctmc)"
    refs = [Reference("number_in_system", "exact", label, source, value=values.total),
            Reference("response_time", "exact", label, source, value=values.mean_response)]
    for k, c in enumerate(model.classes):
        if model.arrival_rates[k] > 0:
            refs.append(Reference(f"number_in_system[{c.name}]", "exact", label, source,
                                  value=float(values.number_in_system[k])))
            refs.append(Reference(f"response_time[{c.name}]", "exact", label, source,
                                  value=float(values.response_time[k])))
    return refs


def references(model, policy, saturated: bool = False) -> list[Reference]:
    """Every reference that applies to ``model`` (a :class:`msjgym.systems.multi_resource.model.MultiResourceModel`)
    under ``policy`` (its declaration), computed before any simulation; none for a saturated (closed) run."""
    if model.trace is not None or saturated:
        return []
    utilization = theory.resource_utilization(*_arrays(model))
    try:
        region = region_of(model)
    except ValueError:  # more maximal configurations than the LP's cap: the per-resource conditions only
        return _resources(model, utilization)
    return (_resources(model, utilization) + [_region(model, region)] + _throughput_optimal(model, policy, region)
            + _fcfs(model, policy, region) + _maxweight_exact(model, policy, region))
