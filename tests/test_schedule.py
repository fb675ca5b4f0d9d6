"""A replay's schedule out: ``--per-job FILE.csv|FILE.swf`` (msjgym/core/schedule.py). The SWF file's fields 2–5
alone give back the reported metrics, and the file re-read by msjgym as a trace replays to the same numbers."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from cli_run import msjgym

ROOT = Path(__file__).resolve().parents[1]
LUBLIN = str(ROOT / "examples" / "lublin_256.toml")
TAU = 10.0  # the bounded slowdown's default threshold


def swf_jobs(path: Path) -> tuple[np.ndarray, int]:
    """The job lines of an SWF file as a float array (18 columns), and its MaxProcs header (read here, not by
    msjgym)."""
    rows, procs = [], None
    for line in path.read_text().splitlines():
        if line.startswith(";"):
            if line[1:].split(":")[0].strip() == "MaxProcs":
                procs = int(line.split(":")[1])
            continue
        rows.append([float(x) for x in line.split()])
    return np.array(rows), procs


def test_swf_schedule_gives_back_the_reported_metrics(tmp_path):
    swf = tmp_path / "easy.swf"
    out = msjgym("evaluate", LUBLIN, "--policy", "easy-backfilling", "--per-job", swf, "--json", "--no-progress")
    assert out.returncode == 0, out.stderr
    metrics = {k: v["mean"] for k, v in json.loads(out.stdout)["metrics"].items()}
    jobs, procs = swf_jobs(swf)
    assert jobs.shape == (5000, 18) and procs == 256
    submit, wait, run, alloc = jobs[:, 1], jobs[:, 2], jobs[:, 3], jobs[:, 4]
    assert (jobs[:, 10] == 1).all() and (jobs[:, 7] == alloc).all() and (wait >= 0).all()
    end = submit + wait + run
    makespan = end.max() - submit.min()
    independent = {"waiting_time": wait.mean(), "makespan": makespan,
                   "bounded_slowdown": np.maximum(1.0, (wait + run) / np.maximum(run, TAU)).mean(),
                   "utilization": (alloc * run).sum() / (procs * makespan)}
    for name, value in independent.items():
        assert value == pytest.approx(metrics[name], rel=1e-12, abs=0), name

    # Re-read by msjgym as a trace: the same jobs, needs and estimates replay to the same schedule and numbers.
    scenario = tmp_path / "again.toml"
    scenario.write_text('arrivals = { trace = "easy.swf" }\n')
    again = tmp_path / "again.swf"
    second = msjgym("evaluate", scenario, "--policy", "easy-backfilling", "--per-job", again, "--json",
                    "--no-progress")
    assert second.returncode == 0, second.stderr
    replayed = {k: v["mean"] for k, v in json.loads(second.stdout)["metrics"].items()}
    for name in ("waiting_time", "bounded_slowdown", "makespan", "utilization", "response_time"):
        assert replayed[name] == metrics[name], name
    assert (swf_jobs(again)[0] == jobs).all()


def test_schedule_format_by_extension_or_flag(tmp_path):
    """``.txt`` is an error naming the valid extensions (before the run: nothing written); ``--per-job-format swf``
    writes SWF whatever the name; a CSV has the start time and the trace's job ids."""
    bad = msjgym("evaluate", LUBLIN, "--policy", "fcfs", "--per-job", tmp_path / "jobs.txt", "--no-progress")
    assert bad.returncode == 2 and bad.stderr.startswith("msjgym: error: --per-job ")
    assert ".csv, .swf" in bad.stderr and not (tmp_path / "jobs.txt").exists()
    flagged = msjgym("evaluate", LUBLIN, "--policy", "fcfs", "--per-job", tmp_path / "jobs.out",
                     "--per-job-format", "swf", "--no-progress")
    assert flagged.returncode == 0, flagged.stderr
    assert (tmp_path / "jobs.out").read_text().startswith("; Version: 2.2")
    table = tmp_path / "jobs.csv"
    assert msjgym("evaluate", LUBLIN, "--policy", "fcfs", "--per-job", table, "--no-progress").returncode == 0
    with table.open() as f:
        rows = list(csv.DictReader(f))
    start = np.array([float(r["start_time"]) for r in rows])
    arrival = np.array([float(r["arrival_time"]) for r in rows])
    wait = np.array([float(r["waiting_time"]) for r in rows])
    assert len(rows) == 5000 and rows[0]["job"] == "1"
    assert np.allclose(start, arrival + wait, rtol=1e-9, atol=1e-6)
    assert (np.diff(start) >= -1e-6).all()  # FCFS starts jobs in arrival order


def test_windows_schedule_has_a_window_column(tmp_path):
    """With --windows, one CSV of every window's jobs; each window's mean wait is that window's reported value."""
    table = tmp_path / "w.csv"
    out = msjgym("evaluate", LUBLIN, "--policy", "easy-backfilling", "--windows", "3", "--window-jobs", "100",
                 "--seed", "2", "--per-job", table, "--json", "--no-progress")
    assert out.returncode == 0, out.stderr
    with table.open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 300 and [r["window"] for r in rows[::100]] == ["0", "1", "2"]
    result = msjgym("evaluate", LUBLIN, "--policy", "easy-backfilling", "--windows", "3", "--window-jobs", "100",
                    "--seed", "2", "--json", "--no-progress")
    mean = json.loads(result.stdout)["metrics"]["waiting_time"]["mean"]
    per_window = [np.mean([float(r["waiting_time"]) for r in rows if r["window"] == str(w)]) for w in range(3)]
    assert np.mean(per_window) == pytest.approx(mean, rel=1e-9)
    swf = tmp_path / "w.swf"
    assert msjgym("evaluate", LUBLIN, "--policy", "easy-backfilling", "--windows", "3", "--window-jobs", "100",
                  "--seed", "2", "--per-job", swf, "--no-progress").returncode == 0
    assert [line.split()[:3] for line in swf.read_text().splitlines() if line.startswith("; Window:")] == [
        [";", "Window:", str(w)] for w in range(3)]
