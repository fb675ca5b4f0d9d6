"""The multi-resource family with one resource on one node is the multiserver-job family, bit for bit: the same
scenario written as a ``system = "multi-resource"`` file (``resources = {cpus = 8}``, ``demand = {cpus = n}``) and as
an MSJ file (``servers = 8``, ``need = n``) gives the same λ, and every built-in policy present in both families the
same evaluator results (events, every replication's metrics, the estimates, the checks: ==, NaN equal to NaN), for
several seeds. The family reuses MSJ's loop and accounting (its record is MSJ's with a resource area), so this is the
check that the reuse changed nothing."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import msjgym
from msjgym import api

# A dedicated need per class and two durations that are deterministic (simultaneous completions), runtime
# estimates drawn from a uniform factor (EASY's backfilling path sees misestimates).
CLASSES = [("a", 1, 0.45, '{ dist = "exp", rate = 1.0 }'), ("b", 2, 0.2, '{ dist = "det", value = 1.0 }'),
           ("c", 4, 0.2, '{ dist = "hyperexp", mean = 1.5, scv = 4.0 }'), ("d", 8, 0.15, '{ dist = "det", '
                                                                                   'value = 0.5 }')]
HEAD = 'load = 0.8\nestimate = { factor = { dist = "uniform", low = 1.0, high = 3.0 } }\n'

PAIRS = [("fcfs", "fcfs"), ("first-fit", "first-fit"), ("easy-backfilling", "easy-backfilling"),
         ("best-fit", "msf-nonpreemptive"), ("tetris", "msf-nonpreemptive")]
"""(multi-resource policy, its multiserver-job twin): the same name, or (best-fit, tetris) the policy they are with
one resource on one node: the largest waiting job that fits first, oldest first among equals."""
SEEDS = (1, 2, 3)
RUN = dict(reps=2, jobs=1500, warmup=150, references=False)


def _files(tmp_path: Path) -> tuple[str, str]:
    mine, parent = ['system = "multi-resource"\nresources = { cpus = 8 }\n' + HEAD], ["servers = 8\n" + HEAD]
    for name, need, p, law in CLASSES:
        row = f'\n[[classes]]\nname = "{name}"\nprobability = {p}\nservice = {law}\n'
        mine.append(row + f"demand = {{ cpus = {need} }}\n")
        parent.append(row + f"need = {need}\n")
    paths = tmp_path / "mine.toml", tmp_path / "parent.toml"
    for path, text in zip(paths, (mine, parent)):
        path.write_text("".join(text))
    return str(paths[0]), str(paths[1])


def _equal(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return a == b


def _same(got: msjgym.Result, want: msjgym.Result) -> None:
    assert got.events == want.events and got.stable == want.stable
    assert _equal(got.replications, want.replications)
    assert got.metrics.keys() == want.metrics.keys()
    for name in got.metrics:
        assert _equal((got.metrics[name].mean, got.metrics[name].ci95),
                      (want.metrics[name].mean, want.metrics[name].ci95)), name
    assert _equal([(c.name, c.verdict, c.measured) for c in got.checks],
                  [(c.name, c.verdict, c.measured) for c in want.checks])


def test_the_one_resource_scenario_is_the_msj_scenario(tmp_path):
    mine, parent = (msjgym.load_scenario(p) for p in _files(tmp_path))
    assert mine.family == "multi-resource" and parent.family == "msj"
    assert mine.model.is_msj and mine.model.servers == parent.model.servers == 8
    assert list(mine.model.needs) == list(parent.model.needs) == [1, 2, 4, 8]
    assert mine.model.arrival_rate == parent.model.arrival_rate and mine.model.load == parent.model.load == 0.8


@pytest.mark.parametrize("policy, twin", PAIRS)
def test_every_shared_policy_gives_the_msj_numbers_bit_for_bit(tmp_path, policy, twin):
    assert policy in api.family("multi-resource").policies() and twin in api.family("msj").policies()
    mine, parent = _files(tmp_path)
    for seed in SEEDS:
        got = msjgym.evaluate(mine, policy, seed=seed, **RUN)
        want = msjgym.evaluate(parent, twin, seed=seed, **RUN)
        assert got.family == "multi-resource" and want.family == "msj"
        _same(got, want)


def test_the_twin_check_can_fail(tmp_path):
    """A control: two different policies (FCFS and first fit differ on this scenario) are told apart."""
    mine, parent = _files(tmp_path)
    got = msjgym.evaluate(mine, "first-fit", seed=1, **RUN)
    want = msjgym.evaluate(parent, "fcfs", seed=1, **RUN)
    with pytest.raises(AssertionError):
        _same(got, want)


SHARED = ("response_time", "waiting_time", "bounded_slowdown", "number_in_system", "number_in_queue", "throughput",
          "queueing_probability", "utilization")
"""The metrics both paths have (the vector path adds each resource's utilization and drops MSJ's server
diagnostics)."""


@pytest.mark.parametrize("policy, twin", PAIRS)
def test_three_copies_of_one_resource_run_the_vector_path_to_the_same_numbers(tmp_path, policy, twin):
    """Three resources demanded alike (cores = gpus = memory = n of 8) schedule as the one resource does, but through
    the vector path (unit needs on MSJ's engine, the amounts counted in the record's resource area and checked on
    three resources): the same events and, per replication, the same values of every shared metric, bit for bit
    (λ given, not a load, so both paths draw from the same rate)."""
    rate = 'arrival_rate = 1.3\nestimate = { factor = { dist = "uniform", low = 1.0, high = 3.0 } }\n'
    mine = ['system = "multi-resource"\nresources = { cores = 8, gpus = 8, memory = 8 }\n' + rate]
    parent = ["servers = 8\n" + rate]
    for name, need, p, law in CLASSES:
        row = f'\n[[classes]]\nname = "{name}"\nprobability = {p}\nservice = {law}\n'
        mine.append(row + f"demand = {{ cores = {need}, gpus = {need}, memory = {need} }}\n")
        parent.append(row + f"need = {need}\n")
    paths = tmp_path / "three.toml", tmp_path / "one.toml"
    for path, text in zip(paths, (mine, parent)):
        path.write_text("".join(text))
    scenario = msjgym.load_scenario(str(paths[0]))
    assert not scenario.model.is_msj and list(scenario.model.needs) == [1, 1, 1, 1]
    for seed in SEEDS[:2]:
        got = msjgym.evaluate(scenario, policy, seed=seed, **RUN)
        want = msjgym.evaluate(str(paths[1]), twin, seed=seed, **RUN)
        assert got.events == want.events and got.stable and want.stable
        for a, b in zip(got.replications, want.replications):
            assert _equal({k: a[k] for k in SHARED}, {k: b[k] for k in SHARED})
        assert got.replications[0]["utilization_gpus"] == got.replications[0]["utilization"]


def test_maxweight_differs_from_the_msj_maxweight_only_among_packings_of_equal_weight(tmp_path):
    """``maxweight`` is not in PAIRS: with one resource on one node and a need per class, it and the multiserver-job
    ``maxweight`` serve packings of the same weight Σ_k Q_k n_k in every state, but break ties differently (this one:
    the first in decreasing lexicographic order; that one: the fuller packing; docs/families/multi_resource.md)."""
    import itertools

    import numpy as np

    from msjgym.policies.msj.agent_forms import SetView, make_agent
    from msjgym.systems.msj.env import MSJEnv
    from msjgym.theory.multi_resource import maxweight_choice

    _, parent = _files(tmp_path)
    agent = make_agent("maxweight", MSJEnv(scenario=parent, mode="preemptive").spec_)
    needs = np.array([need for _, need, _, _ in CLASSES])
    differ = 0
    for present in itertools.product(range(4), repeat=len(needs)):
        q = np.array(present)
        groups = [int(q[needs == v].sum()) for v in agent.grp_need]
        theirs = np.array(agent.targets(SetView(list(present), [0] * len(q), [], False, groups)))
        mine = maxweight_choice(q, q, np.array([8]), needs[:, None])
        assert q @ mine == q @ theirs and mine @ needs <= 8 and theirs @ needs <= 8, present
        if not np.array_equal(mine, theirs):
            differ += 1
            assert theirs @ needs >= mine @ needs, present  # the multiserver-job tie rule: the fuller packing
    assert differ > 0  # the tie rules do differ (else maxweight belongs in PAIRS)
