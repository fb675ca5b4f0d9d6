"""Trace replays report the replay: exact per-job values on a hand-computed schedule (FCFS, EASY and conservative
backfilling), windows with CIs across them, the HPC metrics, the size bands, the SWF reader's machine size and job
ids, and the Lublin–Feitelson workload model."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from msjgym.api import load_scenario
from msjgym.cli import main
from msjgym.systems.msj.trace.files import TraceError, read_trace
from msjgym.errors import MsjgymError
from msjgym.evaluate.evaluator import evaluate
from msjgym.systems.msj.trace import lublin
from msjgym.systems.msj.trace.replay import replay_metrics, size_bands
from msjgym.systems.msj.trace.windows import window_starts

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# (SWF job number, submit time, processors, run time): a 4-processor machine; requested times = run times (exact
# estimates), so every backfilling rule plans with the true run times.
JOBS = [(101, 0, 3, 10), (102, 1, 2, 10), (103, 2, 2, 10), (104, 3, 1, 20), (105, 4, 1, 2)]


def _swf(tmp_path: Path, jobs=JOBS, header: str = "; MaxProcs: 4") -> Path:
    lines = [header] + [f"{j} {t} -1 {r} {p} -1 -1 {p} {r} -1 1 -1 -1 -1 1 -1 -1 -1" for j, t, p, r in jobs]
    (tmp_path / "hand.swf").write_text("\n".join(lines) + "\n")
    (tmp_path / "hand.toml").write_text('arrivals = { trace = "hand.swf" }\n')
    return tmp_path / "hand.toml"


HAND = {
    # policy: completion times of jobs 101..105
    "fcfs": [10, 20, 20, 40, 22],
    "easy-backfilling": [10, 20, 30, 23, 12],
    "conservative-backfilling": [10, 20, 20, 40, 6],
}


@pytest.mark.parametrize("policy", list(HAND))
def test_a_hand_computed_schedule_is_reported_exactly(tmp_path, policy):
    """Five jobs on 4 processors (submit, processors, run time): J1 (0, 3, 10), J2 (1, 2, 10), J3 (2, 2, 10),
    J4 (3, 1, 20), J5 (4, 1, 2).

    FCFS (strict order): J1 runs [0, 10) leaving 1 processor; J2 needs 2 and blocks the queue until J1 ends; at 10 J2
    and J3 start ([10, 20)); at 20 J4 [20, 40) and J5 [20, 22). Completions 10, 20, 20, 40, 22.

    EASY (Lifka 1995): at 1 the head J2 gets the shadow time 10 (J1's end), with 4 − 2 = 2 extra processors then. At 3
    J4 (1 processor, 20 s) does not end by 10 but fits in the extra processors: it backfills, [3, 23). J5 arrives at 4
    with no processor free. At 10 J2 starts; the new head J3 (2) has shadow 20 (J2's end) and 1 extra processor; J5
    ends by 20: it backfills [10, 12). At 20 J3 starts, [20, 30). Completions 10, 20, 30, 23, 12.

    Conservative (Mu'alem & Feitelson 2001): every job is reserved on arrival at the earliest time that delays no
    reservation: J2 at 10, J3 at 10 (2 processors free beside J2 in [10, 20)), J4 at 20 (in [3, 10) one processor
    is free, but [10, 20) is full), J5 now, [4, 6) (one processor free until 10). Completions 10, 20, 20, 40, 6:
    J4 is not allowed EASY's backfill, which delays J3 by 10 s.

    Hand-computed metrics (τ = 10 s; bounded slowdown max(1, T / max(S, 10)); makespan = last completion − 0;
    utilization = Σ processors × run time / (4 × makespan), Σ = 30 + 20 + 20 + 20 + 2 = 92):

    ==============  ==========================  ==========================  ======================================
    policy          waits, mean                 responses, mean             bounded slowdowns, mean
    ==============  ==========================  ==========================  ======================================
    fcfs            0, 9, 8, 17, 16: 10         10, 19, 18, 37, 18: 20.4    1, 1.9, 1.8, 1.85, 1.8: 1.67
    easy            0, 9, 18, 0, 6: 6.6         10, 19, 28, 20, 8: 17       1, 1.9, 2.8, 1, 1: 1.54
    conservative    0, 9, 8, 17, 0: 6.8         10, 19, 18, 37, 2: 17.2     1, 1.9, 1.8, 1.85, 1: 1.51
    ==============  ==========================  ==========================  ======================================

    Makespans 40, 30, 40; utilizations 92/160 = 0.575, 92/120, 0.575.
    """
    expected = {
        "fcfs": (10.0, 20.4, 1.67, 40.0, 92 / 160),
        "easy-backfilling": (6.6, 17.0, 1.54, 30.0, 92 / 120),
        "conservative-backfilling": (6.8, 17.2, 1.51, 40.0, 92 / 160),
    }[policy]
    result = evaluate(load_scenario(str(_swf(tmp_path))), policy, seed=1)
    assert result.mode == "replay" and result.reps == 1
    np.testing.assert_allclose(result.per_job["completion_time"], HAND[policy], rtol=0, atol=1e-9)
    assert list(result.per_job["job"]) == [101, 102, 103, 104, 105]
    got = tuple(result.metrics[k].mean for k in ("waiting_time", "response_time", "bounded_slowdown", "makespan",
                                                "utilization"))
    assert got == pytest.approx(expected, rel=1e-12)
    assert all(math.isnan(est.ci95) for est in result.metrics.values())  # exact: no interval
    assert all(c.verdict == "consistent" for c in result.checks) and len(result.checks) == 3
    if policy == "fcfs":  # waits 0, 8, 9, 16, 17: the 95th percentile (linear) is 16 + 0.8 × 1
        assert result.metrics["waiting_time_p95"].mean == pytest.approx(16.8, rel=1e-12)


def test_the_cli_prints_exact_values_and_the_job_ids(tmp_path, capsys):
    scenario = _swf(tmp_path)
    per_job = tmp_path / "jobs.csv"
    assert main(["evaluate", str(scenario), "--policy", "easy-backfilling", "--per-job", str(per_job)]) == 0
    out = capsys.readouterr().out
    assert "exact replay of 5 trace jobs" in out and "no CI" in out and "±" not in out.split("checks")[0]
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines() if line.split()[:1] and
            line.split()[0] in ("waiting_time", "bounded_slowdown", "makespan", "utilization")}
    assert rows == {"waiting_time": "6.6", "bounded_slowdown": "1.54", "makespan": "30", "utilization": "0.7666667"}
    lines = per_job.read_text().splitlines()
    assert lines[0].startswith("job,arrival_time,need,duration,completion_time")
    assert [line.split(",")[0] for line in lines[1:]] == ["101", "102", "103", "104", "105"]


def test_a_replay_refuses_replications_and_points_at_windows(tmp_path):
    scenario = load_scenario(str(_swf(tmp_path)))
    with pytest.raises(MsjgymError, match="--windows N --window-jobs M"):
        evaluate(scenario, "fcfs", reps=3)
    assert evaluate(scenario, "fcfs", reps=1, seed=1).mode == "replay"  # --reps 1: the one replay
    with pytest.raises(MsjgymError, match="--windows and --window-jobs go together"):
        evaluate(scenario, "fcfs", windows=2)
    with pytest.raises(MsjgymError, match=r"--window-jobs 10: the trace has 5 jobs"):
        evaluate(scenario, "fcfs", windows=2, window_jobs=10)


def test_windows_are_replications_from_an_empty_machine_with_cis():
    """Each window is the exact replay of its jobs alone: its metrics equal those of a scenario holding only them."""
    scenario = load_scenario(str(EXAMPLES / "traces" / "sample_trace.toml"))
    result = evaluate(scenario, "easy-backfilling", windows=4, window_jobs=100, seed=7)
    assert result.mode == "windows" and result.reps == 4 and result.jobs == 100
    assert math.isfinite(result.metrics["waiting_time"].ci95) and result.metrics["waiting_time"].ci95 > 0
    starts = [s for s, _ in window_starts(len(scenario.model.trace), 4, 100, 7)]
    trace = scenario.model.trace
    for rep, start in zip(result.replications, starts):
        part = trace.window(start, 100)
        alone = evaluate(_with_trace(scenario, part), "easy-backfilling", seed=7)
        assert alone.metrics["waiting_time"].mean == pytest.approx(rep["waiting_time"], rel=1e-12)
        assert alone.metrics["makespan"].mean == pytest.approx(rep["makespan"], rel=1e-12)
    again = evaluate(scenario, "easy-backfilling", windows=4, window_jobs=100, seed=7)
    assert again.metrics["waiting_time"] == result.metrics["waiting_time"]


def _with_trace(scenario, trace):
    from dataclasses import replace

    return replace(scenario, model=replace(scenario.model, trace=trace))


def test_bounded_slowdown_threshold_reaches_every_multiserver_job_result():
    """τ far above every response time makes every bounded slowdown exactly 1; τ = 0 makes it T / S >= 1."""
    big = evaluate("one-and-n", "fcfs", reps=2, jobs=2000, seed=1, bsld_threshold=1e9)
    assert big.metrics["bounded_slowdown"].mean == 1.0
    small = evaluate("one-and-n", "fcfs", reps=2, jobs=2000, seed=1, bsld_threshold=0.0)
    assert small.metrics["bounded_slowdown"].mean > 1.0
    assert small.metrics["response_time"] == big.metrics["response_time"]  # the threshold changes nothing else
    with pytest.raises(MsjgymError, match="--bsld-threshold"):
        evaluate("one-and-n", "fcfs", reps=2, jobs=2000, seed=1, bsld_threshold=-1.0)


def test_replay_metrics_by_hand():
    arrival = np.array([0.0, 0.0, 5.0])
    need = np.array([1, 2, 1])
    duration = np.array([4.0, 20.0, 1.0])
    completion = np.array([4.0, 20.0, 30.0])
    m = replay_metrics(arrival, need, duration, completion, servers=2, warmup=1, tau=10.0)
    # measured jobs 2 and 3: responses 20, 25; waits 0, 24; bsld max(1, 20/20) = 1, max(1, 25/10) = 2.5
    assert (m["response_time"], m["waiting_time"], m["bounded_slowdown"]) == (22.5, 12.0, 1.75)
    assert m["makespan"] == 30.0 and m["utilization"] == pytest.approx((4 + 40 + 1) / 60)
    assert m["queueing_probability"] == 0.5


def test_size_bands_group_many_sizes_into_powers_of_two():
    labels, column = size_bands(np.array([1, 2, 3, 4, 5]))
    assert labels == ["need1", "need2", "need3", "need4", "need5"] and list(column) == [0, 1, 2, 3, 4]
    needs = np.array([1, 2, 3, 4, 5, 8, 9, 16, 17, 100, 128, 129, 256])
    labels, column = size_bands(needs)
    assert labels == ["need1", "need2", "need3-4", "need5-8", "need9-16", "need17-32", "need65-128", "need129-256"]
    assert [labels[c] for c in column] == ["need1", "need2", "need3-4", "need3-4", "need5-8", "need5-8", "need9-16",
                                           "need9-16", "need17-32", "need65-128", "need65-128", "need129-256",
                                           "need129-256"]
    assert size_bands(np.array([3, 100]), banded=True)[0] == ["need3-4", "need65-128"]  # a window of a banded trace


def test_every_window_of_a_banded_trace_has_banded_columns():
    """A window holding few sizes keeps the whole trace's size bands, so the windows' columns line up."""
    scenario = load_scenario(str(EXAMPLES / "lublin_256.toml"))
    result = evaluate(scenario, "fcfs", windows=3, window_jobs=10, seed=3)
    columns = {name[name.index("["):] for name in result.metrics if "[" in name}
    assert columns and all("-" in c or c in ("[need1]", "[need2]") for c in columns)


def test_the_machine_size_comes_from_the_header_or_the_scenario(tmp_path):
    path = tmp_path / "hand.swf"
    _swf(tmp_path, header="; MaxNodes: 2")
    trace = read_trace(path, processors_per_node=4)
    assert trace.machine == 8 and trace.notes == []
    trace = read_trace(path)
    assert trace.machine == 3 and any("MaxNodes 2 × 1 processor per node" in n for n in trace.notes)
    assert any("below the largest allocation 3; using 3" in n for n in trace.notes)
    _swf(tmp_path, header="; Note: no size")
    with pytest.raises(TraceError, match="give the traced machine's processors as servers = N"):
        read_trace(path)
    assert read_trace(path, servers=4).machine == 4
    (tmp_path / "s.toml").write_text('servers = 4\narrivals = { trace = "hand.swf" }\n')
    assert load_scenario(str(tmp_path / "s.toml")).model.servers == 4


def test_unknown_allocations_use_the_requested_processors_and_unusable_jobs_are_counted(tmp_path):
    jobs = [(1, 0, 2, 5), (2, 1, 1, 3), (3, 2, 1, 4), (4, 3, 2, 6)]
    _swf(tmp_path, jobs)
    lines = (tmp_path / "hand.swf").read_text().splitlines()
    fields = lines[2].split()
    fields[4] = "-1"  # job 2: allocation unknown, requested 1
    lines[2] = " ".join(fields)
    fields = lines[3].split()
    fields[3] = "-1"  # job 3: run time unknown
    lines[3] = " ".join(fields)
    (tmp_path / "hand.swf").write_text("\n".join(lines) + "\n")
    trace = read_trace(tmp_path / "hand.swf")
    assert list(trace.ident) == [1, 2, 4] and list(trace.need) == [2, 1, 2]
    assert trace.skipped_unusable == 1
    assert "skipped 1 job(s) with an unknown run time (-1; they cannot be replayed)" in trace.notes
    assert any(n.startswith("1 job(s) with unknown allocated processors") for n in trace.notes)


def test_a_one_job_trace_replays(tmp_path):
    result = evaluate(load_scenario(str(_swf(tmp_path, [(7, 0, 2, 5)]))), "fcfs", seed=1)
    assert result.metrics["response_time"].mean == 5.0 and result.metrics["makespan"].mean == 5.0
    assert result.metrics["utilization"].mean == 0.5


def test_lublin_feitelson_model_is_deterministic_and_follows_its_parameters():
    a = lublin.generate(3000, 256, 5)
    b = lublin.generate(3000, 256, 5)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    submit, size, run, kind = a
    assert submit[0] == 0 and np.all(np.diff(submit) >= 0) and size.min() >= 1 and size.max() <= 256
    assert run.min() >= 1 and run.max() <= math.exp(lublin.MAX_LOG_RUNTIME)
    serial = {0: lublin.INTERACTIVE.serial_prob, 1: lublin.BATCH.serial_prob}
    for k, p in serial.items():  # the serial fraction of each type, within 4 binomial standard deviations
        n = int((kind == k).sum())
        assert abs((size[kind == k] == 1).mean() - p) < 4 * math.sqrt(p * (1 - p) / n)


def test_lublin_feitelson_model_draws_on_every_machine_size():
    """A machine of 1 to 40 processors (below 32 the size law's shift empties a range, which failed in numpy):
    every size in [1, P]; the published machine's draw is unchanged by the guard (sizes above 2 still drawn)."""
    for processors in range(1, 41):
        submit, size, run, kind = lublin.generate(300, processors, 3)
        assert size.min() >= 1 and size.max() <= processors and (np.diff(submit) >= 0).all()
    assert lublin.generate(2000, 128, 3)[1].max() > 8


def test_lublin_builtin_replays_and_draws_independent_traces():
    one = evaluate("lublin-feitelson", "easy-backfilling", seed=1, jobs=500)
    assert one.mode == "replay" and one.jobs == 500 and math.isnan(one.metrics["waiting_time"].ci95)
    draws = evaluate("lublin-feitelson", "easy-backfilling", reps=3, jobs=300, seed=2)
    assert draws.mode == "traces" and draws.reps == 3 and math.isfinite(draws.metrics["waiting_time"].ci95)
    assert len({r["makespan"] for r in draws.replications}) == 3


def _own_load(arrival: np.ndarray, need: np.ndarray, duration: np.ndarray, servers: int) -> float:
    """A replayed part's load from its own columns: (N - 1) jobs over its arrivals' span, times the mean work."""
    span = arrival[-1] - arrival[0]
    return (len(arrival) - 1) / span * float(np.mean(need * duration)) / servers


@pytest.mark.parametrize("options, parts", [({}, "whole"), ({"jobs": 200}, "prefix"),
                                            ({"windows": 5, "window_jobs": 190, "warmup": 10}, "windows"),
                                            ({"reps": 3, "jobs": 150}, "draws")])
def test_a_replay_reports_the_load_of_the_jobs_it_replays(options, parts):
    """The load a trace run reports is that of its replayed jobs (the prefix, the mean over windows or drawn
    traces), not the whole draw's: a 600-job Lublin-Feitelson draw on 64 processors at time_scale 0.3 has load 1.47
    while its 200-job windows range far below and above."""
    from msjgym import api

    scenario = load_scenario("lublin-feitelson", {"jobs": 600, "processors": 64, "time_scale": 0.3, "seed": 4})
    family = api.family_of(scenario)
    assert abs(scenario.model.load - 1.468) < 1e-3
    options = dict(options)
    run = api.RunSettings(reps=options.pop("reps", None), jobs=options.pop("jobs", None),
                          warmup=options.pop("warmup", None), options=options)
    sim = family.simulation(scenario, "fcfs", run, 7)
    load = sim.summary_params()["load"]
    trace = scenario.model.trace
    if parts == "whole":
        assert load == scenario.model.load
        assert math.isclose(_own_load(trace.arrival, trace.need, trace.duration, 64), load, rel_tol=1e-12)
        return
    replayed = [sim._trace_of(r) for r in range(sim.reps)]
    assert [len(t) for t in replayed] == [{"prefix": 200, "windows": 200, "draws": 150}[parts]] * sim.reps
    own = [_own_load(t.arrival, t.need, t.duration, 64) for t in replayed]
    assert math.isclose(load, float(np.mean(own)), rel_tol=1e-12)
    assert not math.isclose(load, scenario.model.load, rel_tol=1e-3)  # the whole draw's is not what ran
    note = sim._load_note()
    assert note.startswith(f"load {load:.3g}:") and "docs/modelling-choices.md#trace-load" in note
    if parts == "windows":
        assert f"({min(own):.3g} to {max(own):.3g})" in note and f"the whole trace's: {scenario.model.load:.3g}" in note
