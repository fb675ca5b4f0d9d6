"""Twin test of the finite-skip policies: the compiled kernels (``FiniteSkipPolicy.allocate``) and the plain-Python agent (written separately from
the definitions of Grosof, Harchol-Balter & Scheller-Wolf) give the same rates (and server assignments) on random
states of every system."""
from __future__ import annotations

import numpy as np
import pytest

from msjgym.core.rng import seed_states
from msjgym.policies.finite_skip import POLICIES, HET, MSJ, THRESHOLD, FiniteSkipAgent

SPEEDS = (0.1, 0.4, 0.2, 0.3)


def _params(system: int, rng: np.random.Generator, n: int, k: int, name: str) -> np.ndarray:
    if system == THRESHOLD:
        return rng.choice([1, 3, k], size=n)
    if system == MSJ:
        needs = {"server-filling": [1, 2, 4], "server-filling-divisible": [1, 2, 3, 6]}.get(name, [1, 2, 3, 4])
        return rng.choice([v for v in needs if v <= k], size=n)
    return np.ones(n, dtype=np.int64)


@pytest.mark.parametrize("name", list(POLICIES))
def test_agent_matches_kernel(name):
    policy = POLICIES[name]
    k = {HET: 4, THRESHOLD: 8, MSJ: 6 if name == "server-filling-divisible" else 4}.get(policy.system, 4)
    speeds = np.array(sorted(SPEEDS, reverse=True)) if policy.system == HET else np.full(k, 1.0 / k)
    rng = np.random.default_rng(5)
    agent = FiniteSkipAgent(name, k, SPEEDS if policy.system == HET else ())
    for _ in range(300):
        n = int(rng.integers(0, 12))
        params = _params(policy.system, rng, n, k, name).astype(np.int64)
        levels = np.array(sorted(set(params.tolist()) or {1}, reverse=True), dtype=np.int64)
        cls = np.arange(n, dtype=np.int64)  # one class per job: prm[cls[j]] = params[j]
        srv = np.full(n, -1, dtype=np.int64)
        if policy.system == HET and not policy.preemptive and n:
            m = min(n, k)
            holders = rng.random(m) < 0.6
            srv[:m][holders] = rng.permutation(k)[: holders.sum()]
        before = srv.copy()
        rates = np.zeros(n)
        if n:  # the event loop calls the kernel for n >= 1 jobs, rates zeroed
            policy.allocate(n, cls, params, srv, speeds, k, levels, np.zeros(k, np.int64), rates,
                            seed_states([np.random.SeedSequence(1)]))
        expected = agent.act({"params": params, "servers": before})
        assert rates.sum() <= 1 + 1e-12
        if name == "random":  # a different random stream: check the rule, not the draw
            assert sorted(np.flatnonzero(rates)) == list(range(min(n, k)))
            assert len(set(srv[srv >= 0])) == min(n, k) and np.all(srv[before >= 0] == before[before >= 0])
            continue
        np.testing.assert_allclose(rates, expected, err_msg=f"{name}: params={params} servers={before}")
        if policy.system == HET:
            assert srv.tolist() == agent.last_servers


@pytest.mark.parametrize("name", [p for p in POLICIES if p != "random"])
def test_agent_path_reproduces_compiled_trajectory(name):
    """Driving the Python event loop with the agent gives the compiled loop's trajectory: the same per-job records
    (arrival, front entry, completion, size, W^A, W_F^F) and the same time integrals."""
    from msjgym.systems.finite_skip import scenarios as F
    from msjgym.systems.finite_skip import simulation as fs
    from msjgym.systems.finite_skip.agent import RateDecider, agent_replication
    figure = {HET: "finite-skip-fig2", THRESHOLD: "finite-skip-fig4a", MSJ: "finite-skip-fig6"}.get(
        POLICIES[name].system, "finite-skip-fig3")
    model = F.load_finite_skip(figure, {"load": 0.8})
    agent = FiniteSkipAgent(name, model.servers, model.speeds)
    rule = fs.FULL_CLASS if name == "server-filling-divisible" else None
    stream = np.random.SeedSequence(3).spawn(1)[0]
    fast = fs.replication(model, POLICIES[name], jobs=1500, stream=stream)
    slow = agent_replication(model, RateDecider(model, agent), jobs=1500, stream=stream, rule=rule)
    np.testing.assert_allclose(slow.rec, fast.rec, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(slow.acc, fast.acc, rtol=1e-9, atol=1e-9)


def test_agent_path_diagnoses_a_custom_policy():
    """A policy of one's own (serve only the newest job) on LPS's system, through ``msjgym.evaluate``: the
    diagnostics show it is not finite-skip."""
    import msjgym

    scenario = msjgym.load_scenario("finite-skip-fig3", {"load": 0.5})

    def newest_first(obs):
        rates = np.zeros(len(obs["params"]))
        if len(rates):
            rates[-1] = 1.0
        return rates

    s = msjgym.evaluate(scenario, newest_first, jobs=2000, reps=2, seed=4)
    assert s.stable and s.diagnostics["served_outside_front"] > 0 and s.policy == "newest_first"
    assert "queueing_time" not in s.metrics  # jobs served outside the front never entered it


def test_a_rate_agent_evaluates_as_its_builtin():
    """The agent form of a built-in, given to ``msjgym.evaluate`` as an object (mode "rates"), gives the built-in's
    replications exactly (a policy whose front rule is the system's own: not server-filling-divisible)."""
    import msjgym

    scenario = msjgym.load_scenario("finite-skip-fig4a", {"load": 0.7})
    model = scenario.model
    agent = FiniteSkipAgent("elastic-first", model.servers, model.speeds)
    a = msjgym.evaluate(scenario, agent, jobs=1500, reps=2, seed=8, references=False)
    b = msjgym.evaluate(scenario, "elastic-first", jobs=1500, reps=2, seed=8, references=False)
    assert a.replications == b.replications and a.diagnostics == b.diagnostics


def test_a_policy_of_the_users_says_what_its_run_compiles(monkeypatch):
    """The agent path compiles the event loop's stepping entry points on first use: its run says so in the one notice
    every family prints (here with nothing cached), and prepares exactly those units."""
    from msjgym import api
    from msjgym.core import compiling
    from msjgym.systems.finite_skip import simulation as fs
    from msjgym.systems.finite_skip.family import FiniteSkipRuns

    scenario = api.load_scenario("finite-skip-fig4a")
    model = scenario.model
    runs = FiniteSkipRuns(scenario, FiniteSkipAgent("elastic-first", model.servers, model.speeds),
                          api.RunSettings(reps=1, jobs=100), seed=1)
    monkeypatch.setattr(compiling, "pending", lambda units: list(units))
    note = runs.compile_note()
    assert note is not None and note.startswith("msjgym: compiling the finite-skip event loop (")
    prepared = []
    monkeypatch.setattr(compiling, "compile_units", lambda units: prepared.extend(units) or 0.0)
    runs.prepare()
    assert [(u.dispatcher, u.signature) for u in prepared] == [(u.dispatcher, u.signature) for u in fs.loop_units()]
