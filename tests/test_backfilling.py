"""EASY and conservative backfilling (``policies/msj/easy_backfilling.py``, ``conservative_backfilling.py``) and the
runtime estimates they plan with.

Their agent forms raise (the observation shows no estimates), so instead of a twin the compiled kernels are driven
event by event (``MSJSimulation.arrive`` / ``complete`` with invariant checks) and compared, decision for decision,
with slow pure-Python references of the definitions (Mu'alem & Feitelson 2001, §2): the jobs started, and for
conservative backfilling every waiting job's reservation, exactly (==). On the same random instances: EASY never
delays the head's reservation, conservative never delays any reservation (when estimates are not below durations).
Then: with one need both equal FCFS bit for bit; on a two-class scenario both beat FCFS; estimates in scenarios and
traces; the command line.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from conftest import exp_class, model
from msjgym.api import load_scenario
from msjgym.core import rng
from msjgym.systems.msj.trace.files import read_trace
from msjgym.errors import PolicyError, ScenarioError
from msjgym.evaluate.evaluator import evaluate
from msjgym.policies.msj import POLICIES
from msjgym.systems.msj.simulation import MSJSimulation, RunConfig
from msjgym.systems.msj.model import EstimateLaw
from msjgym.systems.msj.state import (
    C_BOUND, J_CLS, J_DONE, J_EST, J_HPOS, J_NEXT, J_REM, J_SEQ, J_SIZE, J_START, S_HEAPN, T_NOW)
from msjgym.systems.msj.backfilling import J_RES

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

TWO_CLASS = """\
description = "need 1 (80 %) and need 8 (20 %) on 8 servers"
servers = 8
load = {load}
{estimate}
[[classes]]
name = "small"
need = 1
probability = 0.8
service = {{ dist = "exp", rate = 1.0 }}
[[classes]]
name = "big"
need = 8
probability = 0.2
service = {{ dist = "exp", rate = 1.0 }}
"""


def _two_class(tmp_path, load: float = 0.5, estimate: str = "") -> str:
    path = tmp_path / f"two-{load}-{abs(hash(estimate))}.toml"
    path.write_text(TWO_CLASS.format(load=load, estimate=estimate))
    return str(path)


# ==================================================================================================== references
@dataclasses.dataclass
class Job:
    slot: int
    need: int
    rem: float  # estimated remaining time (waiting jobs)
    end: float  # estimated end (running jobs)
    res: float  # reservation (waiting jobs)


def _estimated_end(st, j: int, now: float) -> float:
    f = st.job_f[0, j]
    end = f[J_START] + (f[J_EST] - (f[J_SIZE] - f[J_REM]))
    return end if end > now else now


def _estimated_remaining(st, j: int, now: float) -> float:
    f = st.job_f[0, j]
    done = f[J_SIZE] - f[J_REM]
    if st.job_i[0, j, J_HPOS] >= 0:
        done += now - f[J_START]
    rem = f[J_EST] - done
    return rem if rem > 0.0 else 0.0


def snapshot(sim: MSJSimulation) -> tuple[float, list[Job], list[Job]]:
    """(now, running jobs, waiting jobs in arrival order) as the scheduler sees them."""
    st = sim.state
    now = float(st.sys_f[0, T_NOW])
    need = sim.model.needs
    running = [Job(int(j), int(need[st.job_i[0, j, J_CLS]]), 0.0, _estimated_end(st, j, now), 0.0)
               for j in st.heap[0, :st.sys_i[0, S_HEAPN]]]
    waiting = []
    keeps = st.job_f.shape[2] > J_RES  # reservations are conservative backfilling's own entries (EASY keeps none)
    for c in range(sim.model.num_classes):
        j = st.cls_i[0, c, C_BOUND]
        while j >= 0:
            res = float(st.job_f[0, j, J_RES]) if keeps else float("inf")
            waiting.append((int(st.job_i[0, j, J_SEQ]), Job(int(j), int(need[c]), _estimated_remaining(st, j, now),
                                                             0.0, res)))
            j = st.job_i[0, j, J_NEXT]
    return now, running, [job for _, job in sorted(waiting, key=lambda x: x[0])]


def easy_shadow(now: float, running: list[Job], free: int, need: int) -> tuple[float, int]:
    """The head's reservation: (shadow time, extra servers)."""
    avail = free
    for t in sorted({r.end for r in running}):
        avail += sum(r.need for r in running if r.end == t)
        if avail >= need:
            return t, avail - need
    raise AssertionError("the head never fits")


def easy_reference(n: int, now: float, running: list[Job], waiting: list[Job]) -> list[int]:
    """EASY (Mu'alem & Feitelson §2): the slots started, in order."""
    running, waiting = list(running), list(waiting)
    free = n - sum(r.need for r in running)
    started = []
    while waiting and waiting[0].need <= free:  # FCFS while the head fits
        job = waiting.pop(0)
        started.append(job.slot)
        free -= job.need
        running.append(dataclasses.replace(job, end=now + job.rem))
    if not waiting or not any(w.need <= free for w in waiting[1:]):
        return started
    shadow, extra = easy_shadow(now, running, free, waiting[0].need)
    for job in waiting[1:]:
        if free == 0:
            break
        if job.need > free:
            continue
        if now + job.rem <= shadow:
            started.append(job.slot)
            free -= job.need
        elif job.need <= extra:
            started.append(job.slot)
            free -= job.need
            extra -= job.need
    return started


def _free_at(n: int, intervals: list[tuple[float, float, int]], s: float) -> int:
    return n - sum(m for t0, t1, m in intervals if t0 <= s < t1)


def _earliest(n: int, now: float, intervals: list[tuple[float, float, int]], m: int, d: float) -> float:
    points = sorted({now} | {t for t0, t1, _ in intervals for t in (t0, t1) if t >= now})
    for t in points:
        if all(_free_at(n, intervals, s) >= m for s in [t] + [p for p in points if t < p < t + d]):
            return t
    raise AssertionError("no place in the profile")


def conservative_reference(n: int, now: float, running: list[Job], waiting: list[Job]
                           ) -> tuple[list[int], dict[int, float]]:
    """Conservative backfilling (Mu'alem & Feitelson §2): (slots started, every waiting job's new reservation)."""
    intervals: dict[object, tuple[float, float, int]] = {}
    for r in running:
        if r.end > now:
            intervals[("run", r.slot)] = (now, r.end, r.need)
    res = {}
    for w in waiting:
        if w.res < np.inf:
            res[w.slot] = max(w.res, now)
            if w.rem > 0:
                intervals[w.slot] = (res[w.slot], res[w.slot] + w.rem, w.need)
    free = n - sum(r.need for r in running)
    started = []
    for w in waiting:  # compress in arrival order
        intervals.pop(w.slot, None)
        r = _earliest(n, now, list(intervals.values()), w.need, w.rem) if w.rem > 0 else now
        if w.rem > 0:
            intervals[w.slot] = (r, r + w.rem, w.need)
        res[w.slot] = r
        if r == now and w.need <= free:
            started.append(w.slot)
            free -= w.need
    return started, res


# ==================================================================================================== event driver
MODELS = {
    "three-needs": model(8, 1.6, exp_class("a", 1, 0.5), exp_class("b", 3, 0.3), exp_class("c", 6, 0.2)),
    "shared-need": model(6, 1.0, exp_class("a", 1, 0.4), exp_class("b", 2, 0.3, rate=0.5), exp_class("c", 2, 0.1),
                         exp_class("d", 5, 0.2, rate=2.0)),
}
LAWS = {
    "exact": EstimateLaw(),
    "double": EstimateLaw("factor", 2.0, 2.0),
    "uniform-1-5": EstimateLaw("uniform", 1.0, 5.0),
    "under": EstimateLaw("uniform", 0.3, 2.0, allow_underestimate=True),
}


def by_hand(sim: MSJSimulation, m, events: int, seed: int):
    """Drive ``sim`` through ``events`` arrivals and completions by hand (Poisson arrivals, true completion times);
    after each event (invariants checked) yield ``(now, running, waiting, started)``: the time, the jobs running and
    waiting just before the kernel decided, and the slots it started."""
    gen = np.random.default_rng(seed)
    t_arrival = gen.exponential(1 / m.arrival_rate)
    for _ in range(events):
        st = sim.state
        serving = [int(j) for j in st.heap[0, :st.sys_i[0, S_HEAPN]]]
        done = min(serving, key=lambda j: st.job_f[0, j, J_DONE], default=-1)
        if done >= 0 and st.job_f[0, done, J_DONE] <= t_arrival:
            st.sys_f[0, T_NOW] = st.job_f[0, done, J_DONE]
            now, running, waiting = snapshot(sim)
            running = [r for r in running if r.slot != done]
            sim.complete(done)
        else:
            st.sys_f[0, T_NOW] = t_arrival
            now, running, waiting = snapshot(sim)
            c = int(gen.choice(m.num_classes, p=m.probabilities))
            slot = sim.arrive(c, float(gen.exponential(m.classes[c].service.mean)))
            waiting.append(Job(slot, int(m.needs[c]), float(sim.state.job_f[0, slot, J_EST]), 0.0, np.inf))
            t_arrival = now + gen.exponential(1 / m.arrival_rate)
        sim.check()
        yield now, running, waiting, {w.slot for w in waiting} & {j for j, _, on in sim.jobs() if on}


def drive(policy: str, m, law: EstimateLaw, events: int, seed: int, on_event=None) -> MSJSimulation:
    """Run ``events`` arrivals and completions by hand (Poisson arrivals, true completion times), checking the kernel's
    decisions against the reference after every event; ``on_event(sim, started)`` is called after each."""
    m = dataclasses.replace(m, estimate=law)
    sim = MSJSimulation(m, POLICIES[policy], RunConfig(debug=True), rng.spawn_states(seed, 1)[0])
    n = m.servers
    for now, running, waiting, started in by_hand(sim, m, events, seed):
        if policy == "easy-backfilling":
            expected = easy_reference(n, now, running, waiting)
            assert started == set(expected), (now, started, expected)
        else:
            expected, res = conservative_reference(n, now, running, waiting)
            assert started == set(expected), (now, started, expected)
            got = {w.slot: float(sim.state.job_f[0, w.slot, J_RES]) for w in waiting}
            assert got == res, (now, got, res)
        if on_event:
            on_event(sim, started)
    return sim


@pytest.mark.parametrize("law", list(LAWS))
@pytest.mark.parametrize("scenario", list(MODELS))
@pytest.mark.parametrize("policy", ["easy-backfilling", "conservative-backfilling"])
def test_kernel_matches_the_reference_decision_for_decision(policy, scenario, law):
    drive(policy, MODELS[scenario], LAWS[law], events=1500, seed=11)


class _Reservations:
    """Records each job's reservations (by arrival sequence number) and start time over a driven run."""

    def __init__(self, policy: str) -> None:
        self.policy = policy
        self.last: dict[int, float] = {}
        self.first: dict[int, float] = {}
        self.checked = 0

    def __call__(self, sim: MSJSimulation, started: set[int]) -> None:
        st = sim.state
        now, running, waiting = snapshot(sim)
        for j in started:
            seq = int(st.job_i[0, j, J_SEQ])
            if seq in self.last:
                assert now <= self.last[seq] and now <= self.first[seq], \
                    f"job {seq}: start delayed to {now}, after its reservation {self.last[seq]}"
                self.checked += 1
                del self.last[seq]
        if self.policy == "easy-backfilling":
            if not waiting:
                return
            free = sim.model.servers - sum(r.need for r in running)
            head = waiting[0]
            if head.need <= free:
                return
            shadow, _ = easy_shadow(now, running, free, head.need)
            items = [(int(st.job_i[0, head.slot, J_SEQ]), shadow)]
        else:
            items = [(int(st.job_i[0, w.slot, J_SEQ]), w.res) for w in waiting]
        for seq, r in items:
            assert r <= self.last.get(seq, np.inf), f"job {seq}: reservation {self.last[seq]} delayed to {r}"
            self.last[seq] = r
            self.first.setdefault(seq, r)


def test_conservative_follows_the_reference_when_over_estimates_move_reservations_in_cascades():
    """24 servers, six needs, estimates ×U[1, 5] at load 0.85: most completions come before their estimates and
    the reservations behind them move earlier in cascades (the compression of ``conservative_backfilling`` that
    places again only the jobs that can move). After every event the starts and every reservation equal the
    reference's; the run must see many reservations move to a later time than now (not only jobs starting)."""
    classes = [exp_class("a", 1, 0.35), exp_class("b", 2, 0.2), exp_class("c", 5, 0.15), exp_class("d", 8, 0.12),
               exp_class("e", 13, 0.1, rate=0.5), exp_class("f", 24, 0.08)]
    work = sum(c.probability * c.need * c.service.mean for c in classes)
    m = model(24, 0.85 * 24 / work, *classes)
    moved = []

    def count_moves(sim, started):
        st = sim.state
        now = float(st.sys_f[0, T_NOW])
        for j, (seq, res) in list(last.items()):
            if st.job_i[0, j, J_SEQ] == seq and st.job_i[0, j, J_HPOS] < 0 and now < st.job_f[0, j, J_RES] < res:
                moved.append(seq)
        last.clear()
        for _, job in [(0, w) for w in snapshot(sim)[2]]:
            last[job.slot] = (int(st.job_i[0, job.slot, J_SEQ]), float(st.job_f[0, job.slot, J_RES]))

    last: dict[int, tuple[int, float]] = {}
    drive("conservative-backfilling", m, LAWS["uniform-1-5"], events=1200, seed=23, on_event=count_moves)
    assert len(moved) > 100


@pytest.mark.parametrize("law", ["exact", "double", "uniform-1-5"])
@pytest.mark.parametrize("policy", ["easy-backfilling", "conservative-backfilling"])
def test_reservations_are_never_delayed(policy, law):
    """EASY: while a job is the blocked head, its shadow time never moves later and it starts by it; conservative:
    no waiting job's reservation ever moves later, and each job starts by its first reservation."""
    for scenario in MODELS:
        record = _Reservations(policy)
        drive(policy, MODELS[scenario], LAWS[law], events=1500, seed=5, on_event=record)
        assert record.checked > 20


def test_underestimates_can_delay_a_reservation():
    """With estimates below durations a job runs past its estimate and the reservations planned on its servers slip
    (the documented exception); the kernel still follows the reference."""
    record = _Reservations("conservative-backfilling")
    with pytest.raises(AssertionError, match="delayed"):
        drive("conservative-backfilling", MODELS["three-needs"], LAWS["under"], events=3000, seed=5,
              on_event=record)


# ==================================================================================================== limits and gains
def _same_run(scenario: str, a, b, jobs: int = 10_000) -> None:
    ra = evaluate(load_scenario(scenario), a, reps=2, jobs=jobs, seed=3, references=False)
    rb = evaluate(load_scenario(scenario), b, reps=2, jobs=jobs, seed=3, references=False)
    assert ra.events == rb.events
    assert ra.replications == rb.replications


ONE_NEED = """\
servers = 8
load = 0.8
[[classes]]
name = "exp"
need = 2
probability = 0.6
service = { dist = "exp", rate = 1.0 }
[[classes]]
name = "h2"
need = 2
probability = 0.4
service = { dist = "hyperexp", mean = 2.0, scv = 6.0 }
"""


@pytest.mark.parametrize("policy", ["easy-backfilling", "conservative-backfilling"])
def test_one_need_with_exact_estimates_is_fcfs(policy, tmp_path):
    """All jobs need the same servers: a job that does not fit now blocks every later one, so nothing backfills and
    both are FCFS bit for bit (also with two classes of that need, and on the single-class example)."""
    path = tmp_path / "one-need.toml"
    path.write_text(ONE_NEED)
    _same_run(str(path), policy, "fcfs")
    _same_run(str(EXAMPLES / "single_class.toml"), policy, "fcfs")


def _response(scenario: str, policy: str, reps: int = 6, jobs: int = 20_000):
    r = evaluate(load_scenario(scenario), policy, reps=reps, jobs=jobs, seed=2024, references=False)
    assert r.stable
    return r.metrics["response_time"]


def test_both_beat_fcfs_on_two_classes(tmp_path):
    """Need 1 and need 8 on 8 servers at load 0.5: small jobs fill the servers a blocked big job waits for; both
    backfilling policies cut FCFS's mean response time (95 % CIs apart)."""
    path = _two_class(tmp_path)
    fcfs = _response(path, "fcfs")
    for policy in ("easy-backfilling", "conservative-backfilling"):
        r = _response(path, policy)
        assert r.mean + r.ci95 < fcfs.mean - fcfs.ci95, (policy, r, fcfs)


# ==================================================================================================== estimates
def test_estimates_do_not_touch_the_job_stream(tmp_path):
    """A policy that ignores estimates gives the same run bit for bit whatever the estimate law (the estimate
    stream is separate), and exact estimates equal no ``estimate`` key."""
    plain = _two_class(tmp_path)
    for estimate in ('estimate = "exact"', "estimate = { factor = 3.0 }",
                     'estimate = { factor = { dist = "uniform", low = 1, high = 5 } }'):
        _same_run(_two_class(tmp_path, estimate=estimate), "first-fit", "first-fit")
        ra = evaluate(load_scenario(plain), "first-fit", reps=2, jobs=5_000, seed=3, references=False)
        rb = evaluate(load_scenario(_two_class(tmp_path, estimate=estimate)), "first-fit", reps=2, jobs=5_000,
                      seed=3, references=False)
        assert ra.replications == rb.replications
    ra = evaluate(load_scenario(plain), "easy-backfilling", reps=2, jobs=5_000, seed=3, references=False)
    rb = evaluate(load_scenario(_two_class(tmp_path, estimate='estimate = "exact"')), "easy-backfilling", reps=2,
                  jobs=5_000, seed=3, references=False)
    assert ra.replications == rb.replications


def test_random_estimates_are_reproducible_and_bounded():
    """Uniform factors: the same seed gives the same estimates; every estimate lies in [low, high] × duration."""
    m = dataclasses.replace(MODELS["three-needs"], estimate=EstimateLaw("uniform", 1.0, 5.0))
    runs = []
    for _ in range(2):
        sim = MSJSimulation(m, POLICIES["fcfs"], RunConfig(), rng.spawn_states(4, 1)[0])
        slots = [sim.arrive(0, 1.0 + i) for i in range(50)]
        est = np.array([sim.state.job_f[0, j, J_EST] for j in slots])
        size = np.array([sim.state.job_f[0, j, J_SIZE] for j in slots])
        assert np.all(est >= size) and np.all(est <= 5.0 * size) and len(set(est / size)) == 50
        runs.append(est)
    assert np.array_equal(runs[0], runs[1])


@pytest.mark.parametrize("estimate, key, message", [
    ("estimate = { factor = 0.5 }", "estimate.factor", "allow_underestimate"),
    ("estimate = { factor = -1.0, allow_underestimate = true }", "estimate.factor", r"\(0, inf\)"),
    ('estimate = { factor = { dist = "uniform", low = 3, high = 2 } }', "estimate.factor.high", ">= low = 3"),
    ('estimate = { factor = { dist = "lognormal", high = 2 } }', "estimate.factor.dist", "'uniform'"),
    ('estimate = { factor = { dist = "uniform" } }', "estimate.factor.high", "missing"),
    ("estimate = { factr = 2 }", "estimate.factr", "valid keys"),
    ('estimate = "requested"', "estimate", "'exact'"),
    ("estimate = 2", "estimate", "factor"),
    ('estimate = { factor = 2, allow_underestimate = "yes" }', "estimate.allow_underestimate", "true or false"),
])
def test_estimate_errors_name_the_key(estimate, key, message, tmp_path):
    with pytest.raises(ScenarioError, match=rf"{key}.*{message}"):
        load_scenario(_two_class(tmp_path, estimate=estimate))


def test_estimate_laws_parse(tmp_path):
    def law(text):
        return load_scenario(_two_class(tmp_path, estimate=text)).model.estimate

    assert law("") == EstimateLaw() == law('estimate = "exact"') == law("estimate = { factor = 1 }")
    assert law("estimate = { factor = 2.5 }") == EstimateLaw("factor", 2.5, 2.5)
    assert law('estimate = { factor = { dist = "uniform", high = 4 } }') == EstimateLaw("uniform", 1.0, 4.0)
    assert law("estimate = { factor = 0.5, allow_underestimate = true }") == EstimateLaw("factor", 0.5, 0.5, True)
    scenario = load_scenario(_two_class(tmp_path, estimate="estimate = { factor = 2.0 }"),
                             {"estimate.factor": 3.0})
    assert scenario.model.estimate == EstimateLaw("factor", 3.0, 3.0)


def test_swf_requested_time_is_the_estimate():
    """SWF field 9: the estimate where known (even below the run time: tests/test_requested_times.py), else the run
    time."""
    trace = read_trace(EXAMPLES / "traces" / "sample.swf")
    rows = [line.split() for line in (EXAMPLES / "traces" / "sample.swf").read_text().splitlines()
            if line.strip() and not line.startswith(";")]
    rows = [r for r in rows if float(r[3]) > 0 and (float(r[4]) > 0 or float(r[7]) > 0)]  # field 5 -1: field 8
    run = np.array([float(r[3]) for r in rows])
    req = np.array([float(r[8]) for r in rows])
    order = np.argsort([float(r[1]) for r in rows], kind="stable")
    run, req = run[order], req[order]
    assert np.array_equal(trace.duration, run)
    assert np.array_equal(trace.estimate, np.where(req > 0, req, run))
    assert np.all(trace.estimate >= trace.duration) and np.any(trace.estimate > trace.duration)
    scenario = load_scenario(str(EXAMPLES / "traces" / "sample_trace.toml"))
    assert scenario.model.estimate.kind == "requested"
    exact = load_scenario(str(EXAMPLES / "traces" / "sample_trace.toml"), {"estimate": "exact"})
    assert exact.model.estimate.kind == "exact"
    with_requested = evaluate(scenario, "easy-backfilling", reps=1, jobs=900, warmup=0, seed=1, references=False)
    with_exact = evaluate(exact, "easy-backfilling", reps=1, jobs=900, warmup=0, seed=1, references=False)
    assert with_requested.replications != with_exact.replications


@pytest.mark.parametrize("estimate, expected", [
    ("exact", lambda trace: trace.duration),
    ({"factor": 2.0}, lambda trace: 2.0 * trace.duration),
    ("requested", lambda trace: trace.estimate),
])
def test_per_job_requested_time_is_the_estimate_the_scheduler_used(estimate, expected):
    """A replay's per-job ``requested_time`` (SWF field 9 of --per-job) is the estimate the scheduler planned with:
    with ``estimate = "exact"`` the run time, not the trace file's requested time."""
    scenario = load_scenario(str(EXAMPLES / "traces" / "sample_trace.toml"), {"estimate": estimate})
    trace = scenario.model.trace
    assert np.any(trace.estimate != trace.duration)  # the file's requested times differ from the run times
    per_job = evaluate(scenario, "easy-backfilling", reps=1, seed=1, references=False).per_job
    order = np.argsort(per_job["job"], kind="stable")
    assert np.array_equal(per_job["requested_time"][order], expected(trace)[np.argsort(trace.ident, kind="stable")])


def test_per_job_requested_time_of_a_random_factor_lies_in_its_range():
    """With a random factor f ~ Uniform[1, 3], each job's estimate is f × its run time: in [run, 3 run], not all
    equal to either end."""
    scenario = load_scenario(str(EXAMPLES / "traces" / "sample_trace.toml"),
                             {"estimate": {"factor": {"dist": "uniform", "low": 1, "high": 3}}})
    per_job = evaluate(scenario, "easy-backfilling", reps=1, seed=1, references=False).per_job
    ratio = per_job["requested_time"] / per_job["duration"]
    assert np.all((ratio >= 1.0) & (ratio <= 3.0)) and 1.0 < ratio.mean() < 3.0 and len(np.unique(ratio)) > 10


# ==================================================================================================== the policies
def test_declarations_and_agent_forms():
    for name in ("easy-backfilling", "conservative-backfilling"):
        policy = POLICIES[name]
        assert not policy.preemptive and policy.schedule is not None and "Mu'alem & Feitelson" in policy.source
        from msjgym.systems.msj.env import MSJEnv
        with pytest.raises(PolicyError, match="has no agent form.*runtime estimate"):
            policy.agent(MSJEnv(scenario="finite-skip-fig6", mode="start").spec_)


def test_the_command_line(tmp_path, capsys):
    from msjgym.cli import main

    path = _two_class(tmp_path, 0.6)
    for policy in ("easy-backfilling", "conservative-backfilling"):
        assert main(["evaluate", path, "--policy", policy, "--reps", "2", "--jobs", "20000", "--json",
                     "--no-progress"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["policy"] == policy and out["metrics"]["response_time"]["mean"] > 1.0


THREE_CLASS = """\
servers = 8
load = 0.5
{estimate}
[[classes]]
need = 1
probability = 0.6
service = {{ dist = "exp", rate = 1.0 }}
[[classes]]
need = 3
probability = 0.3
service = {{ dist = "hyperexp", mean = 1.0, scv = 4.0 }}
[[classes]]
need = 8
probability = 0.1
service = {{ dist = "exp", rate = 1.0 }}
"""


def _paired(tmp_path, policy: str, estimate: str) -> tuple[float, float]:
    """Mean and 95 % half-width of (response time with ``estimate``) − (with exact estimates), paired by replication
    (the same jobs: the estimates come from their own stream)."""
    from scipy import stats

    times = []
    for i, text in enumerate(("", estimate)):
        path = tmp_path / f"three-{i}.toml"
        path.write_text(THREE_CLASS.format(estimate=text))
        r = evaluate(load_scenario(str(path)), policy, reps=8, jobs=30_000, seed=2024, references=False)
        times.append(np.array([rep["response_time"] for rep in r.replications]))
    d = times[1] - times[0]
    return float(d.mean()), float(stats.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size))


@pytest.mark.parametrize("policy", ["easy-backfilling", "conservative-backfilling"])
def test_over_estimation_directions(policy, tmp_path):
    """docs/modelling-choices.md#backfilling-overestimation: doubling every estimate lowers the mean response time
    (the improvement from over-estimation Mu'alem & Feitelson report), while random factors f ~ U[1, 20] raise it
    (their improvement with random factors is not reproduced on this workload)."""
    mean, half = _paired(tmp_path, policy, "estimate = { factor = 2.0 }")
    assert mean + half < 0, (mean, half)
    mean, half = _paired(tmp_path, policy, 'estimate = { factor = { dist = "uniform", high = 20 } }')
    assert mean - half > 0, (mean, half)
