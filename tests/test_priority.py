"""The priority-plus-backfilling family (``policies/msj/priority.py``): ``priority`` with ``order`` x ``backfill``.

It has no agent form (the observation shows no estimates, and SJF may start a younger job of a class), so its twins
are (1) the built-ins it generalises, bit for bit: ``order = "fcfs"`` with ``backfill`` none / easy / conservative
is ``fcfs`` / ``easy-backfilling`` / ``conservative-backfilling``; and (2) plain-Python statements of every order and
rule, checked decision for decision on random event sequences (the references of ``tests/test_backfilling.py``, given
the waiting jobs in priority order). Then one schedule per rule worked out by hand, in the docstring.
"""
from __future__ import annotations

import dataclasses
import math

import pytest

from msjgym.api import load_scenario
from msjgym.core import rng
from msjgym.errors import PolicyError
from msjgym.evaluate.evaluator import evaluate
from msjgym.policies.msj import POLICIES
from msjgym.systems.msj.simulation import MSJSimulation, RunConfig
from msjgym.systems.msj.backfilling import J_RES
from msjgym.systems.msj.state import DONE, J_ARR, J_EST, J_SEQ
from test_backfilling import (
    EXAMPLES, LAWS, MODELS, Job, _two_class, by_hand, conservative_reference, easy_reference, easy_shadow)

ORDERS = ("fcfs", "sjf", "saf", "f1", "wfp3", "unicep")
RULES = ("none", "easy", "conservative", "easy-narrow")
PRIORITY = POLICIES["priority"]


# ==================================================================================================== twins
@pytest.mark.parametrize("rule, builtin", [("none", "fcfs"), ("easy", "easy-backfilling"),
                                           ("conservative", "conservative-backfilling")])
def test_fcfs_order_is_the_builtin_bit_for_bit(rule, builtin, tmp_path):
    """On a Poisson scenario with random over-estimates and on the sample SWF trace (requested times)."""
    policy = PRIORITY.bind(order="fcfs", backfill=rule)
    scenarios = [_two_class(tmp_path, 0.7, 'estimate = { factor = { dist = "uniform", low = 1, high = 4 } }'),
                 str(EXAMPLES / "traces" / "sample_trace.toml")]
    for scenario in scenarios:
        sc = load_scenario(scenario)
        trace = sc.model.trace is not None
        run = dict(reps=1, jobs=len(sc.model.trace), warmup=0) if trace else dict(reps=2, jobs=5_000)
        ra = evaluate(sc, builtin, seed=3, references=False, **run)
        rb = evaluate(sc, policy, seed=3, references=False, **run)
        assert ra.events == rb.events
        assert ra.replications == rb.replications


# ==================================================================================================== references
def key(order: str, est: float, need: int, arrival: float, seq: int, now: float) -> tuple[float, int]:
    """The priority of a waiting job (smaller first), as the module docstring defines it."""
    if order == "fcfs":
        return float(seq), seq
    if order == "sjf":
        return est, seq
    if order == "saf":
        return est * need, seq
    if order == "f1":
        return math.log10(max(est, 1.0)) * need + 870.0 * math.log10(max(arrival, 1.0)), seq
    w = now - arrival
    if order == "wfp3":
        x = w / est
        return -(x * x * x) * need, seq
    return -(w + 1e-15) / (math.log2(need + 1e-15) * est), seq


def in_priority_order(sim: MSJSimulation, order: str, now: float, waiting: list[Job]) -> list[Job]:
    st = sim.state
    return sorted(waiting, key=lambda w: key(order, float(st.job_f[0, w.slot, J_EST]), w.need,
                                             float(st.job_f[0, w.slot, J_ARR]), int(st.job_i[0, w.slot, J_SEQ]),
                                             now))


class Narrow:
    """RLScheduler's rule, with its memory: the head chosen in priority order keeps its shadow time until it starts;
    meanwhile jobs (in arrival order) that fit and end strictly before the shadow time start."""

    def __init__(self) -> None:
        self.head: int | None = None  # arrival sequence number
        self.shadow = 0.0

    def __call__(self, sim, order, n, now, running, waiting) -> list[int]:
        st = sim.state
        seq = {w.slot: int(st.job_i[0, w.slot, J_SEQ]) for w in waiting}
        ordered = in_priority_order(sim, order, now, waiting)
        left = list(waiting)
        free = n - sum(r.need for r in running)
        started = []
        while True:
            head = next((w for w in left if seq[w.slot] == self.head), None)
            if head is None:
                if not left:
                    self.head = None
                    return started
                head = next(w for w in ordered if w in left)
            if head.need <= free:
                started.append(head.slot)
                free -= head.need
                left.remove(head)
                running = running + [dataclasses.replace(head, end=now + head.rem)]
                self.head = None
                continue
            if self.head != seq[head.slot]:
                self.head = seq[head.slot]
                self.shadow, _ = easy_shadow(now, running, free, head.need)
            break
        for w in left:  # arrival order
            if w is not head and w.need <= free and now + w.rem < self.shadow:
                started.append(w.slot)
                free -= w.need
        return started


def drive(order: str, rule: str, m, law, events: int, seed: int, capacity: int = 1024) -> MSJSimulation:
    """Random arrivals and true completions, by hand; after every event the kernel's starts (and, for conservative,
    every reservation) must equal the reference's. Returns the simulation (``capacity``: its initial job slots)."""
    m = dataclasses.replace(m, estimate=law)
    sim = MSJSimulation(m, PRIORITY.bind(order=order, backfill=rule), RunConfig(debug=True),
                        rng.spawn_states(seed, 1)[0], capacity=capacity)
    narrow = Narrow()
    for now, running, waiting, started in by_hand(sim, m, events, seed):
        ordered = in_priority_order(sim, order, now, waiting)
        n = m.servers
        if rule == "none":
            free = n - sum(r.need for r in running)
            expected = []
            for w in ordered:
                if w.need > free:
                    break
                expected.append(w.slot)
                free -= w.need
        elif rule == "easy":
            expected = easy_reference(n, now, running, ordered)
        elif rule == "conservative":
            expected, res = conservative_reference(n, now, running, ordered)
            got = {w.slot: float(sim.state.job_f[0, w.slot, J_RES]) for w in waiting}
            assert got == res, (now, got, res)
        else:
            expected = narrow(sim, order, n, now, running, waiting)
        assert started == set(expected), (order, rule, now, started, expected)
    return sim


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("order", ORDERS)
def test_kernel_matches_the_reference_decision_for_decision(order, rule):
    for scenario, law in (("three-needs", "uniform-1-5"), ("shared-need", "under")):
        drive(order, rule, MODELS[scenario], LAWS[law], events=600, seed=17)


@pytest.mark.parametrize("rule", ("conservative", "easy-narrow"))
@pytest.mark.parametrize("order", ("sjf", "f1"))
def test_waiting_list_kept_in_a_static_order_survives_grown_job_storage(order, rule):
    """Two job slots to start with: the storage grows while jobs wait, the kept waiting list (in J_LINK, rebuilt from
    the jobs in a grown state) must still give the reference's decisions."""
    sim = drive(order, rule, MODELS["three-needs"], LAWS["uniform-1-5"], events=300, seed=5, capacity=2)
    assert sim.state.job_i.shape[1] > 2


# ==================================================================================================== by hand
HAND = """arrival_time,need,duration
0,3,10
1,4,5
2,1,20
3,2,2
4,1,3
"""


def _starts(tmp_path, order: str, rule: str) -> list[float]:
    (tmp_path / "hand.csv").write_text(HAND)
    (tmp_path / "hand.toml").write_text('servers = 4\narrivals = { trace = "hand.csv", scale_servers = 4 }\n')
    m = load_scenario(str(tmp_path / "hand.toml")).model
    sim = MSJSimulation(m, PRIORITY.bind(order=order, backfill=rule), RunConfig(jobs=5, warmup=0, batches=1,
                                                                              debug=True), rng.spawn_states(0, 1)[0])
    while sim.advance(0, 1000) != DONE:
        pass
    return [float(x) for x in sim.completion_times() - m.trace.duration]


@pytest.mark.parametrize("rule, expected", [
    ("none", [0, 13, 18, 10, 10]),
    ("easy", [0, 23, 3, 10, 10]),
    ("conservative", [0, 10, 15, 15, 4]),
    ("easy-narrow", [0, 10, 15, 15, 4]),
])
def test_sjf_schedules_worked_out_by_hand(rule, expected, tmp_path):
    """Four servers, exact estimates, SJF; jobs (arrival, need, duration): A (0, 3, 10), B (1, 4, 5), C (2, 1, 20),
    D (3, 2, 2), E (4, 1, 3). A starts at 0 and holds 3 servers until 10 in every case.

    none: strict priority, re-decided at every event. B (1 free) blocks; C, D, E queue behind the shorter head.
    At 10 the order is D(2) E(3) B(5) C(20): D and E start (1 server left), B blocks; at 13 (E ends, D ended at 12)
    B starts (ends 18); C starts at 18. Starts A0 B13 C18 D10 E10.

    easy: at 2 the head B gets shadow 10 with 0 extra; C (ends 22) may not backfill. At 3 D(2) becomes the head
    (SJF): shadow 10 (A's end frees 3 + 1 = 4), extra 4 - 2 = 2, so C (1 server) backfills into the extra servers
    at 3 (ends 23). At 4 no server is free. At 10: 3 free, D and E start, B blocks until C ends at 23.
    Starts A0 B23 C3 D10 E10: a reservation given to the head of the moment, not to the oldest job.

    conservative (compressed in SJF order, each job the earliest place among the others' reservations): B at 10
    (needs A's servers), C at 15 (1 server for 20 does not fit before B), D (placed first, with B and C where they
    are) at 15; at 4 E (1 server for 3) fits now in [4, 7): starts at 4. At 10 B's reservation is now: starts; at
    15 D and C start. Starts A0 B10 C15 D15 E4.

    easy-narrow (RLScheduler): B is the head from 1 with shadow 10 and keeps it though D is shorter; candidates in
    arrival order must end strictly before 10: C (22) no, D does not fit, E (4 + 3 = 7) starts at 4. At 10 B starts;
    the next head D gets shadow 15 (B's end); at 15 D and C start. Starts A0 B10 C15 D15 E4.
    """
    assert _starts(tmp_path, "sjf", rule) == expected


def test_narrow_uses_no_extra_servers_and_a_strict_shadow(tmp_path):
    """FCFS order. A (0, 3, 10) runs; B (1, 4, 5) is the head with shadow 10 and 0 extra; C (2, 1, 8) ends at exactly
    10: EASY backfills it (<= shadow), easy-narrow does not (< shadow) and C waits for B.
    EASY: C starts at 2; B at 10 (A and C end at 10). Narrow: B at 10, C at 15."""
    (tmp_path / "n.csv").write_text("arrival_time,need,duration\n0,3,10\n1,4,5\n2,1,8\n")
    (tmp_path / "n.toml").write_text('servers = 4\narrivals = { trace = "n.csv", scale_servers = 4 }\n')
    m = load_scenario(str(tmp_path / "n.toml")).model
    out = {}
    for rule in ("easy", "easy-narrow"):
        sim = MSJSimulation(m, PRIORITY.bind(order="fcfs", backfill=rule),
                            RunConfig(jobs=3, warmup=0, batches=1, debug=True), rng.spawn_states(0, 1)[0])
        while sim.advance(0, 100) != DONE:
            pass
        out[rule] = [float(x) for x in sim.completion_times() - m.trace.duration]
    assert out == {"easy": [0, 10, 2], "easy-narrow": [0, 10, 15]}


# ==================================================================================================== parameters
def test_bad_parameter_values_name_the_parameter():
    with pytest.raises(PolicyError, match="order = 'lifo'.*fcfs, sjf, saf, f1, wfp3, unicep"):
        PRIORITY.bind(order="lifo")
    with pytest.raises(PolicyError, match="backfill = 'aggressive'.*none, easy, conservative, easy-narrow"):
        PRIORITY.bind(backfill="aggressive")


def test_command_line_binds_order_and_backfill(capsys):
    from msjgym.cli import main
    code = main(["evaluate", str(EXAMPLES / "traces" / "sample_trace.toml"), "--policy", "priority",
                 "--param", "order=f1", "--param", "backfill=conservative", "--json"])
    out = capsys.readouterr().out
    assert code in (0, None)
    assert "priority(order=f1, backfill=conservative)" in out


# ==================================================================================================== F1's time origin
def _f1_starts(tmp_path, first_submit: int, window: tuple[int, int] | None = None, lead: bool = False
               ) -> list[float]:
    """Start times (run clock) under F1 without backfilling of a 2-processor trace whose first job is submitted at
    ``first_submit`` (SWF field 2): job 1 holds both processors for 100 s; job 2 (1 processor, requested 1000 s) is
    submitted 1 s after it, job 3 (2 processors, requested 10 s) 2 s after it. Counted from the first arrival
    (s = 1 and 2), F1 = log10(r)·n + 870·log10(s) puts job 2 first (3 + 0 < 2 + 261.9); counted from the file's
    submit times near 10^6, 870·log10(s) differs by 4e-4 between them and job 3 comes first (2 < 3). ``lead``: a
    1-second job submitted at 0 comes first in the file; ``window``: replay only jobs [start, start + count)."""
    from msjgym.systems.msj.simulation import MSJSimulation, RunConfig

    t0 = first_submit
    rows = [(t0, 100, 2, 100), (t0 + 1, 1000, 1, 1000), (t0 + 2, 10, 2, 10)]
    rows = ([(0, 1, 1, 1)] if lead else []) + rows
    lines = ["; MaxProcs: 2"] + [f"{k + 1} {s} -1 {r} {p} -1 -1 {p} {q} -1 1 -1 -1 -1 1 -1 -1 -1"
                                 for k, (s, r, p, q) in enumerate(rows)]
    (tmp_path / "f1.swf").write_text("\n".join(lines) + "\n")
    (tmp_path / "f1.toml").write_text('arrivals = { trace = "f1.swf" }\n')
    m = load_scenario(str(tmp_path / "f1.toml")).model
    if window is not None:
        m = dataclasses.replace(m, trace=m.trace.window(*window))
    sim = MSJSimulation(m, PRIORITY.bind(order="f1", backfill="none"),
                        RunConfig(jobs=len(m.trace), warmup=0, batches=1, debug=True), rng.spawn_states(0, 1)[0])
    while sim.advance(0, 10_000) != DONE:
        pass
    return [float(x) for x in sim.completion_times() - m.trace.duration]


def test_f1_orders_by_the_trace_files_submit_times(tmp_path):
    """The submit time of the file (docs/modelling-choices.md#f1-time-origin), not the time since the first arrival:
    with the first job at 10^6 s, job 3 starts before job 2; with the same trace submitted from 0, job 2 first."""
    assert _f1_starts(tmp_path, 1_000_000) == [0.0, 110.0, 100.0]
    assert _f1_starts(tmp_path, 0) == [0.0, 100.0, 1100.0]


def test_f1_keeps_the_files_submit_times_in_a_window(tmp_path):
    """A window is replayed from its own time 0, but F1 still sees the file's submit times: the three jobs after a
    lead job at 0 are scheduled alike in the whole replay and in their window (counted from the window's start, job 2
    would come first)."""
    whole = _f1_starts(tmp_path, 1_000_000, lead=True)
    assert whole[1:] == [1_000_000.0, 1_000_110.0, 1_000_100.0]
    assert _f1_starts(tmp_path, 1_000_000, window=(1, 3), lead=True) == [0.0, 110.0, 100.0]
