"""Property-based tests of the multiserver-job family: random VALID scenarios (servers, classes with needs <= servers,
probabilities, Exp / Erlang / hyperexponential laws, a load where the policy is stable) go through the TOML loader
(:func:`model_from_spec`) and :func:`msjgym.evaluate` with the kernel's debug mode, and must satisfy:

* no server is ever over-allocated, the per-class lists stay consistent (debug mode checks the state after every
  event and raises on a violation);
* the run is stable, and every metric, CI and replication value is finite;
* busy servers (utilization × n) = the offered load λ Σ p_i m_i E[S_i], within the replications' CI;
* Little's law, for the system and per class: number in system = throughput × response time, within the CI;
* work identities: response − waiting = the mean duration (within the CI of E[S_i]), waiting >= 0, the classes'
  utilizations and numbers sum to the totals, number in queue <= number in system;
* the result's JSON is strict (no NaN / Infinity).

Policies are those whose compiled loops the suite already uses (fcfs, first-fit, server-filling), so nothing new
compiles: server-filling on its own setting (n and the needs powers of 2) at a load in (0.1, 0.85), where it is
throughput-optimal; fcfs and first-fit at a load in (0.05, 0.3).

Tolerance: each identity is checked per replication and must be covered by the Student-t interval at 99.99 % over
the (20) replications, widened by 1 % of the target plus 1e-3 for the warm-up's and the window's edge effects (a window of
a few thousand jobs). The level is high because the long profile checks thousands of intervals; the
assertions can still fail: a target off by 10 % is caught (``test_the_identities_can_fail``).
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from hypothesis_profiles import scaled
from msjgym.evaluate.evaluator import evaluate
from msjgym.systems.msj.scenarios import model_from_spec

REPS, JOBS = 20, 2_500
LEVEL = 0.9999


def covered(values, target: float, what: str, scale: float | None = None) -> None:
    """Assert that the t-interval (LEVEL) of the per-replication ``values``, widened by 1 % of ``scale`` (default
    |target|; for a difference that should be 0, the size of its terms) + 1e-3, covers ``target``."""
    values = np.asarray(values, dtype=float)
    assert np.all(np.isfinite(values)), f"{what}: non-finite replication values {values}"
    half = stats.t.ppf(0.5 + LEVEL / 2, values.size - 1) * values.std(ddof=1) / math.sqrt(values.size)
    slack = half + 0.01 * (abs(target) if scale is None else scale) + 1e-3
    assert abs(values.mean() - target) <= slack, \
        f"{what}: {values.mean():.6g} ± {half:.3g} (per replication {np.round(values, 5)}) vs {target:.6g}"


def _strict_json(text: str) -> object:
    def refuse(constant: str) -> None:
        raise AssertionError(f"non-strict JSON constant {constant} in the result")
    return json.loads(text, parse_constant=refuse)


# ----------------------------------------------------------------------------------------------------------------
# Strategies


@st.composite
def service_laws(draw) -> dict:
    """A moderate service-duration law as a scenario table: Exp, Erlang(k) or a balanced-means hyperexponential."""
    mean = draw(st.floats(0.2, 5.0))
    kind = draw(st.sampled_from(["exp", "erlang", "hyperexp"]))
    if kind == "exp":
        return {"dist": "exp", "mean": mean}
    if kind == "erlang":
        return {"dist": "erlang", "k": draw(st.integers(2, 5)), "mean": mean}
    return {"dist": "hyperexp", "mean": mean, "scv": draw(st.floats(1.5, 8.0))}


@st.composite
def msj_scenarios(draw) -> tuple[str, dict]:
    """(policy, a TOML-shaped MSJ scenario table) where the policy is stable."""
    policy = draw(st.sampled_from(["server-filling", "fcfs", "first-fit"]))
    k = draw(st.integers(1, 3))
    if policy == "server-filling":  # its setting: every need divides every larger need and n
        exponent = draw(st.integers(0, 4))
        servers = 2 ** exponent
        needs = [2 ** draw(st.integers(0, exponent)) for _ in range(k)]
        load = draw(st.floats(0.1, 0.85))
    else:
        servers = draw(st.integers(1, 12))
        needs = [draw(st.integers(1, servers)) for _ in range(k)]
        load = draw(st.floats(0.05, 0.3))
    weights = [draw(st.integers(1, 10)) for _ in range(k)]
    classes = [{"need": m, "probability": w / sum(weights), "service": draw(service_laws())}
               for m, w in zip(needs, weights)]
    return policy, {"system": "msj", "servers": servers, "load": load, "classes": classes}


# ----------------------------------------------------------------------------------------------------------------
# Properties


@settings(max_examples=scaled(12))
@given(case=msj_scenarios(), seed=st.integers(0, 2**31 - 1))
def test_random_valid_scenarios_satisfy_the_invariants_and_identities(case, seed):
    policy, spec = case
    model = model_from_spec(spec)
    result = evaluate(model, policy, reps=REPS, jobs=JOBS, seed=seed, debug=True, references=False)
    assert result.stable, f"{policy} unstable at load {model.load:.3f}: {spec}"

    # every metric finite, with a finite CI, in every replication
    for name, est in result.metrics.items():
        assert math.isfinite(est.mean) and math.isfinite(est.ci95), f"{name} = {est}"
    reps = result.replications
    assert len(reps) == REPS
    for r in reps:
        bad = {k: v for k, v in r.items() if not math.isfinite(v)}
        assert not bad, f"non-finite replication values {bad}"

    col = {key: np.array([r[key] for r in reps]) for key in reps[0]}
    n = model.servers
    # work conservation: busy servers = offered load (= n ρ)
    covered(col["utilization"] * n, model.offered_servers, "busy servers vs λ Σ p_i m_i E[S_i]")
    assert np.all(col["utilization"] <= 1.0 + 1e-12), "utilization above 1: servers over-allocated"
    # Little's law, system and per class; throughput = arrival rate
    covered(col["number_in_system"] - col["throughput"] * col["response_time"], 0.0, "N − X·T",
            scale=float(col["number_in_system"].mean()))
    covered(col["throughput"], model.arrival_rate, "throughput vs λ")
    names = [c.name for c in model.classes]
    for c, name, rate, mean in zip(model.classes, names, model.class_arrival_rates, model.mean_service):
        n_c, x_c, t_c, w_c = (col[f"{k}[{name}]"] for k in ("number_in_system", "throughput", "response_time",
                                                              "waiting_time"))
        covered(n_c - x_c * t_c, 0.0, f"N[{name}] − X[{name}]·T[{name}]", scale=float(n_c.mean()))
        covered(x_c, rate, f"throughput[{name}] vs λ_{name}")
        # response − waiting = the mean duration of the measured jobs; waiting is never negative
        covered(t_c - w_c, mean, f"T[{name}] − W[{name}] vs E[S_{name}]")
        assert np.all(w_c >= -1e-9), f"waiting_time[{name}] negative: {w_c}"
        covered(col[f"utilization[{name}]"] * n, rate * c.need * mean, f"busy servers of class {name}")
    # the classes add up to the totals (exactly, up to rounding)
    for key in ("number_in_system", "number_in_queue", "utilization", "throughput"):
        total = sum(col[f"{key}[{name}]"] for name in names)
        assert np.allclose(total, col[key], rtol=1e-9, atol=1e-12), f"Σ {key}[class] != {key}"
    assert np.all(col["number_in_queue"] <= col["number_in_system"] + 1e-12)

    _strict_json(json.dumps(result.to_dict(), allow_nan=False))


@settings(max_examples=scaled(8))
@given(case=msj_scenarios(), seed=st.integers(0, 2**31 - 1))
def test_same_seed_same_numbers(case, seed):
    """Reproducibility as a property: two runs with one seed give identical replications, bit for bit."""
    policy, spec = case
    model = model_from_spec(spec)
    a = evaluate(model, policy, reps=2, jobs=500, seed=seed, references=False)
    b = evaluate(model, policy, reps=2, jobs=500, seed=seed, references=False)
    assert a.replications == b.replications and a.events == b.events


def test_the_identities_can_fail():
    """The tolerance is honest: a target off by 10 % is rejected on a run of the suite's size."""
    spec = {"servers": 4, "load": 0.5, "classes": [{"need": 1, "probability": 0.5, "service": {"dist": "exp", "mean": 1.0}},
                                                   {"need": 2, "probability": 0.5, "service": {"dist": "exp", "mean": 1.0}}]}
    model = model_from_spec(spec)
    result = evaluate(model, "server-filling", reps=REPS, jobs=JOBS, seed=3, references=False)
    busy = np.array([r["utilization"] for r in result.replications]) * model.servers
    covered(busy, model.offered_servers, "busy servers")
    with pytest.raises(AssertionError):
        covered(busy, 1.1 * model.offered_servers, "busy servers vs a wrong target")
