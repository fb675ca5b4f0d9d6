"""Balanced-Splitting-π (``msjgym.policies.msj.balanced_splitting``; Anselmi & Doncel, IEEE TPDS 2025): its
parameters and setting; its limits (ψ = 0, or every s_i = 0, is π alone, bit for bit); the kernel event by event
against a plain-Python statement of the policy on random event sequences; the paper's connection with Erlang's loss
formula (the fraction of class-i arrivals sent to H is B(s_i, a_i), insensitive to the duration law); stability
where the sufficient condition holds and instability where H is overloaded; the command line.

The policy has no agent form (the observation does not show which set a job in service runs in), hence no twin
test: ``test_the_agent_says_why_it_cannot_exist``."""
from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import covers, exp_class, model
from msjgym.api import load_scenario, policy_spec
from msjgym.cli import main
from msjgym.core import rng
from msjgym.core.distributions import from_spec
from msjgym.systems.msj.env import MSJEnv
from msjgym.errors import PolicyError
from msjgym.evaluate.evaluator import evaluate
from msjgym.policies.msj import POLICIES
from msjgym.systems.msj.family import FAMILY
from msjgym.policies.msj.agent_forms import make_agent
from msjgym.policies.msj.balanced_splitting import BALANCED_SPLITTING as BS
from msjgym.systems.msj.simulation import MSJSimulation, RunConfig
from msjgym.systems.msj.model import JobClass, MSJModel
from msjgym.systems.msj.theory import balanced_splitting as theory

# n = 12: a_i = λ p_i E[S_i] = (3.5, 2.2, 0.5): s = (3, 2, 0), |A| = (3, 4, 0), |H| = 5 >= max need 4.
SMALL = model(12, 10.0, exp_class("one", 1, 0.35), exp_class("two", 2, 0.22), exp_class("four", 4, 0.43, 8.6))

# n = 60, general durations (the M/GI/s/s loss formula is insensitive): a = (12.5, 5.4, 2.3), s = (12, 5, 2),
# |A| = (12, 15, 12), |H| = 21; load ≈ 0.71; the load sent to H (≈ 14.0 servers) is below |H| − 6 + 1 = 16.
LOSS = MSJModel(servers=60, arrival_rate=10.0, classes=(
    JobClass("u1", 1, 0.5, from_spec({"dist": "uniform", "low": 1.5, "high": 3.5})),
    JobClass("h3", 3, 0.3, from_spec({"dist": "hyperexp", "mean": 1.8, "scv": 4.0})),
    JobClass("e6", 6, 0.2, from_spec({"dist": "erlang", "k": 3, "mean": 1.15})),
))

MIXED = """\
servers = 4
load = 0.75
[[classes]]
name = "exp1"
need = 1
probability = 0.3
service = { dist = "exp", rate = 1.0 }
[[classes]]
name = "det1"
need = 1
probability = 0.25
service = { dist = "det", value = 1.0 }
[[classes]]
name = "h2"
need = 2
probability = 0.25
service = { dist = "hyperexp", mean = 0.5, scv = 8.0 }
[[classes]]
name = "exp4"
need = 4
probability = 0.2
service = { dist = "exp", rate = 4.0 }
"""


def _partition(m: MSJModel, scale: float = 1.0) -> tuple[list[int], int]:
    slots = theory.balanced_slots(m.needs, m.offered_servers_per_class, scale)
    return slots, theory.helper_servers(m.servers, m.needs, slots)


# ---------------------------------------------------------------- declaration, parameters, setting
def test_discovered_with_its_parameters():
    assert POLICIES["balanced-splitting"] is BS and policy_spec(FAMILY, "balanced-splitting") is BS
    assert not BS.preemptive and BS.schedule is not None and "Anselmi & Doncel" in BS.source
    assert BS.value("helper") == "fcfs" and BS.value("scale") == 1.0
    assert BS.bind(helper="first-fit", scale=0.5).label == "balanced-splitting(helper=first-fit, scale=0.5)"
    with pytest.raises(PolicyError, match="helper = 'lifo': must be one of fcfs, first-fit"):
        BS.bind(helper="lifo")
    with pytest.raises(PolicyError, match=r"scale = -1: must be a finite number in \[0, 16\]"):
        BS.bind(scale=-1)


def test_the_partition():
    assert _partition(SMALL) == ([3, 2, 0], 5) and BS.partition(SMALL) == ([3, 2, 0], 5)
    assert _partition(LOSS) == ([12, 5, 2], 21)
    assert _partition(SMALL, 0.0) == ([0, 0, 0], 12)
    assert _partition(SMALL, 0.6) == ([2, 1, 0], 8)


def test_a_helper_set_too_small_for_the_largest_need_is_refused():
    """one-and-n (n = 10, needs 1 and 10): s = (2, 0) leaves |H| = 8 < 10: a job needing all servers sent to H could
    never start. ψ = 0 puts every server in H."""
    m = load_scenario("one-and-n").model
    with pytest.raises(PolicyError, match=r"helper set H must hold the largest need 10.*\|H\| = 8 of servers=10"):
        BS.validate(m)
    BS.bind(scale=0.0).validate(m)
    with pytest.raises(PolicyError, match=r"\|H\| = 1"):
        BS.bind(scale=1.5).validate(SMALL)  # s = (5, 3, 0): |H| = 12 − 11 = 1 < 4


def test_the_agent_says_why_it_cannot_exist():
    spec = MSJEnv(scenario="finite-skip-fig6", mode="start").spec_
    with pytest.raises(PolicyError, match="does not show which server set"):
        make_agent("balanced-splitting", spec)
    with pytest.raises(PolicyError, match="no agent form"):
        BS.agent(spec)


# ---------------------------------------------------------------- limits: π alone, bit for bit
@pytest.mark.parametrize("helper, alone", [("fcfs", "fcfs"), ("first-fit", "first-fit")])
def test_scale_zero_is_the_helper_policy_alone(helper, alone, tmp_path):
    """ψ = 0: no A_i, |H| = n: Balanced-Splitting-π is π on all servers, run for run (same events, same metrics)."""
    path = tmp_path / "mixed.toml"
    path.write_text(MIXED)
    scenario = load_scenario(str(path))
    a = evaluate(scenario, BS.bind(helper=helper, scale=0.0), reps=2, jobs=10_000, seed=4, references=False)
    b = evaluate(scenario, alone, reps=2, jobs=10_000, seed=4, references=False)
    assert a.events == b.events and a.replications == b.replications


def test_below_one_erlang_per_class_it_is_fcfs():
    """fig6 at load 0.7 on 4 servers: every a_i < 1, so every s_i = 0 with the default ψ = 1: FCFS bit for bit."""
    scenario = load_scenario("finite-skip-fig6", {"load": 0.7})
    assert _partition(scenario.model) == ([0, 0, 0], 4)
    a = evaluate(scenario, "balanced-splitting", reps=2, jobs=10_000, seed=6, references=False)
    b = evaluate(scenario, "fcfs", reps=2, jobs=10_000, seed=6, references=False)
    assert a.replications == b.replications


# ---------------------------------------------------------------- the kernel against the definition
class Reference:
    """Balanced-Splitting-π, stated plainly: per class, the jobs in A_i; the helper set's queue and its jobs in
    service; π = FCFS or first-fit on H's idle servers."""

    def __init__(self, m: MSJModel, helper: str, scale: float) -> None:
        self.need = [int(v) for v in m.needs]
        self.slots, self.h = _partition(m, scale)
        self.helper = helper
        self.in_a: dict[int, int] = {}  # job -> class, running in A_class
        self.in_h: dict[int, int] = {}  # job -> class, running in H
        self.queue: list[tuple[int, int]] = []  # H's waiting jobs (job, class), oldest first
        self.sent_to_h = [0] * len(self.need)

    def serving(self) -> set[int]:
        return set(self.in_a) | set(self.in_h)

    def arrive(self, job: int, c: int) -> None:
        if sum(1 for k in self.in_a.values() if k == c) < self.slots[c]:
            self.in_a[job] = c
        else:
            self.sent_to_h[c] += 1
            self.queue.append((job, c))
        self._helper()

    def complete(self, job: int) -> None:
        if job in self.in_a:
            del self.in_a[job]
        else:
            del self.in_h[job]
        self._helper()

    def _helper(self) -> None:
        while True:
            free = self.h - sum(self.need[c] for c in self.in_h.values())
            fits = [i for i, (_, c) in enumerate(self.queue) if self.need[c] <= free]
            if not fits or (self.helper == "fcfs" and fits[0] != 0):
                return
            job, c = self.queue.pop(fits[0])
            self.in_h[job] = c


@pytest.mark.parametrize("helper, scale", [("fcfs", 1.0), ("first-fit", 1.0), ("fcfs", 0.6), ("first-fit", 0.6)])
def test_kernel_matches_the_definition_on_random_events(helper, scale):
    """2,000 random arrivals and completions (debug mode: the state's invariants after every event): after each,
    the jobs in service are exactly the reference's, and so are the per-class counts of arrivals sent to H."""
    policy = BS.bind(helper=helper, scale=scale)
    sim = MSJSimulation(SMALL, policy, RunConfig(debug=True), rng.spawn_states(0, 1)[0])
    ref = Reference(SMALL, helper, scale)
    gen = np.random.default_rng(17)
    K = SMALL.num_classes
    in_a_max = [0] * K
    for step in range(2_000):
        serving = [j for j, _, s in sim.jobs() if s]
        if serving and gen.random() < 0.45:
            job = int(gen.choice(serving))
            sim.complete(job)
            ref.complete(job)
        else:
            c = int(gen.choice(K, p=[0.4, 0.35, 0.25]))
            job = sim.arrive(c, 1.0)
            ref.arrive(job, c)
        sim.check()
        got = {j for j, _, s in sim.jobs() if s}
        assert got == ref.serving(), f"step {step}: kernel serves {sorted(got)}, the definition {sorted(ref.serving())}"
        own = sim.state.own_i[0]  # the policy's own counters (balanced_splitting.STATE)
        assert list(own[K:2 * K]) == ref.sent_to_h, step
        for c in range(K):
            in_a = sum(1 for k in ref.in_a.values() if k == c)
            assert own[c] == in_a <= ref.slots[c]
            in_a_max[c] = max(in_a_max[c], in_a)
        assert sum(SMALL.needs[c] for c in ref.in_h.values()) <= ref.h
    assert in_a_max == ref.slots  # every A_i was filled at some point: the test reaches the interesting states
    assert len(ref.queue) > 0 or sum(ref.sent_to_h) > 100


# ---------------------------------------------------------------- the paper: Erlang's loss formula, stability
def test_fraction_sent_to_the_helper_set_is_erlang_b():
    """Anselmi & Doncel §4: A_i is an M/GI/s_i/s_i loss system, so the fraction of class-i arrivals sent to H is
    B(s_i, a_i), whatever the duration law (uniform, hyperexponential, Erlang here). 12 replications (seed 2025),
    each 40,000 events of warm-up from empty, then 400,000 events (≈ 200,000 arrivals); the 99.9 % Student-t CI of
    each class's fraction must cover B(s_i, a_i)."""
    m, reps = LOSS, 12
    K = m.num_classes
    slots, _ = _partition(m)
    a = m.offered_servers_per_class / m.needs
    exact = [theory.helper_probability(s, x) for s, x in zip(slots, a)]
    sim = MSJSimulation(m, BS, RunConfig(jobs=10**9, warmup=0), rng.spawn_states(2025, reps)[0])
    fractions = np.zeros((reps, K))
    for b in range(reps):
        sim.advance(b, 40_000)
        before = sim.state.own_i[b, K:3 * K].copy()
        sim.advance(b, 400_000)
        sent, arrived = np.split(sim.state.own_i[b, K:3 * K] - before, 2)
        fractions[b] = sent / arrived
    for c in range(K):
        ok, mean, half = covers(fractions[:, c], exact[c])
        assert ok, f"class {m.classes[c].name}: sent to H {mean:.5f} ± {half:.5f} vs B({slots[c]}, {a[c]:.3f}) = " \
                   f"{exact[c]:.5f}"


def test_stable_where_the_sufficient_condition_holds():
    """LOSS (load ≈ 0.71): the load sent to H is below |H| − max need + 1: stable, and the busy servers match the
    offered load (99.9 % CI over 8 replications); the jobs that A_i takes start at once, so the probability of
    waiting is below the probability of being sent to H."""
    m = LOSS
    slots, h = _partition(m)
    assert theory.fcfs_helper_stable(m.servers, m.needs, m.offered_servers_per_class, slots)
    result = evaluate(m, BS, reps=8, jobs=100_000, seed=8, references=False)
    assert result.stable
    reps = result.replications
    ok, mean, half = covers([r["utilization"] * m.servers for r in reps], m.offered_servers)
    assert ok, f"busy servers {mean} ± {half} vs offered {m.offered_servers}"
    a = m.offered_servers_per_class / m.needs
    for c, s, x in zip(m.classes, slots, a):
        queued = np.mean([r[f"queueing_probability[{c.name}]"] for r in reps])
        assert queued <= theory.helper_probability(s, x), c.name


def test_unstable_when_the_helper_set_is_overloaded():
    """The same classes at 1.3× the arrival rate: the load sent to H exceeds |H|, which no π can serve: the run is
    reported unstable."""
    m = MSJModel(servers=LOSS.servers, arrival_rate=13.0, classes=LOSS.classes)
    slots, h = _partition(m)
    assert theory.helper_offered_servers(m.needs, m.offered_servers_per_class, slots) > h and m.load < 1
    result = evaluate(m, BS, reps=2, jobs=200_000, seed=9, references=False)
    assert not result.stable


# ---------------------------------------------------------------- command line
def test_the_command_line(capsys, tmp_path):
    """``--param helper=first-fit`` and ``--param scale=0`` bind the parameters; ψ = 0 with FCFS gives fcfs's
    numbers; one-and-n is refused with the reason."""
    path = tmp_path / "mixed.toml"
    path.write_text(MIXED)
    runs = {}
    for policy, extra in (("balanced-splitting", ["--param", "scale=0"]), ("fcfs", []),
                          ("balanced-splitting", ["--param", "helper=first-fit", "--param", "scale=0"])):
        assert main(["evaluate", str(path), "--policy", policy, *extra, "--reps", "2", "--jobs", "3000",
                     "--seed", "2", "--json", "--no-progress"]) == 0
        runs[policy + "".join(extra)] = json.loads(capsys.readouterr().out)
    assert runs["balanced-splitting--paramscale=0"]["metrics"] == runs["fcfs"]["metrics"]
    assert runs["balanced-splitting--paramhelper=first-fit--paramscale=0"]["policy"] == \
        "balanced-splitting(helper=first-fit, scale=0)"
    assert main(["evaluate", "one-and-n", "--policy", "balanced-splitting"]) == 2
    assert "must hold the largest need" in capsys.readouterr().err
