"""Identities every built-in policy must satisfy at a stable load.

* Work conservation of the offered load: time-average busy servers = λ Σ p_i m_i E[S_i] (E[busy] = nρ, from the
  drift (12) in Wang, Xie & Harchol-Balter's Lemma 5.1).
* Little's law per class, for the system and for the queue: E[N_i] = λ_i E[T_i], E[N_Q,i] = λ_i E[W_i].
* No server is ever over-allocated: the kernel's debug mode checks the state invariants after every event.

Tolerance: the 99.9 % Student-t CI over 10 independent replications must cover the identity's target. The default
suite runs 20,000 jobs a replication (after the default warm-up; about 40,000 events, so the CI is ~2.2× that of
100,000 jobs, still a few percent of the targets); ``-m slow`` runs 100,000.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import covers, skip_unless_applicable
from msjgym.core.distributions import from_spec
from msjgym.evaluate.evaluator import evaluate
from msjgym.api import load_scenario
from msjgym.policies.msj import POLICIES
from msjgym.systems.msj.model import JobClass, MSJModel

REPS, JOBS, SLOW_JOBS = 10, 20_000, 100_000


def _general_model() -> MSJModel:
    """Needs {1, 2, 4} on 8 servers with non-exponential durations (preempt-resume must keep remaining work)."""
    classes = (
        JobClass("v1", 1, 0.5, from_spec({"dist": "hyperexp", "mean": 1.0, "scv": 8.0})),
        JobClass("v2", 2, 0.3, from_spec({"dist": "det", "value": 1.5})),
        JobClass("v4", 4, 0.2, from_spec({"dist": "uniform", "low": 0.5, "high": 2.5})),
    )
    offered = sum(c.probability * c.need * c.service.mean for c in classes)
    return MSJModel(servers=8, arrival_rate=0.5 * 8 / offered, classes=classes)


def _one_or_all_model() -> MSJModel:
    """Needs {1, 8} on 8 servers (the one-or-all setting, where ``msfq`` applies), non-exponential durations; load 0.3
    (FCFS is stable there)."""
    classes = (
        JobClass("v1", 1, 0.85, from_spec({"dist": "hyperexp", "mean": 1.0, "scv": 4.0})),
        JobClass("v8", 8, 0.15, from_spec({"dist": "uniform", "low": 0.25, "high": 1.25})),
    )
    offered = sum(c.probability * c.need * c.service.mean for c in classes)
    return MSJModel(servers=8, arrival_rate=0.3 * 8 / offered, classes=classes)


MODELS = {
    "finite-skip-fig6@0.5": load_scenario("finite-skip-fig6", {"load": 0.5}).model,
    "general@0.5": _general_model(),
    "one-or-all@0.3": _one_or_all_model(),
}


@pytest.mark.parametrize("jobs", [JOBS, pytest.param(SLOW_JOBS, marks=pytest.mark.slow)])
@pytest.mark.parametrize("model_name", sorted(MODELS))
@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_work_and_littles_law(policy, model_name, jobs):
    m = MODELS[model_name]
    skip_unless_applicable(policy, m)
    result = evaluate(m, policy, reps=REPS, jobs=jobs, seed=21)
    assert result.stable
    reps = result.replications
    busy = np.array([r["utilization"] for r in reps]) * m.servers
    ok, mean, half = covers(busy, m.offered_servers)
    assert ok, f"busy servers {mean} ± {half} vs offered {m.offered_servers}"
    for c, rate in zip(m.classes, m.class_arrival_rates):
        for count, time in (("number_in_system", "response_time"), ("number_in_queue", "waiting_time")):
            gap = np.array([r[f"{count}[{c.name}]"] - rate * r[f"{time}[{c.name}]"] for r in reps])
            ok, mean, half = covers(gap, 0.0)
            assert ok, f"class {c.name}: {count} − λ·{time} = {mean} ± {half}"


@pytest.mark.parametrize("model_name", sorted(MODELS))
@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_invariants_hold_after_every_event(policy, model_name):
    """Debug mode: after every event, busy servers <= n and equal the needs in service, per-class lists are
    consistent and in arrival order, the served jobs are each class's oldest, and the completion heap is exact."""
    skip_unless_applicable(policy, MODELS[model_name])
    result = evaluate(MODELS[model_name], policy, reps=2, jobs=5_000, seed=22, debug=True)
    assert result.stable and result.events > 10_000


def test_invariant_checker_detects_over_allocation():
    """The debug check is not vacuous: a corrupted state (more busy servers than exist) is reported."""
    from conftest import sim
    from msjgym.systems.msj.state import S_BUSY
    s = sim(MODELS["general@0.5"], "fcfs")
    s.arrive(2, 1.0)
    s.check()
    s.state.sys_i[0, S_BUSY] = 9
    with pytest.raises(AssertionError, match="over-allocated"):
        s.check()
