"""One contract for every family: one policy lookup (:func:`msjgym.api.policy_spec`, by family object or name) and
``validate()`` run once per evaluation (the evaluator validates; ``references()`` and ``simulation()`` take a
validated run)."""
from __future__ import annotations

import pytest

from msjgym import api
from msjgym.errors import PolicyError
from msjgym.evaluate.evaluator import evaluate

RUNS = {  # family -> (scenario, policy, jobs): small runs of each family
    "msj": ("one-and-n", "fcfs", 2_000),
    "dispatch": ("lb-push-table1", "push", 4_000),
    "loss": (None, "greedy", 2_000),
    "finite-skip": ("finite-skip-fig3", "lps", 2_000),
}


def test_every_family_is_covered():
    assert set(RUNS) == {f.name for f in api.families()}


@pytest.mark.parametrize("family_name", sorted(RUNS))
def test_validate_runs_once_per_evaluation(monkeypatch, family_name):
    scenario, policy, jobs = RUNS[family_name]
    family = api.family(family_name)
    scenario = scenario or family.scenarios()[0][0]
    calls = []
    validate = family.validate

    def counted(*args, **kwargs):
        calls.append(args[1])
        return validate(*args, **kwargs)

    monkeypatch.setattr(family, "validate", counted)  # the instance's: a family calling self.validate counts too
    result = evaluate(scenario, policy, reps=2, jobs=jobs, seed=1)
    assert result.stable is not None and len(calls) == 1, calls


def test_one_lookup_by_family_or_name():
    for family in api.families():
        name = next(iter(family.policies()))
        assert api.policy_spec(family, name) is api.policy_spec(family.name, name) is family.policies()[name]
    with pytest.raises(PolicyError, match=r"^--policy 'nope': not a policy of the msj family; valid: .*\bfcfs\b"):
        api.policy_spec("msj", "nope")
