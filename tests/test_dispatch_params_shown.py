"""A dispatch report shows the policies' parameters its dispatcher runs with: the values bound to it (by
``policy.bind`` or by ``--param``), and no default of a parameter it does not read (``d = 2`` beside JSQ)."""
from __future__ import annotations

import math
import re

import pytest

import msjgym
from msjgym import api
from msjgym.evaluate.evaluator import _params
from msjgym.evaluate.report import format_table
from msjgym.systems.dispatch.scenarios import KEYS, TABLE_SCENARIOS, TABLES

from cli_run import msjgym as cli

FAMILY = api.family("dispatch")
POLICY_KEYS = {p.name for spec in FAMILY.policies().values() for p in spec.params if p.name in KEYS} | {"C", "delta0"}
"""The scenario keys that are some policy's parameter (the rest, N, λ, the law, the speeds, every policy reads)."""
HOME = {TABLES[n]: name for name, n in TABLE_SCENARIOS.items()}
"""Each table's policy on its table's scenario (its δ, p, C defaults); every other policy on lb-dispatch."""
RUN = api.RunSettings(reps=2, jobs=100)


def shown(scenario: api.Scenario, policy) -> dict:
    """The parameters a result of ``policy`` on ``scenario`` reports (nothing simulated)."""
    sim = FAMILY.simulation(scenario, policy, RUN, 1)
    return _params(scenario, sim)


def scenario_of(name: str) -> api.Scenario:
    return api.load_scenario(HOME.get(name, "lb-dispatch"))


@pytest.mark.parametrize("name", list(FAMILY.policies()))
def test_a_report_shows_exactly_the_parameters_its_dispatcher_reads(name):
    spec = FAMILY.policies()[name]
    scenario = scenario_of(name)
    declared = {p.name for p in spec.params}
    params = shown(scenario, name)
    policy_keys = set(params) & POLICY_KEYS
    allowed = (declared | {"delta0"} if "delta" in declared else declared) | ({"C"} if "batch_size" in declared else set())
    assert policy_keys <= allowed, (name, params)
    setting = scenario.model
    for key in declared:
        if getattr(setting, key) is not None and not (name == "pull" and key == "delta" and setting.delta0):
            assert params[key] == getattr(setting, key), (name, key, params)
    if not declared:
        assert not policy_keys, (name, params)  # jsq, random, ...: no d = 2


def _other_values(param: api.Param, current):
    """Values other than ``current`` to bind (some may be refused by the setting)."""
    choices = getattr(param, "choices", ())
    if choices:
        return [c for c in choices if c != current]
    base = param.default if current is None else current
    if base is None:
        return [1, 2, 3] if param.integer else [0.5, 1.0, 2.0]
    if param.integer:
        return [base + 1, base + 2, max(base - 1, 1)]
    return [base * 2, base / 2, base * 1.25]


@pytest.mark.parametrize("name", [n for n, s in FAMILY.policies().items() if s.params])
def test_a_bound_value_is_the_value_shown(name):
    """Each parameter bound to another value than the scenario's (``policy.bind``, as the Python API and a sweep's
    policy keys do) is shown with that value, as ``--param`` gives it; at least one value per parameter runs."""
    spec = FAMILY.policies()[name]
    scenario = scenario_of(name)
    for param in spec.params:
        if param.name not in KEYS:
            continue
        tried = 0
        for value in _other_values(param, getattr(scenario.model, param.name)):
            bound = spec.bind(**{param.name: value})
            try:
                FAMILY.validate(scenario, bound, RUN)
            except api.MsjgymError:
                continue  # a value this setting refuses (K = (δ/λ)·M must be an integer, ...)
            tried += 1
            assert shown(scenario, bound)[param.name] == value, (name, param.name, value)
            given = api.load_scenario(scenario.name, {param.name: value})
            assert shown(given, name)[param.name] == value
        assert tried, f"{name}: no other value of {param.name} was accepted"


def test_jsq_d_bound_in_python_prints_its_d_and_jsq_prints_none():
    scenario = api.load_scenario("lb-dispatch", {"servers": 10})
    result = msjgym.evaluate(scenario, FAMILY.policies()["jsq-d"].bind(d=3), reps=2, jobs=2000, references=False)
    header = format_table(result).splitlines()[:2]
    assert ", d=3" in header[0] and "d=2" not in header[0] and header[1].endswith("jsq-d(d=3)"), header
    assert math.isclose(result.params["lam"], 0.9)
    status, out, err = cli("evaluate", "lb-dispatch", "--policy", "jsq", "--param", "servers=10", "--reps", "2",
                           "--jobs", "2000")
    assert status == 0, err
    first = out.splitlines()[0]
    assert first.startswith("scenario  lb-dispatch") and "servers=10" in first and not re.search(r"\bd=", first), first


@pytest.mark.parametrize("observation, shows_d", [("sampled", True), ("histogram", False)])
def test_a_dispatcher_of_your_own_shows_d_only_when_it_sees_d_servers(observation, shows_d):
    from pathlib import Path

    scenario = api.load_scenario("lb-dispatch", {"servers": 10, "d": 3})
    policy = str(Path(__file__).resolve().parents[1] / "examples" / "my_dispatcher.py") + ":JoinBelowThreshold"
    params = _params(scenario, FAMILY.simulation(scenario, policy, api.RunSettings(
        reps=2, jobs=100, options={"observation": observation}), 1))
    assert (params.get("d") == 3) if shows_d else ("d" not in params), params
