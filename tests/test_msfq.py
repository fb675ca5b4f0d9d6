"""MSFQ(ℓ) (``msjgym.policies.msj.msfq``): ℓ = 0 is non-preemptive MSF bit for bit; its twin (the environment driven
by its agent, which keeps the phase, reproduces the compiled run); its phases on random event sequences against a
plain-Python statement of the paper's four phases; throughput-optimality where FCFS is unstable; its parameter's
range and its setting."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from conftest import covers, exp_class, model
from msjgym.api import load_scenario, policy_spec
from msjgym.cli import main
from msjgym.core import rng
from msjgym.errors import PolicyError
from msjgym.evaluate.evaluator import evaluate
from msjgym.policies.msj import POLICIES
from msjgym.systems.msj.family import FAMILY
from msjgym.policies.msj.msfq import MSFQ
from msjgym.systems.msj.simulation import MSJSimulation, RunConfig
from test_twin import assert_twins

# Two classes share need 1 (exponential and deterministic durations) and two share need 4 = n (hyperexponential and
# deterministic): merges by arrival order within a need and simultaneous completions.
SHARED = """\
servers = 4
load = 0.8
[[classes]]
name = "exp1"
need = 1
probability = 0.45
service = { dist = "exp", rate = 1.0 }
[[classes]]
name = "det1"
need = 1
probability = 0.35
service = { dist = "det", value = 1.0 }
[[classes]]
name = "h4"
need = 4
probability = 0.1
service = { dist = "hyperexp", mean = 0.5, scv = 8.0 }
[[classes]]
name = "det4"
need = 4
probability = 0.1
service = { dist = "det", value = 0.25 }
"""

CONTINUOUS = SHARED.replace('{ dist = "det", value = 1.0 }', '{ dist = "uniform", low = 0.5, high = 1.5 }') \
                   .replace('{ dist = "det", value = 0.25 }', '{ dist = "erlang", k = 2, mean = 0.25 }')

# one-and-n (n = 10, p_n = 0.1, Exp(1) durations): load = 0.19 λ. FCFS's stability threshold (Grosof & Ayhan,
# Lemma 5.3) is μ ≈ 2.914 jobs per unit time (load ≈ 0.554); λ = 4.75 is load 0.9025.
HIGH = {"arrival_rate": 4.75}


def _shared(tmp_path, text: str = SHARED) -> str:
    path = tmp_path / "shared.toml"
    path.write_text(text)
    return str(path)


def _same_run(scenario: str, params: dict, a, b, jobs: int = 20_000) -> None:
    ra = evaluate(load_scenario(scenario, params), a, reps=2, jobs=jobs, seed=3, references=False)
    rb = evaluate(load_scenario(scenario, params), b, reps=2, jobs=jobs, seed=3, references=False)
    assert ra.events == rb.events
    assert ra.replications == rb.replications


def test_msfq_is_discovered_with_its_parameter():
    assert POLICIES["msfq"] is MSFQ and policy_spec(FAMILY, "msfq") is MSFQ
    assert not MSFQ.preemptive and MSFQ.value("threshold") == 1 and MSFQ.schedule is not None
    assert MSFQ.bind(threshold=0).value("threshold") == 0
    for bad in (-1, 2.5, "3"):
        with pytest.raises(PolicyError, match="threshold = "):
            MSFQ.bind(threshold=bad)


def test_the_threshold_range_depends_on_the_servers():
    """ℓ ∈ [0, k − 1]: 9 is the largest for n = 10; 10 is refused when the model is known, naming the range."""
    m = load_scenario("one-and-n").model
    MSFQ.bind(threshold=9).validate(m)
    with pytest.raises(PolicyError, match=r"threshold = 10: must be an integer in \[0, 9\]"):
        MSFQ.bind(threshold=10).validate(m)
    with pytest.raises(PolicyError, match=r"threshold = 10: must be an integer in \[0, 9\]"):
        evaluate(load_scenario("one-and-n"), MSFQ.bind(threshold=10), reps=2, jobs=100, seed=1)


def test_a_model_outside_the_one_or_all_setting_is_refused():
    with pytest.raises(PolicyError, match=r"one-or-all setting only, every need 1 or servers=4; needs \[2\]"):
        MSFQ.validate(load_scenario("finite-skip-fig6").model)
    MSFQ.bind(threshold=0).validate(model(1, 0.5, exp_class("a", 1, 1.0)))  # n = 1: every need is 1 = n
    MSFQ.validate(model(8, 0.5, exp_class("a", 1, 1.0)))  # only one of the two needs present


@pytest.mark.parametrize("scenario, params", [("one-and-n", {}), ("one-and-n", HIGH), ("shared", {})])
def test_threshold_zero_is_nonpreemptive_msf(scenario, params, tmp_path):
    """ℓ = 0: phase 3 lasts until no 1-server job is left, so the phases are MSF's alternation, bit for bit.

    With continuous durations only: when all k 1-server jobs in service complete at once (deterministic durations),
    phase 2 goes on with the waiting 1-server jobs while MSF would start a waiting k-server job."""
    name = _shared(tmp_path, CONTINUOUS) if scenario == "shared" else scenario
    _same_run(name, params, MSFQ.bind(threshold=0), "msf-nonpreemptive")


# Twin runs: 3,000 jobs in the default suite (about 6,000 events through the agent, bit for bit, every phase
# visited at load 0.9); -m slow: 10,000.
TWIN_JOBS = [3_000, pytest.param(10_000, marks=pytest.mark.slow)]


@pytest.mark.parametrize("jobs", TWIN_JOBS)
@pytest.mark.parametrize("threshold", [1, 3, 9])
def test_twin(threshold, jobs):
    """The environment driven by MSFQ's agent (its phase kept from the observations) reproduces the compiled run."""
    assert_twins("one-and-n", HIGH, MSFQ.bind(threshold=threshold), jobs=jobs, warmup=jobs // 10)


@pytest.mark.parametrize("jobs", TWIN_JOBS)
@pytest.mark.parametrize("threshold", [1, 3])
def test_twin_with_shared_needs_and_general_durations(threshold, jobs, tmp_path):
    assert_twins(_shared(tmp_path), {}, MSFQ.bind(threshold=threshold), jobs=jobs, warmup=jobs // 10)


@pytest.mark.parametrize("jobs", TWIN_JOBS)
def test_twin_with_a_small_window(jobs):
    """W = 2: the agent needs the window only to order class heads; the phase comes from counts and ages."""
    assert_twins("one-and-n", HIGH, MSFQ.bind(threshold=3), jobs=jobs, warmup=jobs // 10, window=2)


def _reference(phase: int, jobs: list[tuple[int, int, bool]], need: list[int], n: int, ell: int):
    """The paper's four phases (§4.2), stated plainly: which waiting jobs start now, and the phase after."""
    started: list[int] = []

    def count(wide: bool, serving: bool | None = None) -> int:
        return sum(1 for j, c, on in jobs if (need[c] == n) == wide and (serving is None or (on or j in started)
                                                                             == serving))

    def oldest_waiting(wide: bool) -> int | None:
        return next((j for j, c, on in jobs if (need[c] == n) == wide and not on and j not in started), None)

    def busy() -> int:
        return sum(need[c] for j, c, on in jobs if on or j in started)

    while True:
        if phase == 1:  # k-server jobs only, until none remain
            if count(True):
                if busy() == 0 and oldest_waiting(True) is not None:
                    started.append(oldest_waiting(True))
                return phase, started
            if oldest_waiting(False) is None:
                return phase, started
            phase = 2
        elif phase in (2, 3):  # 1-server jobs, every one that fits
            while busy() < n and oldest_waiting(False) is not None:
                started.append(oldest_waiting(False))
            if phase == 2:
                if count(False) >= n:  # phase 2 lasts while at least k 1-server jobs are present
                    return phase, started
                phase = 3
            if count(False, serving=True) > ell:  # phase 3 lasts until at most ℓ are in service
                return phase, started
            phase = 4
        else:  # drain: no 1-server job starts until those in service have completed
            if count(False, serving=True):
                return phase, started
            phase = 1


@pytest.mark.parametrize("threshold", [0, 1, 2, 5])
def test_phases_on_random_events(threshold):
    """After every arrival and completion of a random event sequence (needs 1 and n = 6, two classes each), the jobs
    in service are those the plain statement of the four phases starts, and no job in service was paused."""
    gen = np.random.default_rng(11 + threshold)
    n = 6
    need = [1, n, 1, n]
    m = model(n, 1.0, *(exp_class(f"c{i}", v, 0.25) for i, v in enumerate(need)))
    s = MSJSimulation(m, MSFQ.bind(threshold=threshold), RunConfig(debug=True), rng.spawn_states(0, 1)[0])
    phase = 1
    drained = 0
    previous: set[int] = set()  # the jobs in service before the event
    for _ in range(1500):
        running = [j for j, _, on in s.jobs() if on]
        if running and gen.random() < 0.5:
            s.complete(int(gen.choice(running)))
        else:
            s.arrive(int(gen.choice(4, p=[0.4, 0.1, 0.4, 0.1])), 1e9)
        s.check()
        jobs = s.jobs()
        after = {j for j, _, on in jobs if on}
        kept = previous & {j for j, _, _ in jobs}  # in service before the event and not completed by it
        assert kept <= after, "a job in service was paused"
        phase, started = _reference(phase, [(j, c, j in kept) for j, c, _ in jobs], need, n, threshold)
        assert after == kept | set(started), (threshold, phase, sorted(after), sorted(kept), started)
        drained += phase == 4
        previous = after
    assert threshold == 0 or drained > 0  # the drain phase was visited


def test_throughput_optimal_where_fcfs_is_unstable():
    """Load 0.9025 on one-and-n, above FCFS's stability threshold (load ≈ 0.554, Grosof & Ayhan, Lemma 5.3): FCFS is
    reported unstable, while MSFQ(ℓ), throughput-optimal for every ℓ (Chen et al. §4.2), is stable, completes jobs
    at the arrival rate and keeps the offered load's servers busy (99.9 % Student-t CIs over 8 replications,
    seed fixed)."""
    scenario = load_scenario("one-and-n", HIGH)
    fcfs = evaluate(scenario, "fcfs", reps=4, jobs=50_000, seed=5, references=False)
    assert not fcfs.stable and fcfs.growth_rate.mean > 0
    m = scenario.model
    for ell in (0, 1, 9):
        result = evaluate(scenario, MSFQ.bind(threshold=ell), reps=8, jobs=50_000, seed=5, references=False)
        assert result.stable, ell
        reps = result.replications
        ok, mean, half = covers([r["throughput"] for r in reps], m.arrival_rate)
        assert ok, f"ℓ = {ell}: throughput {mean} ± {half} vs λ = {m.arrival_rate}"
        ok, mean, half = covers([r["utilization"] * m.servers for r in reps], m.offered_servers)
        assert ok, f"ℓ = {ell}: busy servers {mean} ± {half} vs offered {m.offered_servers}"


def test_quickswap_beats_msf_at_high_load():
    """The paper's finding in the one-or-all setting: MSFQ with ℓ > 0 has a much lower mean response time than MSF
    at high load. Measured at load 0.9025 (seed 5, 8 replications of 50,000 jobs): MSF about 36, MSFQ(3) about 12.5;
    the test asks that the 99.9 % Welch interval of the difference lies above 0."""
    scenario = load_scenario("one-and-n", HIGH)
    runs = {}
    for policy in ("msf-nonpreemptive", MSFQ.bind(threshold=3)):
        result = evaluate(scenario, policy, reps=8, jobs=50_000, seed=5, references=False)
        runs[getattr(policy, "name", policy)] = np.array([r["response_time"] for r in result.replications])
    msf, msfq = runs["msf-nonpreemptive"], runs["msfq"]
    res = stats.ttest_ind(msf, msfq, equal_var=False)
    low = res.confidence_interval(0.999).low
    assert low > 0, (msf.mean(), msfq.mean(), low)


def test_the_command_line_binds_the_threshold(capsys):
    """``--param threshold=3`` binds ℓ; ℓ = 0 gives msf-nonpreemptive's numbers; ℓ = 10 on n = 10 is refused."""
    runs = {}
    for policy, extra in (("msfq", ["--param", "threshold=3"]), ("msfq", ["--param", "threshold=0"]),
                          ("msf-nonpreemptive", [])):
        assert main(["evaluate", "one-and-n", "--policy", policy, *extra, "--reps", "2", "--jobs", "3000",
                     "--seed", "2", "--json", "--no-progress"]) == 0
        runs[policy + "".join(extra)] = json.loads(capsys.readouterr().out)
    assert runs["msfq--paramthreshold=3"]["policy"] == "msfq(threshold=3)"
    assert runs["msfq--paramthreshold=0"]["metrics"] == runs["msf-nonpreemptive"]["metrics"]
    assert runs["msfq--paramthreshold=3"]["metrics"] != runs["msf-nonpreemptive"]["metrics"]
    assert main(["evaluate", "one-and-n", "--policy", "msfq", "--param", "threshold=10"]) == 2
    assert "threshold = 10" in capsys.readouterr().err
    assert main(["evaluate", "finite-skip-fig6", "--policy", "msfq"]) == 2
    assert "one-or-all" in capsys.readouterr().err
