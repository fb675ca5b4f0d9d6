"""Loss scenarios from the outside: scenario validation (clear errors), the CLI table and scorecard, verdicts."""
from __future__ import annotations

import json

import pytest

from cli_run import msjgym
from msjgym.errors import ScenarioError
from msjgym.systems.loss import scorecard as loss_scorecard
from msjgym.api import list_scenarios, load_scenario
from msjgym.api import family, policy_spec
from msjgym.policies.loss import POLICIES
from msjgym.systems.loss.model import make_loss_model


BAD = [  # (scenario, overrides, words the one-line message must contain)
    ("loss-full-access", {"beta": -1.0}, ["beta = -1.0", "> 0"]),
    ("loss-full-access", {"beta": 0}, ["beta = 0", "> 0"]),
    ("loss-full-access", {"alpha": 1.0}, ["alpha = 1.0", "[0, 1)"]),
    ("loss-full-access", {"alpha": -0.1}, ["alpha = -0.1", "[0, 1)"]),
    ("loss-full-access", {"alpha": 0.0, "beta": 1.0}, ["λ(n)", "must be > 0"]),
    ("loss-full-access", {"servers": 16, "alpha": 0.5, "beta": 5.0}, ["λ(n)", "must be > 0", "n^α = 4"]),
    ("loss-full-access", {"lam": 1.2}, ["lam = 1.2", "(0, 1)"]),
    ("loss-full-access", {"lam": 0.0}, ["lam = 0.0", "(0, 1)"]),
    ("loss-sampled", {"k": 1001}, ["k = 1001", "[1, servers=1000]"]),
    ("loss-sampled", {"k": 0}, ["k = 0", "[1, servers=1000]"]),
    ("loss-sampled", {"k": "n^beta"}, ["k = 'n^beta'", "n^alpha log n"]),
    ("loss-full-access", {"d": 0}, ["d = 0", "[1, servers=100]"]),
    ("loss-full-access", {"d": 101}, ["d = 101", "[1, servers=100]"]),
    ("loss-full-access", {"d": 1.5}, ["d = 1.5", "integer"]),
    ("loss-full-access", {"servers": 0}, ["servers = 0", "in [1, 10,000,000]"]),
    ("loss-full-access", {"gamma": 1}, ["unknown parameter 'gamma'", "servers=100"]),
]


@pytest.mark.parametrize("name,overrides,words", BAD)
def test_bad_parameters_raise_one_line_errors(name, overrides, words):
    with pytest.raises(ScenarioError) as info:
        load_scenario(name, overrides)
    message = str(info.value)
    assert "\n" not in message and message.startswith(name)
    for w in words:
        assert w in message, message


def test_nothing_is_clamped_silently():
    assert make_loss_model(100, 2, 100, lam=0.5).k == 100
    with pytest.raises(ScenarioError):
        make_loss_model(100, 2, 101, lam=0.5)
    s = load_scenario("loss-sampled", {"servers": 100, "alpha": 0.9, "beta": 1.0})  # rule says min(n, ⌈·⌉)
    assert s.model.k == 100 and "min(n" in s.params["k_rule"]


def test_cli_bad_input_exits_2_with_one_line():
    out = msjgym("evaluate", "loss-sampled", "--policy", "greedy", "--param", "k=5000")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "k = 5000" in out.stderr
    out = msjgym("evaluate", "loss-sampled", "--policy", "fcfs")
    assert out.returncode == 2 and "greedy" in out.stderr


def test_scenarios_listed_and_defaults():
    names = [n for n, _ in list_scenarios()]
    assert "loss-full-access" in names and "loss-sampled" in names
    full = load_scenario("loss-full-access").model
    assert (full.servers, full.d, full.k, full.lam) == (100, 2, 100, pytest.approx(0.9))
    sampled = load_scenario("loss-sampled").model
    assert sampled.k == 219  # ⌈√1000 ln 1000⌉ = ⌈218.4⌉
    assert load_scenario("loss-sampled", {"lam": 0.7, "k": 10}).model.alpha is None
    with pytest.raises(ScenarioError, match="needs alpha"):
        load_scenario("loss-sampled", {"lam": 0.7})


def _verdict(overrides: dict, policy: str = "greedy", name: str = "loss-sampled") -> str:
    model = load_scenario(name, overrides).model
    refs = loss_scorecard.references(model, policy_spec(family("loss"), policy))
    (ref,) = [r for r in refs if r.quantity == "asymptotic_optimality"]
    return ref.verdict


def test_scorecard_optimality_verdicts():
    assert _verdict({}, name="loss-full-access").startswith("asymptotically optimal: PROVED (Theorem 4")
    assert _verdict({}).startswith("asymptotically optimal: PROVED (Theorem 9")
    # too little sampling: never called asymptotically optimal
    for overrides in ({"k": 2}, {"k": 2, "alpha": 0.0, "beta": 0.5}, {"k": "sqrt n", "beta": 1.0},
                      {"k": "n^alpha", "beta": 1.0}, {"k": "sqrt n", "beta": 4.0}):
        v = _verdict(overrides)
        assert not v.startswith("asymptotically optimal"), (overrides, v)
        assert v.startswith("NOT"), v
    # Theorem 9's β condition fails: not proved
    assert _verdict({"beta": 2.0}).startswith("NOT SHOWN: Theorem 9's hypotheses fail")
    # α = 0: the rate claim of eqs. (36)/(38) is not presented as proved (erratum)
    v = _verdict({"alpha": 0.0, "beta": 0.5})
    assert "NOT proved" in v and "erratum" in v.lower() or "NOT follow" in v
    assert _verdict({}, policy="random-width").startswith("no result")


def test_cli_evaluate_table_and_scorecard():
    out = msjgym("evaluate", "loss-full-access", "--policy", "greedy", "--reps", "4", "--jobs", "20000",
                 "--seed", "3")
    assert out.returncode == 0, out.stderr
    for words in ("blocking_probability", "response_time", "Erlang B on n/d super-servers", "Thm 4",
                  "asymptotic_optimality", "PROVED (Theorem 4"):
        assert words in out.stdout
    assert "INCONSISTENT" not in out.stdout and "OUTSIDE" not in out.stdout


def test_cli_evaluate_json_sampled():
    out = msjgym("evaluate", "loss-sampled", "--policy", "fixed-width", "--reps", "3", "--jobs", "20000",
                 "--seed", "3", "--param", "k=2", "--param", "servers=200", "--param", "beta=1.0", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["params"]["k"] == 2 and data["policy"] == "fixed-width"
    assert data["metrics"]["blocking_probability"]["mean"] > 0.3
    assert set(POLICIES) == {"greedy", "fixed-width", "random-width"}


def test_a_bound_declaration_evaluates_as_its_name():
    """``msjgym.evaluate(scenario, spec.bind())``: a loss policy's declaration (bound: the loss policies take no
    parameters) runs exactly as its name does; a parameter it does not declare is refused in one line."""
    import msjgym
    from msjgym.errors import PolicyError

    scenario = load_scenario("loss-sampled", {"servers": 40, "d": 3, "lam": 0.9, "k": 6})
    spec = policy_spec(family("loss"), "random-width")
    bound = spec.bind()
    assert bound is not spec
    a = msjgym.evaluate(scenario, bound, reps=2, jobs=4000, seed=3)
    b = msjgym.evaluate(scenario, "random-width", reps=2, jobs=4000, seed=3)
    assert a.policy == "random-width" and a.replications == b.replications
    assert [r.to_dict() for r in a.references] == [r.to_dict() for r in b.references]
    with pytest.raises(PolicyError, match="random-width: no parameter 'w'; its parameters: none"):
        spec.bind(w=2)
