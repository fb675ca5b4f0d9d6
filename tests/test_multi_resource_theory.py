"""The multi-resource theory: maximal configurations, the capacity-region LP, per-resource utilization and the exact
chain of preemptive MaxWeight, against brute force, the multiserver-job family's exact stability results, regions
computed by hand, and closed-form queues."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hypothesis_profiles import scaled
from msjgym.systems.msj.theory.zero_queueing import single_class_load_limit
from msjgym.theory import multi_resource as mr
from msjgym.theory import queues

LP_TOL = 1e-7  # HiGHS solves to ~1e-9 relative; θ* compared to a closed form within this


# ---------------------------------------------------------------- instances
@st.composite
def machines(draw, max_resources: int = 3, max_classes: int = 3, max_cap: int = 8):
    R = draw(st.integers(1, max_resources))
    K = draw(st.integers(1, max_classes))
    cap = np.array([draw(st.integers(1, max_cap)) for _ in range(R)])
    dem = np.array([[draw(st.integers(0, int(c))) for c in cap] for _ in range(K)])
    for k in range(K):  # no all-zero class
        if not dem[k].any():
            dem[k, draw(st.integers(0, R - 1))] = 1
    return cap, dem


def brute_force_feasible(cap, dem):
    tops = [min(c // d for c, d in zip(cap, row) if d > 0) for row in dem]
    out = []
    for n in itertools.product(*(range(t + 1) for t in tops)):
        if np.all(np.array(n) @ dem <= cap):
            out.append(n)
    return np.array(out, dtype=np.int64)


# ---------------------------------------------------------------- maximal configurations
@settings(max_examples=scaled(30))
@given(machines())
def test_maximal_configurations_match_brute_force(machine):
    cap, dem = machine
    got = mr.maximal_configurations(cap, dem)
    feasible = brute_force_feasible(cap, dem)
    maximal = [tuple(n) for n in feasible
               if not np.any(np.all(dem <= cap - np.array(n) @ dem, axis=1))]
    assert sorted(map(tuple, got)) == sorted(maximal)
    assert [tuple(r) for r in got] == sorted(map(tuple, got), reverse=True)  # the stated order
    for n in feasible:  # every feasible configuration is dominated by a maximal one
        assert np.any(np.all(got >= n, axis=1))


def test_maximal_configurations_cap_names_the_parameter():
    assert mr.maximal_configurations([100], [[1], [1]]).shape == (101, 2)
    with pytest.raises(ValueError, match="max_configurations = 50"):
        mr.maximal_configurations([100], [[1], [1]], max_configurations=50)
    with pytest.raises(ValueError, match="max_configurations = 3"):  # the search's width is capped too
        mr.maximal_configurations([1000], [[1], [1], [1]], max_configurations=3)


@pytest.mark.parametrize("capacity, demand, name", [
    ([4, 0], [[1, 1]], "capacity"), ([4.5], [[1]], "capacity"), ([4], [[-1]], "demand"),
    ([4], [[0]], r"demand\[0\]"), ([4, 4], [[1]], "demand"), ([], [[1]], "capacity")])
def test_bad_machine_is_refused_naming_the_parameter(capacity, demand, name):
    with pytest.raises(ValueError, match=name):
        mr.capacity_region(capacity, 1, demand, [1.0] * len(demand), [1.0] * len(demand))


@pytest.mark.parametrize("kwargs, name", [
    (dict(nodes=0), "nodes"), (dict(arrival_rates=[-1.0]), r"arrival_rates\[0\]"),
    (dict(mean_sizes=[0.0]), r"mean_sizes\[0\]"), (dict(arrival_rates=[1.0, 1.0]), "arrival_rates"),
    (dict(tolerance=0.5), "tolerance")])
def test_bad_rates_are_refused_naming_the_parameter(kwargs, name):
    args = dict(capacity=[4], nodes=1, demand=[[1]], arrival_rates=[1.0], mean_sizes=[1.0]) | kwargs
    with pytest.raises(ValueError, match=name):
        mr.capacity_region(**args)


# ---------------------------------------------------------------- one resource: the multiserver-job family
@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 8, 12])
def test_one_class_one_resource_is_the_msj_single_class_limit(n):
    """Need m of n servers: the LP's boundary is ρ = m⌊n/m⌋/n (Wang, Xie & Harchol-Balter's exact K = 1 limit)."""
    for m in range(1, n + 1):
        lam = 0.37
        region = mr.capacity_region([n], 1, [[m]], [lam], [2.0])
        msj_load = lam * 2.0 * m / n
        assert region.bottleneck_bound == pytest.approx(msj_load, rel=1e-12)
        assert region.packing_efficiency == pytest.approx(single_class_load_limit(m, n), rel=LP_TOL)
        assert region.region_load == pytest.approx(msj_load / single_class_load_limit(m, n), rel=LP_TOL)


@settings(max_examples=scaled(20))
@given(st.integers(0, 5), st.lists(st.tuples(st.integers(0, 5), st.floats(0.05, 2.0)), min_size=1, max_size=4))
def test_power_of_two_needs_fill_the_servers(log_n, classes):
    """Needs that are powers of two dividing n pack perfectly: the region is ρ < 1 exactly, the region on which
    ServerFilling and MaxWeight are throughput-optimal in the multiserver-job family (finite-skip §7.2-7.3)."""
    n = 2 ** log_n
    needs = [[2 ** min(b, log_n)] for b, _ in classes]
    rates = [r for _, r in classes]
    region = mr.capacity_region([n], 1, needs, rates, [1.0] * len(needs))
    assert region.packing_efficiency == pytest.approx(1.0, rel=LP_TOL)
    assert not region.fragmented


def test_one_resource_fragmentation_need_two_of_three():
    """Need 2 of 3 servers: the bottleneck bound allows λE[S] < 1.5, the LP only λE[S] < 1."""
    region = mr.capacity_region([3], 1, [[2]], [1.2], [1.0])
    assert region.bottleneck_bound == pytest.approx(0.8)
    assert region.verdict == "outside" and region.fragmented
    assert region.region_load == pytest.approx(1.2, rel=LP_TOL)


# ---------------------------------------------------------------- two resources, by hand
def test_two_resources_by_hand_two_configurations():
    """cores 2, gpus 2; A = (1 core, 2 gpus), B = (2 cores, 1 gpu): they never share the node, so the maximal
    configurations are (1,0) and (0,1) and the region is ρ_A + ρ_B < 1; the per-resource bound says
    max(ρ_A + 2ρ_B, 2ρ_A + ρ_B)/2 < 1, which allows ρ = (0.6, 0.6) (utilization 0.9): the LP says outside."""
    cap, dem = [2, 2], [[1, 2], [2, 1]]
    assert mr.maximal_configurations(cap, dem).tolist() == [[1, 0], [0, 1]]
    region = mr.capacity_region(cap, 1, dem, [0.6, 0.6], [1.0, 1.0])
    assert region.utilization.tolist() == pytest.approx([0.9, 0.9])
    assert region.bottleneck_bound < 1
    assert region.verdict == "outside" and region.fragmented
    assert region.theta == pytest.approx(1 / 1.2, rel=LP_TOL)
    assert region.packing_efficiency == pytest.approx(0.75, rel=LP_TOL)
    assert dict(region.mixture) == pytest.approx({(1, 0): 0.5, (0, 1): 0.5}, abs=1e-9)
    inside = mr.capacity_region(cap, 1, dem, [0.2, 0.3], [1.0, 2.0])  # ρ = (0.2, 0.6): ρ_A + ρ_B = 0.8
    assert inside.verdict == "inside" and inside.region_load == pytest.approx(0.8, rel=LP_TOL)
    two_nodes = mr.capacity_region(cap, 2, dem, [0.6, 0.6], [1.0, 1.0])  # N·conv(F): the region doubles
    assert two_nodes.verdict == "inside" and two_nodes.region_load == pytest.approx(0.6, rel=LP_TOL)


def test_two_resources_by_hand_cpu_and_gpu_jobs():
    """cores 6, gpus 2; A = (1 core, 1 gpu), B = (2 cores, 0 gpus): maximal configurations (2,2) and (0,3), so
    θ* = max θ with θρ_A <= 2α, θρ_B <= 2α + 3(1 − α): θ* = min(2/ρ_A, 3/(ρ_B + ρ_A/2))."""
    cap, dem = [6, 2], [[1, 1], [2, 0]]
    assert mr.maximal_configurations(cap, dem).tolist() == [[2, 2], [0, 3]]
    for rho in [(1.0, 1.0), (1.5, 0.5), (0.2, 2.5), (0.0, 1.0)]:
        region = mr.capacity_region(cap, 1, dem, list(rho), [1.0, 1.0])
        expected = min(2 / rho[0] if rho[0] else np.inf, 3 / (rho[1] + rho[0] / 2))
        assert region.theta == pytest.approx(expected, rel=LP_TOL)
    region = mr.capacity_region(cap, 1, dem, [1.0, 1.0], [1.0, 1.0])  # cores and gpus both at 0.5: packs perfectly
    assert region.packing_efficiency == pytest.approx(1.0, rel=LP_TOL) and not region.fragmented
    assert region.mixture == (((2, 2), pytest.approx(1.0)),)
    at_edge = mr.capacity_region(cap, 1, dem, [2.0, 2.0], [1.0, 1.0])
    assert at_edge.verdict == "boundary"


def test_region_edge_cases():
    idle = mr.capacity_region([4], 1, [[1]], [0.0], [1.0])
    assert idle.verdict == "inside" and idle.theta == np.inf
    never_fits = mr.capacity_region([4, 1], 1, [[1, 1], [1, 2]], [0.1, 0.1], [1.0, 1.0])
    assert never_fits.verdict == "outside" and never_fits.theta == 0.0
    ignored = mr.capacity_region([4, 1], 1, [[1, 1], [1, 2]], [0.1, 0.0], [1.0, 1.0])  # no work for the misfit
    assert ignored.verdict == "inside"


# ---------------------------------------------------------------- properties of the region
@settings(max_examples=scaled(25))
@given(machines(), st.integers(1, 3), st.data())
def test_every_configuration_rate_is_in_the_region(machine, nodes, data):
    cap, dem = machine
    configs = mr.maximal_configurations(cap, dem)
    u = configs[data.draw(st.integers(0, configs.shape[0] - 1))]
    if not u.any():
        return
    at = mr.capacity_region(cap, nodes, dem, nodes * u.astype(float), np.ones(len(u)))
    assert at.verdict in ("inside", "boundary") and at.theta >= 1 - LP_TOL
    below = mr.capacity_region(cap, nodes, dem, 0.99 * nodes * u, np.ones(len(u)))
    assert below.verdict == "inside"


@settings(max_examples=scaled(25))
@given(machines(), st.data())
def test_region_is_monotone_in_capacity_and_linear_in_nodes(machine, data):
    cap, dem = machine
    K = dem.shape[0]
    rates = np.array(data.draw(st.lists(st.floats(0.01, 3.0), min_size=K, max_size=K)))
    base = mr.capacity_region(cap, 1, dem, rates, np.ones(K))
    r = data.draw(st.integers(0, cap.size - 1))
    more = cap.copy()
    more[r] += data.draw(st.integers(1, 4))
    bigger = mr.capacity_region(more, 1, dem, rates, np.ones(K))
    assert bigger.theta >= base.theta * (1 - LP_TOL)
    assert mr.capacity_region(cap, 3, dem, rates, np.ones(K)).theta == pytest.approx(3 * base.theta, rel=LP_TOL)
    assert base.packing_efficiency <= 1 + LP_TOL  # never beyond the bottleneck bound
    served = sum(frac * np.array(conf) for conf, frac in base.mixture)  # the mixture serves θ*ρ
    assert np.all(served >= base.theta * base.work - 1e-6)


# ---------------------------------------------------------------- MaxWeight's choice and exact chain
@settings(max_examples=scaled(25))
@given(machines(max_cap=6), st.data())
def test_maxweight_choice_is_the_first_max_weight_feasible_set(machine, data):
    cap, dem = machine
    K = dem.shape[0]
    q = np.array(data.draw(st.lists(st.integers(0, 5), min_size=K, max_size=K)))
    left = np.array([data.draw(st.integers(0, int(x))) for x in q])
    chosen = mr.maxweight_choice(q, left, cap, dem)
    candidates = [c for c in brute_force_feasible(cap, dem) if np.all(c <= left)]
    best = max(int(np.dot(c, q)) for c in candidates)
    first = max(tuple(c) for c in candidates if int(np.dot(c, q)) == best)  # decreasing lexicographic: the largest
    assert tuple(chosen) == first
    assert np.all(chosen @ dem <= cap) and np.all(chosen <= left)
    configs = mr.maximal_configurations(cap, dem)  # one node: the weight of the best maximal configuration
    assert int(np.dot(mr.maxweight_service(q, cap, dem, 1), q)) == int(
        np.max((np.minimum(configs, q) * q).sum(axis=1)))


def test_chain_one_class_is_mmc():
    """Need 1 on 3 servers: preemptive MaxWeight is the M/M/3 queue."""
    lam, size = 2.1, 1.0
    values = mr.maxweight_ctmc([3], 1, [[1]], [lam], [size], truncation=80)
    exact = lam * (queues.mmc_mean_wait(3, lam, 1 / size) + size)
    assert values.boundary_probability < 1e-9
    assert values.total == pytest.approx(exact, rel=1e-7)
    assert values.busy[0] == pytest.approx(lam * size, rel=1e-7)


def test_chain_two_nodes_is_mm2():
    """One resource of 1 per node, two nodes, need 1: the node-by-node service is the M/M/2 queue."""
    lam = 1.3
    values = mr.maxweight_ctmc([1], 2, [[1]], [lam], [1.0], truncation=80)
    assert values.total == pytest.approx(lam * (queues.mmc_mean_wait(2, lam, 1.0) + 1.0), rel=1e-7)


def test_chain_exclusive_classes_is_mm1_in_total():
    """Two classes that never share the node (configurations (1,0), (0,1)), equal rates: MaxWeight serves one job
    at a time whenever any is present, so the total is an M/M/1 queue with ρ = ρ_A + ρ_B."""
    values = mr.maxweight_ctmc([2, 2], 1, [[1, 2], [2, 1]], [0.3, 0.4], [1.0, 1.0], truncation=60)
    assert values.boundary_probability < 1e-7
    assert values.total == pytest.approx(0.7 / 0.3, rel=1e-6)
    assert values.busy.tolist() == pytest.approx([0.3, 0.4], rel=1e-6)


def test_chain_refuses_outside_and_oversized():
    with pytest.raises(ValueError, match="arrival_rates"):
        mr.maxweight_ctmc([2, 2], 1, [[1, 2], [2, 1]], [0.6, 0.6], [1.0, 1.0], truncation=10)
    with pytest.raises(ValueError, match="truncation = 100"):
        mr.maxweight_ctmc([4, 4], 1, [[1, 2], [2, 1], [1, 1]], [0.1] * 3, [1.0] * 3, truncation=100)


# ---------------------------------------------------------------- saturated FCFS
@pytest.mark.parametrize("servers, needs, probabilities, sizes", [
    (4, [1, 4], [0.5, 0.5], [1.0, 1.0]), (5, [2, 3], [0.3, 0.7], [1.0, 0.5]), (6, [1, 2, 5], [0.2, 0.5, 0.3],
                                                                                [2.0, 1.0, 0.7])])
def test_fcfs_saturated_throughput_one_resource_is_the_msj_threshold(servers, needs, probabilities, sizes):
    from msjgym.theory.saturated import fcfs_stability_threshold
    got = mr.fcfs_saturated_throughput([servers], [[m] for m in needs], probabilities, sizes)
    assert got == pytest.approx(fcfs_stability_threshold(servers, needs, probabilities, [1 / s for s in sizes]),
                                rel=1e-10)


def test_fcfs_saturated_throughput_by_hand():
    """2 cores + 2 GPUs, A = {2 cores}, B = {2 GPUs}, half each, rate 1: the states (in service, blocked head)
    ({A},A), ({B},B), ({A,B},A), ({A,B},B) balance at 1/3, 1/3, 1/6, 1/6 (x = y/2 by the flow out of ({h},h)), so
    μ_sat = 2·(1/6 + 1/6) + 1·(1/3 + 1/3) = 4/3 < 2 = what the region allows at the boundary."""
    assert mr.fcfs_saturated_throughput([2, 2], [[2, 0], [0, 2]], [0.5, 0.5], [1.0, 1.0]) == pytest.approx(4 / 3)
    region = mr.capacity_region([2, 2], 1, [[2, 0], [0, 2]], [0.5, 0.5], [1.0, 1.0])
    assert region.theta * 1.0 == pytest.approx(2.0)  # λθ* = 2: the region's critical arrival rate


@settings(max_examples=scaled(15))
@given(machines(max_cap=6), st.integers(1, 3), st.data())
def test_vectorized_service_is_the_node_by_node_walk(machine, nodes, data):
    cap, dem = machine
    K = dem.shape[0]
    states = np.array([data.draw(st.lists(st.integers(0, 7), min_size=K, max_size=K)) for _ in range(5)])
    for q, got in zip(states, mr.maxweight_services(states, cap, dem, nodes)):
        left, want = q.copy(), np.zeros(K, dtype=np.int64)
        for _ in range(nodes):
            take = mr.maxweight_choice(q, left, cap, dem)
            want += take
            left -= take
        assert got.tolist() == want.tolist()
