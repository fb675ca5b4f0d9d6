"""The scorecard: which references apply, their values, and the verdicts beside a simulation."""
from __future__ import annotations

import pytest

from conftest import exp_class, model
from msjgym.core.distributions import from_spec
from msjgym.core.references import unstable_predictions
from msjgym.systems.msj import scorecard
from msjgym.evaluate.evaluator import evaluate
from msjgym.api import load_scenario
from msjgym.policies.msj import POLICIES
from msjgym.systems.msj.model import JobClass
from msjgym.theory import queues
from msjgym.theory.saturated import one_and_n_throughput


def _refs(refs, quantity=None, kind=None):
    return [r for r in refs if (quantity is None or r.quantity == quantity) and (kind is None or r.kind == kind)]


def test_fcfs_beyond_threshold_is_flagged_before_simulating_and_confirmed():
    """At 1.2 × the FCFS stability threshold μ (Grosof & Ayhan Lemma 5.3) the scorecard flags the load as unstable
    before simulating, and the simulation confirms it."""
    mu = one_and_n_throughput(10, 0.1, 1.0, 1.0)
    scenario = load_scenario("one-and-n", {"arrival_rate": 1.2 * mu})
    refs = scorecard.references(scenario.model, POLICIES["fcfs"])
    flagged = unstable_predictions(refs)
    assert len(flagged) == 1 and "FCFS stability threshold" in flagged[0].description
    assert flagged[0].value == pytest.approx(1.2)
    result = evaluate(scenario, "fcfs", reps=4, jobs=1_000_000, seed=61)
    judged = [r for r in result.references if r.description == flagged[0].description][0]
    assert not result.stable and judged.agrees is True and "confirmed" in judged.verdict


def test_exact_verdicts_follow_the_confidence_interval():
    """An exact reference 'agrees' exactly when the simulated 95 % CI covers the value, and it holds the solver's
    numbers."""
    scenario = load_scenario("one-and-n")
    result = evaluate(scenario, "fcfs", reps=5, jobs=100_000, seed=62)
    exact = _refs(result.references, kind="exact")
    assert {r.quantity for r in exact} >= {"number_in_system", "number_in_queue", "queueing_probability",
                                           "number_in_system[1]", "queueing_probability[n]"}
    for r in exact:
        est = result.metrics[r.quantity]
        assert r.agrees == (abs(est.mean - r.value) <= est.ci95)
        assert ("consistent" in r.verdict) == r.agrees


@pytest.mark.parametrize("policy", ["fcfs", "server-filling", "maxweight", "lsf"])
def test_single_class_is_erlang_c_for_every_policy(policy):
    m = model(8, 5.0, exp_class("a", 2, 1.0, 1.5))
    refs = scorecard.references(m, POLICIES[policy])
    p_wait = _refs(refs, "queueing_probability", "exact")
    assert p_wait and p_wait[0].value == pytest.approx(queues.erlang_c(4, 5.0 / 1.5))


def test_equal_needs_with_general_durations_is_pollaczek_khinchine():
    det = from_spec({"dist": "det", "value": 1.0})
    m = model(4, 0.5, JobClass("a", 4, 1.0, det))
    refs = scorecard.references(m, POLICIES["first-fit"])
    wait = _refs(refs, "waiting_time", "exact")[0]
    assert wait.value == pytest.approx(queues.mg1_mean_wait(0.5, 1.0, 1.0))


def test_throughput_optimal_policies_get_rho_below_one():
    scenario = load_scenario("finite-skip-fig7", {"load": 0.9})
    for name, predicted in (("server-filling", True), ("maxweight", True), ("lsf", None)):
        conds = _refs(scorecard.references(scenario.model, POLICIES[name]), "stability", "condition")
        assert [c.predicts_stable for c in conds if "throughput-optimal" in c.description] == \
            ([predicted] if predicted is not None else [])


def test_fcfs_theory_needs_exponential_durations():
    h2 = from_spec({"dist": "hyperexp", "mean": 1.0, "scv": 4.0})
    m = model(4, 1.0, JobClass("a", 1, 0.5, h2), JobClass("b", 4, 0.5, h2))
    refs = scorecard.references(m, POLICIES["fcfs"])
    assert [r.description.split(":")[0] for r in refs] == ["capacity"]


@pytest.mark.parametrize("name, diminishing", [("zero-queueing-set1", True), ("zero-queueing-set2", False)])
def test_zero_queueing_regime_and_vacuous_bound(name, diminishing):
    refs = scorecard.references(load_scenario(name).model, POLICIES["fcfs"],
                                regime=load_scenario(name).regime)
    regime = _refs(refs, "queueing_probability", "asymptotic")
    assert len(regime) == 1 and ("P_Q → 0" in regime[0].description) == diminishing
    theorem = [r for r in _refs(refs, "queueing_probability", "bound") if "eq. (5)" in r.source]
    assert theorem and theorem[0].upper > 1 and "vacuous" in theorem[0].description


@pytest.mark.parametrize("name, params", [("zero-queueing-set1", {}), ("zero-queueing-set2", {}),
                                          ("zero-queueing-set3", {"m3": "4th-root"})])
def test_zero_queueing_bound_event_and_lemma_5_4_hold_with_margin(name, params):
    """Wang, Xie & Harchol-Balter's Sets I–III (n = 256): simulated P_Q <= simulated P(Σ m_i X_i > n − m_max)
    (eq. (3)); Lemma 5.4 holds with the simulated E[(nρ_i − m_i X_i)^+] below a tenth of 3√(n m_i)."""
    result = evaluate(load_scenario(name, params), "fcfs", reps=5, jobs=200_000, seed=63)
    event = [r for r in result.references if r.upper_metric == "high_occupancy_probability"]
    assert len(event) == 1 and event[0].agrees is True
    lemma = [r for r in result.references if r.quantity.startswith("server_deficit[")]
    assert len(lemma) == 3
    for r in lemma:
        est = result.metrics[r.quantity]
        assert r.agrees is True and est.mean + est.ci95 < 0.1 * r.upper


def test_saturated_fcfs_throughput_is_within_half_a_percent_of_mu():
    """The saturated-mode throughput matches μ (Grosof & Ayhan Lemma 5.3) within 0.5 %; the 95 % CI half-width is
    below 0.2 % here, so the check has power."""
    scenario = load_scenario("one-and-n")
    result = evaluate(scenario, "fcfs", reps=10, jobs=1_000_000, seed=64, saturated=True)
    ref = _refs(result.references, "throughput", "exact")[0]
    est = result.metrics["throughput"]
    assert ref.value == pytest.approx(one_and_n_throughput(10, 0.1, 1.0, 1.0), rel=1e-12)
    assert est.ci95 < 0.002 * ref.value
    assert abs(est.mean - ref.value) < 0.005 * ref.value


def test_wcfs_bound_constants_for_fig6():
    """Grosof, Harchol-Balter & Scheller-Wolf Fig. 6 (k = 4, S = VX/4 as in §7.2): rem_max = max_v v/(4μ_v)
    = 4/(4·0.5) = 2 (docs/modelling-choices.md#finite-skip-rem-max) and E[S] = E[VX]/4."""
    from msjgym.systems.msj.theory.server_filling import server_filling_bounds
    model = load_scenario("finite-skip-fig6", {"load": 0.5}).model
    bounds = server_filling_bounds(model)
    mean_s = (1 / 5 + 2 / 2 + 4 / 0.5) / 3 / 4
    assert bounds.rem_max == pytest.approx(2.0) and bounds.front == 4
    assert model.job_size_moments[0] == pytest.approx(mean_s)
    queueing = bounds.mg1 - mean_s
    assert bounds.upper == pytest.approx(queueing + 3 * 2.0 + 4 * mean_s)
    assert bounds.lower == pytest.approx(max(mean_s, queueing + mean_s - 3 * 2.0))


@pytest.mark.parametrize("name", ["finite-skip-fig6", "finite-skip-fig7"])
@pytest.mark.parametrize("load", [0.3, 0.6, 0.9])
@pytest.mark.parametrize("policy", ["server-filling", "server-filling-divisible"])
def test_server_filling_response_time_inside_wcfs_bounds(name, load, policy):
    """Cor. 3.8 (generic constants): the simulated E[T] of ServerFilling lies inside its bounds."""
    result = evaluate(load_scenario(name, {"load": load}), policy, reps=5, jobs=100_000, seed=65)
    bound = [r for r in result.references if r.kind == "bound" and r.quantity == "response_time"][0]
    est = result.metrics["response_time"]
    assert bound.lower <= est.mean - est.ci95 and est.mean + est.ci95 <= bound.upper
    assert bound.agrees is True


def test_maxweight_region_is_the_packing_lp_when_needs_do_not_pack():
    """One class of need 2 on 3 servers: at most one job runs, so every policy needs λE[S] < 1, i.e. ρ < 2/3; at
    ρ = 0.8 MaxWeight's throughput-optimality predicts unstable (not 'stable iff ρ < 1'), at 0.6 stable."""
    for load, predicted in ((0.8, False), (0.6, True)):
        m = model(3, load * 3 / 2, JobClass("a", 2, 1.0, from_spec({"dist": "exp", "rate": 1.0})))
        assert m.load == pytest.approx(load)
        conds = [c for c in _refs(scorecard.references(m, POLICIES["maxweight"]), "stability", "condition")
                 if "throughput-optimal" in c.description]
        assert [c.predicts_stable for c in conds] == [predicted]
        assert conds[0].upper == pytest.approx(2 / 3) and conds[0].threshold == pytest.approx(1.0)
