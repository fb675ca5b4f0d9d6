"""ServerFilling-SRPT and ServerFilling-Gittins (``policies/msj/server_filling_srpt.py``).

Their decisions are per job (remaining duration, attained service), which ``msjgym/MSJ-v0`` can neither show nor
choose, so instead of the twin test the compiled kernel is driven event by event (``MSJSimulation.arrive`` /
``complete``, debug mode: the state's invariants are checked after each) against a slow pure-Python reference of the
paper's definition, decision for decision. Also: the Gittins ranks against the index's definition (a numerical
supremum), the exact equivalences (SF-Gittins with equal-rate exponential classes is ServerFilling, with
deterministic classes it is SF-SRPT; on one server SF-SRPT is M/G/1 SRPT), the settings they refuse, and the paper's
heavy-traffic ordering (Grosof, Scully, Harchol-Balter & Scheller-Wolf, POMACS 2022): SF-SRPT's mean response time is
below ServerFilling's at high load, and so is SF-Gittins' (optimal among size-blind policies) with high-variance
durations.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

import msjgym
from conftest import covers, exp_class, model, sim
from msjgym.api import load_scenario
from msjgym.core.distributions import from_spec
from msjgym.errors import PolicyError
from msjgym.evaluate.evaluator import evaluate
from msjgym.policies.msj import POLICIES
from msjgym.policies.msj.agent_forms import make_agent
from msjgym.policies.msj.server_filling_srpt import gittins_rank
from msjgym.systems.msj.model import JobClass, MSJModel
from msjgym.systems.msj.state import J_DONE, J_REM, J_SEQ, J_SIZE, J_START, T_NOW

SRPT, GITTINS = "server-filling-srpt", "server-filling-gittins"


# ---------------------------------------------------------------- the Python reference of the definition
def reference_rank(dist, age: float) -> float:
    """1 / Gittins index of ``dist`` at ``age``, from the closed forms (exp, det, erlang, uniform, hyperexp)."""
    name = dist.name
    if name == "exp":
        return 1.0 / dist.rate
    if name == "det":
        return max(dist.value - age, 0.0)
    if name == "uniform":
        return (0.5 * (dist.low + dist.high) - age) if age < dist.low else max(0.5 * (dist.high - age), 0.0)
    if name == "erlang":  # mean residual life: E[(S − a)^+] / P(S > a)
        x = dist.rate * age
        logs = [i * math.log(x) - math.lgamma(i + 1) if x > 0 else (0.0 if i == 0 else -math.inf)
                for i in range(dist.k)]
        terms = [math.exp(v - max(logs)) for v in logs]  # x^i/i!, scaled by the largest
        return sum((dist.k - i) * t for i, t in enumerate(terms)) / sum(terms) / dist.rate
    if name == "hyperexp":  # 1 / hazard rate
        w = [p * math.exp(-r * age) for p, r in zip(dist.probs, dist.rates)]
        return sum(w) / sum(wi * r for wi, r in zip(w, dist.rates))
    raise ValueError(name)


def reference_served(jobs: list[dict], servers: int) -> set[int]:
    """The paper's rule: sort by (key, arrival); M = shortest prefix with needs >= n; ServerFilling on M."""
    order = sorted(jobs, key=lambda j: (j["key"], j["seq"]))
    m, total = 0, 0
    while m < len(order) and total < servers:
        total += order[m]["need"]
        m += 1
    free, chosen = servers, set()
    for job in sorted(order[:m], key=lambda j: -j["need"]):  # stable: key order within a need
        if job["need"] <= free:
            chosen.add(job["slot"])
            free -= job["need"]
    return chosen


def _snapshot(s, gittins: bool) -> list[dict]:
    """Every job present, with the key the policy orders it by (computed from the state, in Python)."""
    st, now = s.state, float(s.state.sys_f[0, T_NOW])
    out = []
    for slot, c, on in s.jobs():
        rem = st.job_f[0, slot, J_REM] - (now - st.job_f[0, slot, J_START]) if on else st.job_f[0, slot, J_REM]
        key = rem
        if gittins:
            key = reference_rank(s.model.classes[c].service, st.job_f[0, slot, J_SIZE] - rem)
        out.append({"slot": slot, "seq": int(st.job_i[0, slot, J_SEQ]), "need": int(s.model.needs[c]), "key": key})
    return out


MIXED8 = MSJModel(servers=8, arrival_rate=1.0, classes=(
    JobClass("e1", 1, 0.25, from_spec({"dist": "exp", "rate": 1.0})),
    JobClass("h1", 1, 0.2, from_spec({"dist": "hyperexp", "mean": 1.0, "scv": 8.0})),
    JobClass("d2", 2, 0.15, from_spec({"dist": "det", "value": 1.5})),
    JobClass("u2", 2, 0.15, from_spec({"dist": "uniform", "low": 0.2, "high": 2.0})),
    JobClass("k4", 4, 0.15, from_spec({"dist": "erlang", "k": 3, "mean": 1.0})),
    JobClass("e8", 8, 0.1, from_spec({"dist": "exp", "rate": 2.0})),
))


@pytest.mark.parametrize("policy", [SRPT, GITTINS])
@pytest.mark.parametrize("seed", [1, 2])
def test_kernel_matches_the_reference_decision_for_decision(policy, seed):
    """Random arrivals (sizes from the class laws) and completions of random jobs in service, time advancing
    between events; after each event the kernel's set in service equals the reference's (and the invariants hold)."""
    gen = np.random.default_rng(seed)
    s = sim(MIXED8, policy)
    laws = [c.service for c in MIXED8.classes]
    probs = np.array(MIXED8.probabilities)
    now, decisions, preemptions = 0.0, 0, 0
    for _ in range(1500):
        before = {slot for slot, _, on in s.jobs() if on}
        served = [slot for slot in before]
        present = len(s.jobs())
        now += float(gen.exponential(0.3))
        # time may pass only up to the first completion of a job in service
        first_done = min((s.state.job_f[0, j, J_DONE] for j in served), default=math.inf)
        now = min(now, float(first_done))
        s.state.sys_f[0, T_NOW] = now
        if served and (present > 14 or gen.random() < 0.45):
            done = int(gen.choice(served))
            jobs = [j for j in _snapshot(s, policy == GITTINS) if j["slot"] != done]
            s.complete(done)
        else:
            c = int(gen.choice(len(laws), p=probs))
            size = float(laws[c].sample(gen, 1)[0])
            jobs = _snapshot(s, policy == GITTINS)
            slot_new = s.arrive(c, size)
            jobs.append({"slot": slot_new, "seq": int(s.state.job_i[0, slot_new, J_SEQ]),
                         "need": int(MIXED8.needs[c]), "key": size if policy == SRPT else
                         reference_rank(laws[c], 0.0)})
        s.check()
        got = {slot for slot, _, on in s.jobs() if on}
        assert got == reference_served(jobs, MIXED8.servers), f"decision {decisions}"
        decisions += 1
        preemptions += len((before & {j["slot"] for j in jobs}) - got)
    assert preemptions > 20  # the sequences exercise preemption, not only admission


# ---------------------------------------------------------------- Gittins ranks against the definition
def _sup_index(dist, age: float) -> float:
    """sup over Δ of P(S − a <= Δ | S > a) / E[min(S − a, Δ) | S > a], numerically (survival function, grid in Δ)."""
    sf = _survival(dist)
    tail = sf(age)
    deltas = np.geomspace(1e-6, 60.0, 400)
    best = 0.0
    area, last = 0.0, 0.0
    for d in deltas:
        area += integrate.quad(sf, age + last, age + d, limit=200)[0]
        last = d
        best = max(best, (tail - sf(age + d)) / area)
    return best


def _survival(dist):
    name = dist.name
    if name == "exp":
        return lambda t: math.exp(-dist.rate * t)
    if name == "det":
        return lambda t: 1.0 if t < dist.value else 0.0
    if name == "uniform":
        return lambda t: 1.0 if t < dist.low else max(0.0, (dist.high - t) / (dist.high - dist.low))
    if name == "erlang":
        return lambda t: math.exp(-dist.rate * t) * sum((dist.rate * t) ** i / math.factorial(i) for i in range(dist.k))
    if name == "hyperexp":
        return lambda t: sum(p * math.exp(-r * t) for p, r in zip(dist.probs, dist.rates))
    raise ValueError(name)


LAWS = [{"dist": "exp", "rate": 2.0}, {"dist": "det", "value": 1.5}, {"dist": "uniform", "low": 0.5, "high": 2.5},
        {"dist": "erlang", "k": 3, "mean": 1.0}, {"dist": "erlang", "k": 40, "mean": 2.0},
        {"dist": "hyperexp", "mean": 1.0, "scv": 8.0}, {"dist": "hyperexp", "rates": [3.0, 1.0, 0.2],
                                                        "probs": [0.5, 0.3, 0.2]}]


@pytest.mark.parametrize("spec", LAWS, ids=lambda s: s["dist"])
@pytest.mark.parametrize("age", [0.0, 0.3, 1.0, 1.4])
def test_gittins_rank_is_the_inverse_of_the_index_by_its_definition(spec, age):
    dist = from_spec(spec)
    kind, data = dist.encode()
    rank = gittins_rank(kind, data, 0, age)
    assert rank == pytest.approx(reference_rank(dist, age), rel=1e-12)
    if spec["dist"] == "erlang" and spec["k"] == 40:
        return  # the quadrature of a 40-phase survival function is slow; the closed form was checked above
    assert 1.0 / rank == pytest.approx(_sup_index(dist, age), rel=2e-3)


def test_gittins_rank_of_a_long_erlang_does_not_overflow():
    dist = from_spec({"dist": "erlang", "k": 400, "mean": 1.0})
    kind, data = dist.encode()
    for age in (0.0, 0.5, 0.999, 1.5, 10.0):
        r = gittins_rank(kind, data, 0, age)
        assert math.isfinite(r) and r > 0
        assert r == pytest.approx(reference_rank(dist, age), rel=1e-9)


# ---------------------------------------------------------------- exact equivalences
def _same_run(scenario, a, b, jobs=20_000, reps=2):
    ra = evaluate(scenario, a, reps=reps, jobs=jobs, seed=5, references=False)
    rb = evaluate(scenario, b, reps=reps, jobs=jobs, seed=5, references=False)
    assert ra.events == rb.events
    assert ra.replications == rb.replications


EQUAL_RATES = """\
servers = 8
load = 0.9
[[classes]]
need = 1
probability = 0.4
service = { dist = "exp", rate = 1.0 }
[[classes]]
need = 1
probability = 0.2
service = { dist = "exp", rate = 1.0 }
[[classes]]
need = 2
probability = 0.2
service = { dist = "exp", rate = 1.0 }
[[classes]]
need = 8
probability = 0.2
service = { dist = "exp", rate = 1.0 }
"""


@pytest.mark.parametrize("scenario", ["equal-rates", "one-and-n"])
def test_gittins_with_equal_rate_exponential_classes_is_server_filling(scenario, tmp_path):
    """Equal constant ranks: the order is arrival order, M is ServerFilling's front and the placement (largest need
    first, oldest first within a need) is ServerFilling's: the same run bit for bit."""
    if scenario == "equal-rates":
        path = tmp_path / "equal.toml"
        path.write_text(EQUAL_RATES)
        scenario = str(path)
    _same_run(load_scenario(scenario), GITTINS, "server-filling")


def test_gittins_with_deterministic_classes_is_srpt(tmp_path):
    """A deterministic job's Gittins rank is its remaining duration d − a: SF-Gittins is SF-SRPT, bit for bit."""
    path = tmp_path / "det.toml"
    path.write_text("servers = 4\nload = 0.9\n" + "".join(
        f"[[classes]]\nneed = {m}\nprobability = {p}\nservice = {{ dist = \"det\", value = {d} }}\n"
        for m, p, d in ((1, 0.5, 1.0), (1, 0.2, 3.0), (2, 0.2, 0.7), (4, 0.1, 2.0))))
    _same_run(load_scenario(str(path)), GITTINS, SRPT)


def test_one_server_srpt_is_mg1_srpt():
    """n = 1, need 1: SF-SRPT is SRPT; M/G/1 SRPT's E[T] (Schrage & Miller 1966) for Exp(1) sizes at ρ = 0.7:
    E[T] = ∫ [λ ∫_0^x t F̄(t) dt / (1 − ρ(x))² + ∫_0^x dt / (1 − ρ(t))] dF(x), ρ(x) = λ ∫_0^x t f(t) dt."""
    lam = 0.7

    def rho(x):
        return lam * (1.0 - math.exp(-x) * (1.0 + x))

    def t_of(x):
        wait = lam * (1.0 - math.exp(-x) * (1.0 + x)) / (1.0 - rho(x)) ** 2
        resid = integrate.quad(lambda t: 1.0 / (1.0 - rho(t)), 0.0, x)[0]
        return wait + resid

    exact = integrate.quad(lambda x: t_of(x) * math.exp(-x), 0.0, 60.0, limit=200)[0]
    result = evaluate(model(1, lam, exp_class("a", 1, 1.0)), SRPT, reps=10, jobs=100_000, seed=9, references=False)
    values = np.array([r["response_time"] for r in result.replications])
    ok, mean, half = covers(values, exact)
    assert ok, f"E[T] {mean} ± {half} vs M/G/1 SRPT {exact}"


# ---------------------------------------------------------------- settings and the agent form
def test_declarations_and_refusals(tmp_path):
    for name in (SRPT, GITTINS):
        p = POLICIES[name]
        assert p is POLICIES[name] and p.preemptive and p.schedule is not None and "Grosof, Scully" in p.source
    with pytest.raises(PolicyError, match=r"server-filling-srpt: every need must divide servers=6; needs \[4\]"):
        evaluate(model(6, 1.0, exp_class("a", 1, 0.5), exp_class("b", 4, 0.5)), SRPT, reps=1, jobs=100)
    with pytest.raises(PolicyError, match=r"every need must divide every larger need.*2 does not divide 3\D"):
        evaluate(model(6, 1.0, exp_class("a", 2, 0.5), exp_class("b", 3, 0.5)), GITTINS, reps=1, jobs=100)
    lognormal = JobClass("ln", 1, 1.0, from_spec({"dist": "lognormal", "mean": 1.0, "scv": 2.0}))
    with pytest.raises(PolicyError, match=r"class 'ln' has duration law .*monotone hazard rate.*exp, det"):
        evaluate(model(2, 1.0, lognormal), GITTINS, reps=1, jobs=100)
    evaluate(model(2, 1.0, lognormal), SRPT, reps=1, jobs=1_000)  # SRPT knows the sizes: any law


def test_agent_form_says_why_it_cannot_exist():
    from msjgym.systems.msj.env import MSJEnv
    spec = MSJEnv(scenario="finite-skip-fig6", mode="preemptive", window=8).spec_
    for name in (SRPT, GITTINS):
        with pytest.raises(PolicyError, match=rf"'{name}' has no agent form on msjgym/MSJ-v0: .*remaining"):
            make_agent(name, spec)
        with pytest.raises(PolicyError, match="no agent form"):
            POLICIES[name].agent(spec)


# ---------------------------------------------------------------- the paper's heavy-traffic ordering
HIGH_VARIANCE = """\
servers = 8
load = 0.95
[[classes]]
need = 1
probability = 0.5
service = { dist = "hyperexp", mean = 1.0, scv = 10.0 }
[[classes]]
need = 2
probability = 0.25
service = { dist = "hyperexp", mean = 1.0, scv = 10.0 }
[[classes]]
need = 4
probability = 0.15
service = { dist = "hyperexp", mean = 1.0, scv = 10.0 }
[[classes]]
need = 8
probability = 0.1
service = { dist = "hyperexp", mean = 1.0, scv = 10.0 }
"""


def _mean_ci(result):
    e = result.metrics["response_time"]
    return e.mean, e.ci95


def test_heavy_traffic_ordering_fig6():
    """finite-skip-fig6 (exponential) at load 0.95: E[T] of SF-SRPT below ServerFilling's, 95 % CIs disjoint."""
    scenario = load_scenario("finite-skip-fig6", {"load": 0.95})
    sf = _mean_ci(msjgym.evaluate(scenario, "server-filling", reps=5, jobs=100_000, seed=2024, references=False))
    srpt = _mean_ci(msjgym.evaluate(scenario, SRPT, reps=5, jobs=100_000, seed=2024, references=False))
    assert srpt[0] + srpt[1] < sf[0] - sf[1], f"SF-SRPT {srpt} vs ServerFilling {sf}"


@pytest.mark.parametrize("jobs", [50_000, pytest.param(100_000, marks=pytest.mark.slow)])
def test_heavy_traffic_ordering_high_variance(tmp_path, jobs):
    """Needs 1, 2, 4, 8 on 8 servers, H2 durations (SCV 10), load 0.95: SF-SRPT < SF-Gittins < ServerFilling in
    E[T], 95 % CIs disjoint (Gittins: a decreasing hazard rate favours young jobs, as least-attained-service).
    5 replications of 50,000 jobs (-m slow: 100,000, CIs 1.4× narrower); measured at 50,000: E[T] = 3.26 ± 0.37,
    5.32 ± 1.12, 41.9 ± 9.3 (at 100,000: 3.44 ± 0.28, 5.95 ± 1.00, 49.8 ± 10.9)."""
    path = tmp_path / "hv.toml"
    path.write_text(HIGH_VARIANCE)
    scenario = load_scenario(str(path))
    runs = {p: _mean_ci(msjgym.evaluate(scenario, p, reps=5, jobs=jobs, seed=2024, references=False))
            for p in ("server-filling", GITTINS, SRPT)}
    sf, git, srpt = runs["server-filling"], runs[GITTINS], runs[SRPT]
    assert srpt[0] + srpt[1] < git[0] - git[1], runs
    assert git[0] + git[1] < sf[0] - sf[1], runs
