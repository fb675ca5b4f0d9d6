"""One measurement unit has no confidence interval, and says so: tables print '± n/a', JSON has a null
ci95 with its reason, sweeps with one replication the same; never a bare value under 'mean ± 95% CI'."""
from __future__ import annotations

import json

import pytest

from cli_run import msjgym


@pytest.mark.parametrize("scenario, policy", [("one-and-n", "fcfs"), ("loss-full-access", "greedy"),
                                              ("finite-skip-fig2", "fsf")])
def test_one_replication_one_batch_says_no_ci(scenario, policy):
    run = msjgym("evaluate", scenario, "--policy", policy, "--reps", "1", "--batches", "1", "--jobs", "2000",
                 "--seed", "3")
    assert run.returncode == 0, run.stderr
    table = run.stdout.split("\n\n")[1]
    rows = [ln for ln in table.splitlines()[1:] if ln.strip()]
    assert rows and all("± n/a" in ln for ln in rows), table
    assert "± n/a: one measurement unit" in run.stdout
    data = json.loads(msjgym("evaluate", scenario, "--policy", policy, "--reps", "1", "--batches", "1", "--jobs",
                             "2000", "--seed", "3", "--json").stdout)
    for name, m in data["metrics"].items():
        if m["mean"] is not None:
            assert m["ci95"] is None and "one measurement unit" in m["ci95_reason"], name


def test_two_units_print_intervals_and_no_reason():
    data = json.loads(msjgym("evaluate", "one-and-n", "--policy", "fcfs", "--reps", "2", "--jobs", "2000", "--seed",
                             "3", "--json").stdout)
    assert all("ci95_reason" not in m for m in data["metrics"].values())


def test_a_sweep_with_one_replication_says_no_ci(tmp_path):
    run = msjgym("sweep", "one-and-n", "--grid", "servers=2:4:2", "--policy", "fcfs", "--reps", "1", "--jobs",
                 "2000", "--out", tmp_path / "sw")
    assert run.returncode == 0, run.stderr
    rows = [ln for ln in run.stdout.splitlines() if ln.split()[:1] in (["2"], ["4"])]
    overview = [ln for ln in rows if "yes" in ln.split()]  # the overview's rows (a stable column); then the paired
    assert len(overview) == 2 and all(ln.rstrip().endswith("± n/a") for ln in overview), run.stdout  # tables'
    paired = [ln for ln in rows if ln not in overview]
    assert paired and all("± n/a" in ln for ln in paired), run.stdout  # no bare value under "mean ± 95% CI"
    assert "± n/a: one replication: no confidence interval" in run.stdout
