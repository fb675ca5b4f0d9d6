"""One contract for every family: one policy lookup (:func:`msjgym.api.policy_spec`, by family object or name) and
``validate()`` run once per evaluation (the evaluator validates; ``references()`` and ``simulation()`` take a
validated run)."""
from __future__ import annotations

import pytest

from msjgym import api
from msjgym.errors import MsjgymError, PolicyError
from msjgym.evaluate.evaluator import evaluate

FAMILIES = [f.name for f in api.families()]


def test_every_family_declares_a_smoke_case():
    """Each family's smallest run (``smoke``, :class:`msjgym.api.Smoke`): a built-in scenario of its own and a built-in
    policy of its own, so the tests below cover a new family without being edited."""
    for family in api.families():
        smoke = api.smoke_case(family)
        assert api.family_of(smoke.scenario) is family and smoke.policy in family.policies(), family.name
        assert set(smoke.options) <= {o.name for o in api.options_of(family)}, family.name


def test_a_family_without_a_smoke_case_is_one_line():
    class Bare:
        name = "bare"

    with pytest.raises(MsjgymError, match=r"^family 'bare' declares no smoke case: give its family object a "):
        api.smoke_case(Bare())


@pytest.mark.parametrize("family_name", FAMILIES)
def test_validate_runs_once_per_evaluation(monkeypatch, family_name):
    """Every family's smoke case, through the evaluator: validated exactly once, and it runs to a result."""
    family = api.family(family_name)
    smoke = api.smoke_case(family)
    scenario = family.load(smoke.scenario, dict(smoke.overrides))
    calls = []
    validate = family.validate

    def counted(*args, **kwargs):
        calls.append(args[1])
        return validate(*args, **kwargs)

    monkeypatch.setattr(family, "validate", counted)  # the instance's: a family calling self.validate counts too
    result = evaluate(scenario, smoke.policy, reps=smoke.reps, jobs=smoke.jobs, seed=1, **dict(smoke.options))
    assert result.stable is not None and len(calls) == 1, calls
    assert result.family == family_name and result.reps == smoke.reps


def test_one_lookup_by_family_or_name():
    for family in api.families():
        name = next(iter(family.policies()))
        assert api.policy_spec(family, name) is api.policy_spec(family.name, name) is family.policies()[name]
    with pytest.raises(PolicyError, match=r"^--policy 'nope': not a policy of the msj family; valid: .*\bfcfs\b"):
        api.policy_spec("msj", "nope")
