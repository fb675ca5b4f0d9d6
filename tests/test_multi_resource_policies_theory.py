"""The multi-resource theory beside the simulation: the scorecard's region verdict is the LP's; inside the capacity
region FCFS is unstable where MaxWeight is stable; preemptive MaxWeight's simulated means match its exact Markov
chain (one and two nodes); MSR's frame serves the LP's fractions; outside the region even MaxWeight is unstable
although every resource is loaded below 1.

Stochastic checks are seeded; an estimate is compared with an exact value through the evaluator's own verdict (its
Bonferroni-widened Student-t interval over replications, msjgym.core.references)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import msjgym
from msjgym.systems.multi_resource import scorecard
from msjgym.theory import multi_resource as theory

def _file(tmp_path: Path, name: str, resources: str, demands: list[str], rate: str, extra: str = "",
          service_rates: list[float] | None = None) -> str:
    """A scenario file: classes c0, c1, ... of equal probability, exponential sizes (rate 1 unless given)."""
    text = [f'system = "multi-resource"\nresources = {{ {resources} }}\n{rate}\n{extra}']
    for k, demand in enumerate(demands):
        mu = 1.0 if service_rates is None else service_rates[k]
        text.append(f'[[classes]]\nname = "c{k}"\ndemand = {{ {demand} }}\nprobability = {1 / len(demands)}\n'
                    f'service = {{ dist = "exp", rate = {mu} }}\n')
    path = tmp_path / f"{name}.toml"
    path.write_text("".join(text))
    return str(path)


def _blocking(tmp_path: Path, load: float) -> str:
    """CPU jobs {2 cores}, GPU jobs {2 GPUs} on 2 cores + 2 GPUs: one of each always fits, so the region is every
    load < 1, while FCFS's saturated throughput is 4/3 (unstable from load 2/3; derivation in the family's page)."""
    return _file(tmp_path, "blocking", "cores = 2, gpus = 2", ["cores = 2", "gpus = 2"], f"load = {load}")


def _region(model) -> theory.CapacityRegion:
    return theory.capacity_region(model.capacity_array, model.nodes, model.demand, model.arrival_rates,
                                  model.mean_sizes)


def _stability(refs, words: str):
    return next(r for r in refs if r.quantity == "stability" and words in r.description)


def test_scorecard_region_verdict_is_the_lps(tmp_path):
    cases = [msjgym.load_scenario("gpu-cluster").model, msjgym.load_scenario("gpu-cluster", {"nodes": 3}).model,
             msjgym.load_scenario(_blocking(tmp_path, 0.8)).model,
             msjgym.load_scenario(_file(tmp_path, "frag", "cores = 2, gpus = 2", ["cores = 1, gpus = 2",
                                                                                   "cores = 2, gpus = 1"],
                                        "load = 0.9")).model]
    spec = msjgym.api.family("multi-resource").policies()["fcfs"]
    for model in cases:
        region = _region(model)
        ref = _stability(scorecard.references(model, spec), "capacity region")
        assert ref.value == region.region_load and f": {region.verdict}," in ref.description
        assert ref.threshold == pytest.approx(model.arrival_rate * region.theta, rel=1e-12)
        assert ref.predicts_stable is (False if region.verdict == "outside" else None)
        for r, name in enumerate(model.resources):
            assert _stability(scorecard.references(model, spec), f"resource {name}:").value == region.utilization[r]
    assert [_region(m).verdict for m in cases] == ["inside", "inside", "inside", "outside"]
    assert _region(cases[3]).fragmented and _region(cases[3]).bottleneck_bound == pytest.approx(0.9)


def test_fcfs_unstable_inside_the_region_where_maxweight_is_stable(tmp_path):
    scenario = msjgym.load_scenario(_blocking(tmp_path, 0.8))
    region = _region(scenario.model)
    assert region.verdict == "inside" and region.region_load == pytest.approx(0.8)
    fcfs = msjgym.evaluate(scenario, "fcfs", reps=2, jobs=20_000, seed=11)
    assert not fcfs.stable  # λ = 1.6 > 4/3: the evaluator's instability detection flags the growth
    threshold = _stability(fcfs.references, "FCFS stability threshold")  # its saturated chain: μ_sat = 4/3
    assert threshold.threshold == pytest.approx(4 / 3) and threshold.predicts_stable is False
    assert threshold.agrees is True  # the run confirms the prediction
    maxweight = msjgym.evaluate(scenario, "maxweight", reps=4, jobs=20_000, seed=11)
    assert maxweight.stable
    judged = {r.quantity: r for r in maxweight.references}
    assert judged["stability"].agrees is not False
    optimal = _stability(maxweight.references, "throughput-optimal")
    assert optimal.predicts_stable is True and optimal.agrees is True
    exact = judged["number_in_system"]  # two independent M/M/1 queues at 0.8: E[N] = 2 · 0.8/0.2 = 8
    assert exact.kind == "exact" and exact.value == pytest.approx(8.0, rel=1e-9)
    assert exact.agrees is True, exact.verdict


def test_maxweight_matches_its_chain_on_two_nodes_with_fragmentation(tmp_path):
    """4 cores + 4 GB per node, jobs {1 core, 2 GB} (mean size 1) and {2 cores, 1 GB} (mean size 3); maximal
    configurations (2,0), (1,1), (0,2), so equal queues tie (MaxWeight's weights are job counts, not work) and the
    tie rule decides which class runs; two nodes: the simulated means against the exact chain of the same rule."""
    path = _file(tmp_path, "two", "cores = 4, memory = 4", ["cores = 1, memory = 2", "cores = 2, memory = 1"],
                 "arrival_rate = 1.2", "nodes = 2\n", service_rates=[1.0, 1 / 3])
    scenario = msjgym.load_scenario(path)
    region = _region(scenario.model)
    assert region.verdict == "inside" and region.region_load == pytest.approx(0.6)  # (0.6 + 1.8)/4
    result = msjgym.evaluate(scenario, "maxweight", reps=4, jobs=20_000, seed=5, debug=True)
    assert result.stable and all(c.agrees is not False for c in result.checks)
    exact = [r for r in result.references if r.kind == "exact"]
    assert {r.quantity for r in exact} >= {"number_in_system", "response_time", "number_in_system[c0]"}
    assert all(r.agrees is True for r in exact), [r.verdict for r in exact]


def test_outside_the_region_maxweight_is_unstable_below_every_resources_capacity(tmp_path):
    """Jobs {1 core, 2 GPUs} and {2 cores, 1 GPU} on 2 + 2 never share the node: region ρ_A + ρ_B < 1. At load 0.9
    per resource the region's load is 1.2: no policy is stable, MaxWeight included."""
    path = _file(tmp_path, "frag", "cores = 2, gpus = 2", ["cores = 1, gpus = 2", "cores = 2, gpus = 1"],
                 "load = 0.9")
    scenario = msjgym.load_scenario(path)
    assert max(scenario.model.resource_loads) == pytest.approx(0.9)
    result = msjgym.evaluate(scenario, "maxweight", reps=2, jobs=20_000, seed=7)
    assert not result.stable
    region_ref = _stability(result.references, "capacity region")
    assert region_ref.predicts_stable is False and region_ref.agrees is True


def test_msr_frame_serves_the_lp_fractions_and_is_stable_inside(tmp_path):
    from msjgym.policies.multi_resource import msr
    path = _file(tmp_path, "two", "cores = 4, memory = 4", ["cores = 1, memory = 2", "cores = 2, memory = 1",
                                                             "cores = 1, memory = 1"], "load = 0.6", "nodes = 2\n")
    model = msjgym.load_scenario(path).model
    region = _region(model)
    table = msr.frame_table(model)
    counts, configs = table[:, 0], table[:, 1:]
    assert np.all(counts == np.round(counts)) and len(table) <= model.num_classes + 1
    served = model.nodes * (counts / counts.sum()) @ configs  # jobs in service per class the frame offers
    theta_eff = region.theta * 2 / (region.theta + 1)
    assert np.all(served >= theta_eff * region.work * (1 - 1e-9))
    assert np.all(configs @ model.demand <= model.capacity_array)  # every frame configuration fits a node
    result = msjgym.evaluate(msjgym.load_scenario(path), "msr", reps=2, jobs=20_000, seed=3, debug=True)
    assert result.stable and all(c.agrees is not False for c in result.checks)
    assert _stability(result.references, "throughput-optimal").agrees is True


@pytest.mark.parametrize("nodes", [1, 3])
def test_maxweight_kernel_serves_the_theorys_choice_after_every_event(tmp_path, nodes):
    """Random arrivals and completions (seeded), the record's invariants checked after each: the compiled kernel
    serves, per class, exactly :func:`msjgym.theory.multi_resource.maxweight_service` of the jobs present (the exact
    chain's service, ties included)."""
    from msjgym.core import rng
    from msjgym.systems.msj.state import C_N, C_X, J_HPOS
    from msjgym.systems.multi_resource.simulation import MultiResourceSimulation, RunConfig

    path = _file(tmp_path, "mix", "cores = 6, gpus = 2, memory = 8",
                 ["cores = 1, memory = 2", "cores = 2, gpus = 1, memory = 1", "cores = 3, memory = 3", "gpus = 1"],
                 "arrival_rate = 1.0", f"nodes = {nodes}\n")
    model = msjgym.load_scenario(path).model
    spec = msjgym.api.family("multi-resource").policies()["maxweight"]
    sim = MultiResourceSimulation(model, spec, RunConfig(jobs=10, warmup=0, batches=1, debug=True),
                                  rng.spawn_states(1, 1)[0])
    draw = np.random.default_rng(2026)
    present: list[int] = []
    K = model.num_classes
    for _ in range(400):
        if present and draw.random() < 0.45:
            running = [j for j in present if sim.state.job_i[0, j, J_HPOS] >= 0]
            j = running[draw.integers(len(running))]
            sim.complete(j)
            present.remove(j)
        else:
            present.append(sim.arrive(int(draw.integers(K)), 100.0))
        sim.check()
        counts = np.array([sim.state.cls_i[0, k, C_N] for k in range(K)])
        served = np.array([sim.state.cls_i[0, k, C_X] for k in range(K)])
        assert served.tolist() == theory.maxweight_service(counts, model.capacity_array, model.demand,
                                                           nodes).tolist(), counts


def test_throughput_optimality_is_claimed_only_where_proved(tmp_path):
    """Exponential sizes: maxweight and msr predict stable inside the region; other laws: nothing inside, unstable
    outside; a policy not known to be throughput-optimal gets no such reference."""
    family = msjgym.api.family("multi-resource")
    inside = msjgym.load_scenario(_blocking(tmp_path, 0.8)).model
    det = Path(_file(tmp_path, "det", "cores = 2, gpus = 2", ["cores = 2", "gpus = 2"], "load = 0.8"))
    det.write_text(det.read_text().replace('dist = "exp", rate = 1.0', 'dist = "det", value = 1.0'))
    deterministic = msjgym.load_scenario(str(det)).model
    for name in ("maxweight", "msr"):
        spec = family.policies()[name]
        assert _stability(scorecard.references(inside, spec), "throughput-optimal").predicts_stable is True
        assert _stability(scorecard.references(deterministic, spec), "throughput-optimal").predicts_stable is None
    assert not [r for r in scorecard.references(inside, family.policies()["fcfs"])
                if "throughput-optimal" in r.description]


def test_a_node_with_too_many_configurations_keeps_the_per_resource_conditions(tmp_path):
    """Tiny demands on a large node: more maximal configurations than the LP's cap. The scorecard keeps the
    per-resource conditions and leaves the region out; msr, which needs the LP, is refused with one line."""
    path = _file(tmp_path, "big", "cores = 2000, memory = 2000", ["cores = 1", "memory = 1", "cores = 1, memory = 1"],
                 "load = 0.5")
    model = msjgym.load_scenario(path).model
    with pytest.raises(ValueError, match="max_configurations"):
        _region(model)
    family = msjgym.api.family("multi-resource")
    refs = scorecard.references(model, family.policies()["maxweight"])
    assert [r.description.split(":")[0] for r in refs] == ["resource cores", "resource memory"]
    with pytest.raises(msjgym.errors.PolicyError, match="policy 'msr': max_configurations"):
        family.policies()["msr"].table(model)
