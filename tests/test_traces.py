"""Trace-driven workloads: SWF and CSV reading, scaling, exact replay, per-job output, bad lines."""
from __future__ import annotations

import heapq
from collections import deque
from pathlib import Path

import numpy as np
import pytest

from cli_run import msjgym
from msjgym.systems.msj.trace.files import TraceError, read_trace
from msjgym.evaluate.evaluator import evaluate
from msjgym.api import load_scenario

TRACES = Path(__file__).resolve().parents[1] / "examples" / "traces"
SAMPLE = TRACES / "sample.swf"
SCENARIO = TRACES / "sample_trace.toml"


def test_sample_swf_is_read_and_its_unusable_jobs_counted():
    trace = read_trace(SAMPLE)
    assert trace.machine == 128 and len(trace) + trace.skipped_unusable == 1000
    assert trace.skipped_unusable > 0 and trace.skipped_malformed == 0
    assert trace.arrival[0] == 0 and np.all(np.diff(trace.arrival) >= 0) and np.all(trace.duration > 0)
    scaled = trace.scaled(64)
    assert set(np.unique(scaled.need)) <= {1, 2, 4, 8, 16, 32, 64}
    assert np.array_equal(scaled.need, np.maximum(1, trace.need // 2))


def _swf_with(tmp_path: Path, bad: str) -> Path:
    lines = SAMPLE.read_text().splitlines()
    lines.insert(12, bad)  # after the 5 header lines: file line 13
    path = tmp_path / "bad.swf"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("bad", ["1 2 3", "7 100 -1 x 4 -1 -1 4 10 -1 1 1 1 1 1 1 -1 -1"])
def test_malformed_swf_line_is_an_error_naming_it_or_skipped(tmp_path, bad):
    path = _swf_with(tmp_path, bad)
    with pytest.raises(TraceError, match=r"bad\.swf line 13: "):
        read_trace(path)
    trace = read_trace(path, skip_bad_lines=True)
    assert trace.skipped_malformed == 1 and len(trace) == len(read_trace(SAMPLE))


def test_csv_trace(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("arrival_time,need,duration\n0,1,2.5\n1,4,1\n1.5,2,3\n")
    with pytest.raises(TraceError, match=r"t\.csv: a CSV trace does not say the machine's size; give the traced "
                                         r"machine's processors as servers = N"):
        read_trace(path)
    trace = read_trace(path, servers=8)
    assert list(trace.need) == [1, 4, 2] and list(trace.duration) == [2.5, 1.0, 3.0] and trace.machine == 8
    assert list(trace.ident) == [1, 2, 3]
    with pytest.raises(TraceError, match=r"t\.csv: a job needs 4 processors, more than servers = 2"):
        read_trace(path, servers=2)
    path.write_text("arrival_time,need,duration\n0,1,2.5\n1,0,1\n")
    with pytest.raises(TraceError, match=r"t\.csv line 3: need = 0"):
        read_trace(path, servers=8)
    path.write_text("time,need,duration\n0,1,1\n")
    with pytest.raises(TraceError, match="line 1: the header"):
        read_trace(path)


def _reference_fcfs(arrival, need, duration, servers):
    """A plain FCFS (head-of-line blocking) replay: completions at an instant first, then arrivals one by one."""
    done = np.full(len(arrival), np.nan)
    queue, running, free, seq = deque(), [], servers, 0
    i, n = 0, len(arrival)

    def admit(now):
        nonlocal free, seq
        while queue and need[queue[0]] <= free:
            j = queue.popleft()
            free -= need[j]
            heapq.heappush(running, (now + duration[j], seq, j))
            seq += 1

    while i < n or running:
        if running and (i >= n or running[0][0] <= arrival[i]):
            now = running[0][0]
            while running and running[0][0] == now:
                _, _, j = heapq.heappop(running)
                done[j] = now
                free += need[j]
            admit(now)
        else:
            queue.append(i)
            admit(arrival[i])
            i += 1
    return done


def test_fcfs_replay_is_exact():
    """msjgym's FCFS replay of the sample trace gives every job exactly the completion time of a plain reference
    replay (integer SWF times make ties between arrivals and completions frequent: the orders must agree)."""
    scenario = load_scenario(str(SCENARIO))
    trace = scenario.model.trace
    result = evaluate(scenario, "fcfs")
    expected = _reference_fcfs(trace.arrival, trace.need, trace.duration, scenario.model.servers)
    np.testing.assert_allclose(result.per_job["completion_time"], expected, rtol=0, atol=1e-6)
    assert np.all(result.per_job["waiting_time"] >= -1e-9)


@pytest.mark.parametrize("policy", ["fcfs", "server-filling", "first-fit", "msf", "maxweight"])
def test_replay_completes_every_job_and_keeps_littles_law(policy):
    scenario = load_scenario(str(SCENARIO))
    result = evaluate(scenario, policy)
    per_job = result.per_job
    assert np.all(np.isfinite(per_job["completion_time"]))
    assert np.all(per_job["response_time"] >= per_job["duration"] - 1e-9)
    # Little over the whole replay: time-average number in system × span = Σ response times.
    span = np.nanmax(per_job["completion_time"]) - per_job["arrival_time"][0]
    n_sys = result.replications[0]["number_in_system"]
    assert n_sys * span == pytest.approx(per_job["response_time"].sum(), rel=1e-9)


def test_a_trace_file_given_as_the_scenario_is_its_exact_replay(tmp_path):
    """``msjgym evaluate TRACE.swf`` (or ``.csv``) is the replay of ``arrivals = { trace = TRACE }``: the same jobs,
    machine and schedule as the scenario file that says so; overrides apply as to that file."""
    (tmp_path / "sample.swf").write_bytes(SAMPLE.read_bytes())
    (tmp_path / "replay.toml").write_text('arrivals = { trace = "sample.swf" }\n')
    for overrides in ({}, {"arrivals.scale_servers": 64}):
        direct = load_scenario(str(tmp_path / "sample.swf"), overrides)
        written = load_scenario(str(tmp_path / "replay.toml"), overrides)
        assert direct.family == "msj" and direct.model.servers == written.model.servers
        a, b = evaluate(direct, "easy-backfilling").per_job, evaluate(written, "easy-backfilling").per_job
        np.testing.assert_array_equal(a["completion_time"], b["completion_time"])
    assert load_scenario(str(tmp_path / "sample.swf"), {"arrivals.scale_servers": 64}).model.servers == 64
    (tmp_path / "t.csv").write_text("arrival_time,need,duration\n0,2,5\n1,1,3\n")  # a CSV: no machine size
    out = msjgym("evaluate", str(tmp_path / "t.csv"), "--policy", "fcfs")
    assert out.returncode == 2 and "--param servers=N" in out.stderr
    assert load_scenario(str(tmp_path / "t.csv"), {"servers": 4}).model.servers == 4
    out = msjgym("evaluate", str(tmp_path / "missing.swf"), "--policy", "fcfs")
    assert out.returncode == 2 and "missing.swf" in out.stderr and out.stderr.count("\n") == 1


def test_trace_refuses_replications():
    with pytest.raises(Exception, match="deterministic"):
        evaluate(load_scenario(str(SCENARIO)), "fcfs", reps=3)


def test_cli_trace_replay_writes_per_job_and_handles_bad_lines(tmp_path):
    out = msjgym("evaluate", str(SCENARIO), "--policy", "server-filling", "--per-job", str(tmp_path / "jobs.csv"))
    assert out.returncode == 0, out.stderr
    rows = (tmp_path / "jobs.csv").read_text().splitlines()
    assert rows[0] == ("job,arrival_time,need,duration,completion_time,response_time,waiting_time,bounded_slowdown,"
                       "start_time,requested_time")
    assert len(rows) == 1 + len(read_trace(SAMPLE))
    bad = _swf_with(tmp_path, "1 2 3")
    (tmp_path / "bad.toml").write_text('arrivals = { trace = "bad.swf", scale_servers = 64 }\n')
    out = msjgym("evaluate", "bad.toml", "--policy", "fcfs", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "bad.swf line 13" in out.stderr
    out = msjgym("evaluate", "bad.toml", "--policy", "fcfs", "--skip-bad-lines", cwd=tmp_path)
    assert out.returncode == 0 and "1 malformed lines" in out.stdout, out.stderr
    assert bad.exists()
