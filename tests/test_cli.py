"""The command line: `list`, `evaluate` (table and JSON), and one-line errors with exit status 2.

The commands run in this process (:mod:`cli_run`: the exit status :func:`msjgym.cli.main` returns, stdout and
stderr); one test runs the installed console script in a real process, for what only a process shows."""
from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cli_run import Run, msjgym
from conftest import EXAMPLE

ROOT = Path(__file__).resolve().parents[1]


def test_list_names_every_builtin():
    out = msjgym("list")
    assert out.returncode == 0
    for name in ("one-and-n", "finite-skip-fig6", "finite-skip-fig7", "zero-queueing-set1", "zero-queueing-set2",
                 "zero-queueing-set3", "fcfs", "first-fit", "preemptive-first-fit", "msf", "lsf",
                 "server-filling", "server-filling-divisible", "maxweight", "smash", "msfq"):
        assert f"  {name} " in out.stdout


def test_a_second_policy_is_refused_not_silently_dropped():
    """``evaluate`` runs one policy; a repeated --policy is one error pointing to ``sweep``, not the last one run."""
    out = msjgym("evaluate", "one-and-n", "--policy", "fcfs", "--policy", "first-fit")
    assert out.returncode == 2 and out.stdout == ""
    assert "--policy given twice ('fcfs', 'first-fit')" in out.stderr and "msjgym sweep" in out.stderr


def test_evaluate_json_is_one_parseable_object():
    out = msjgym("evaluate", "one-and-n", "--policy", "fcfs", "--json", "--reps", "3", "--jobs", "20000",
                 "--seed", "1", "--param", "servers=16")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert {"scenario", "policy", "params", "stable", "metrics", "references"} <= data.keys()
    assert data["params"]["servers"] == 16 and data["stable"] is True
    kinds = {r["kind"] for r in data["references"]}
    assert {"condition", "exact", "approximation", "bound"} <= kinds
    assert all({"quantity", "kind", "description", "source", "verdict"} <= r.keys() for r in data["references"])
    for name in ("response_time", "waiting_time", "number_in_system", "number_in_queue", "utilization",
                 "queueing_probability", "response_time_p95", "response_time_p99", "response_time[1]",
                 "queueing_probability[n]"):
        assert set(data["metrics"][name]) == {"mean", "ci95"}


def test_evaluate_table_from_toml(tmp_path):
    (tmp_path / "c.toml").write_text(EXAMPLE)
    out = msjgym("evaluate", "c.toml", "--policy", "server-filling", "--reps", "2", "--jobs", "20000",
                 "--seed", "7", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "response_time" in out.stdout and "[small]" in out.stdout and "[class2]" in out.stdout


def test_unstable_run_is_reported():
    out = msjgym("evaluate", "one-and-n", "--policy", "fcfs", "--param", "arrival_rate=3.5", "--reps", "2",
                 "--jobs", "5000000", "--seed", "3")
    assert out.returncode == 0 and "UNSTABLE" in out.stdout and "jobs per unit time" in out.stdout


BAD_FILES = {
    "negative rate": (EXAMPLE.replace("rate = 1.0", "rate = -1.0"), "classes[0].service.rate"),
    "need above servers": (EXAMPLE.replace("need = 10", "need = 12"), "classes[1].need"),
    "probabilities": (EXAMPLE.replace("probability = 0.1", "probability = 0.3"), "probabilit"),
    "unknown distribution": (EXAMPLE.replace('"hyperexp"', '"hyperexpo"'), "classes[1].service.dist"),
    "malformed toml": (EXAMPLE.replace("servers = 10", "servers = = 10"), "line 2"),
    "unknown key": (EXAMPLE.replace("servers = 10", "servers = 10\nsevrers = 3"), "sevrers"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_scenario_file_is_one_line_exit_2(tmp_path, case):
    text, key = BAD_FILES[case]
    (tmp_path / "bad.toml").write_text(text)
    out = msjgym("evaluate", "bad.toml", "--policy", "fcfs", cwd=tmp_path)
    _assert_clean_error(out, key)


@pytest.mark.parametrize("args, key", [
    (("--policy", "fcsf"), "fcsf"),
    (("--policy", "fcfs", "--param", "servers=-3"), "servers"),
    (("--policy", "fcfs", "--param", "mu_1=0"), "mu_1"),
    (("--policy", "fcfs", "--param", "nope=1"), "nope"),
    (("--policy", "fcfs", "--reps", "0"), "--reps"),
])
def test_bad_options_are_one_line_exit_2(args, key):
    _assert_clean_error(msjgym("evaluate", "one-and-n", *args), key)


def test_policy_outside_its_setting_is_refused():
    """ServerFilling needs every need to divide n; zero-queueing Set I has need 3 on 256 servers."""
    _assert_clean_error(msjgym("evaluate", "zero-queueing-set1", "--policy", "server-filling"), "servers=256")


def test_unknown_scenario_lists_builtins():
    out = msjgym("evaluate", "no-such-thing", "--policy", "fcfs")
    _assert_clean_error(out, "one-and-n")


def _assert_clean_error(out: Run | subprocess.CompletedProcess, key: str) -> None:
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("msjgym: error:"), out.stderr
    assert key in lines[0], lines[0]


def test_theory_lists_references_without_simulating():
    out = msjgym("theory", "one-and-n", "--json", "--param", "servers=8")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    threshold = [r for r in data["references"] if r["description"].startswith("FCFS stability threshold")]
    assert len(threshold) == 1 and threshold[0]["value"] == pytest.approx(0.8) and threshold[0]["verdict"] == ""
    assert any(r["quantity"] == "number_in_system" and r["kind"] == "exact" for r in data["references"])
    table = msjgym("theory", "zero-queueing-set2")
    assert table.returncode == 0 and "region 4" in table.stdout and "need not vanish" in table.stdout


def test_evaluate_notes_predicted_instability_before_simulating():
    out = msjgym("evaluate", "one-and-n", "--policy", "fcfs", "--param", "arrival_rate=3.5", "--reps", "2",
                 "--jobs", "2000000", "--seed", "4")
    assert out.returncode == 0
    assert "msjgym: note: outside the stability region before simulating: FCFS stability threshold" in out.stderr
    assert "predicts unstable; run unstable: confirmed" in out.stdout


def test_the_console_script_passes_the_status_to_the_shell_without_a_traceback():
    """The one real process of this file: the ``msjgym`` console script (``[project.scripts]`` of pyproject.toml)
    exits with the status ``main`` returns, one line on stderr, no traceback. The installed script when there is one
    beside this interpreter (CI's editable install), else the same call the script generator writes."""
    module, _, function = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["msjgym"] \
        .partition(":")
    assert (module, function) == ("msjgym.cli", "main")
    script = Path(sys.executable).with_name("msjgym")
    command = ([str(script)] if script.is_file() else
               [sys.executable, "-c", f"import sys; from {module} import {function}; sys.exit({function}())"])
    _assert_clean_error(subprocess.run([*command, "evaluate", "one-and-n", "--policy", "fcsf"], capture_output=True,
                                       text=True, timeout=300), "fcsf")


def test_evaluate_csv_is_the_json_metrics(tmp_path):
    """``--csv`` writes one row per metric with the mean and CI half-width the JSON reports (exactly: repr), and a
    name that is not .csv is refused before the run."""
    import csv as csv_module

    table = tmp_path / "m.csv"
    out = msjgym("evaluate", "one-and-n", "--policy", "fcfs", "--reps", "3", "--jobs", "2000", "--seed", "1",
                 "--json", "--csv", table, "--no-progress")
    assert out.returncode == 0, out.stderr
    metrics = json.loads(out.stdout)["metrics"]
    with table.open() as f:
        rows = {r["metric"]: r for r in csv_module.DictReader(f)}
    assert set(rows) == set(metrics)
    for name, value in metrics.items():
        assert float(rows[name]["mean"]) == value["mean"] and rows[name]["reps"] == "3"
        assert (rows[name]["ci95"] == "") == (value["ci95"] is None)
    bad = msjgym("evaluate", "one-and-n", "--policy", "fcfs", "--csv", tmp_path / "m.txt")
    assert bad.returncode == 2 and bad.stderr.startswith("msjgym: error: --csv")
