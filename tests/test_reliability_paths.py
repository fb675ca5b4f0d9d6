"""Reliability, output paths: checked before the work, and computed results never lost to a failed write.

Every test here failed on the code before the issue: the paths were only used after the simulation, as tracebacks.
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from msjgym.cli import main, save_columns
from msjgym.core.paths import check_output_dir, check_output_file
from msjgym.errors import MsjgymError
from msjgym.evaluate.result import Result
from msjgym.reproduce.common import CsvTable

TRACE = Path(__file__).resolve().parents[1] / "examples" / "traces" / "sample_trace.toml"
SWEEP = ["sweep", "one-and-n", "--grid", "servers=4", "--policy", "fcfs", "--reps", "1", "--jobs", "1000",
         "--workers", "1", "--no-progress"]


def _one_line(capsys, status: int, *fragments: str) -> str:
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and lines[0].startswith("msjgym: error: "), (status, out, err)
    assert "Traceback" not in err and out == ""
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("where, fragment", [("folder", "is a folder"), ("missing", "does not exist"),
                                             ("under-a-file", "is a file, not a folder")])
def test_per_job_is_checked_before_the_simulation(tmp_path, capsys, where, fragment):
    """Issue: "`--per-job` pointing at a folder or an unwritable place (`--per-job /tmp` or `--per-job /proc/x.csv`)
    ... raise tracebacks — after the simulation, so the results are lost. `--per-job` also creates missing parent
    folders silently." Now: one line naming --per-job, before anything runs, and no folder created."""
    (tmp_path / "afile").write_text("")
    path = {"folder": tmp_path, "missing": tmp_path / "new" / "jobs.csv",
            "under-a-file": tmp_path / "afile" / "jobs.csv"}[where]
    start = time.perf_counter()
    status = main(["evaluate", str(TRACE), "--policy", "fcfs", "--per-job", str(path), "--no-progress"])
    assert time.perf_counter() - start < 5  # refused before loading the trace's kernels, let alone simulating
    _one_line(capsys, status, "--per-job", fragment)
    assert not (tmp_path / "new").exists()


def test_an_unwritable_per_job_place_is_refused():
    """Issue: "`--per-job /proc/x.csv` ... raise tracebacks"."""
    if not Path("/proc").is_dir():
        pytest.skip("no /proc")
    with pytest.raises(MsjgymError, match="--per-job '/proc/x.csv': cannot write there"):
        check_output_file("/proc/x.csv", "--per-job")


def test_output_checks_leave_nothing_behind(tmp_path):
    """The checks probe by creating a file; the probe is removed, an existing file is not changed."""
    existing = tmp_path / "jobs.csv"
    existing.write_text("keep")
    assert check_output_file(existing, "--per-job") == existing and existing.read_text() == "keep"
    assert check_output_file(tmp_path / "new.csv", "--per-job") and not (tmp_path / "new.csv").exists()
    assert check_output_dir(tmp_path / "a" / "b", "--out") and not (tmp_path / "a").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs.csv"]


@pytest.mark.parametrize("command", [SWEEP, ["reproduce", "multilevel-n", "--no-progress"]])
def test_sweep_and_reproduce_out_a_file_is_one_line_before_the_work(tmp_path, capsys, command):
    """Issue: "`msjgym sweep ... --out` / `msjgym reproduce ... --out` pointing at a file or an unwritable place
    ... raise tracebacks — after the simulation". (reproduce multilevel-n computed for 16 s before failing.)"""
    (tmp_path / "afile").write_text("")
    start = time.perf_counter()
    status = main([*command, "--out", str(tmp_path / "afile")])
    assert time.perf_counter() - start < 5
    _one_line(capsys, status, "--out", "is a file")
    status = main([*command, "--out", str(tmp_path / "afile" / "sub")])
    _one_line(capsys, status, "--out", "which is a file")


def _trace_result(rows: int = 3) -> Result:
    per_job = {name: np.arange(rows, dtype=float) for name in
               ("arrival_time", "need", "duration", "completion_time", "response_time", "waiting_time")}
    return Result(scenario="t", family="msj", policy="fcfs", params={}, stable=True, metrics={}, reps=1, jobs=rows,
                  warmup=0, seed=0, events=0, wall_seconds=0.0, per_job=per_job)


def test_a_per_job_write_that_fails_after_the_run_keeps_the_rows(tmp_path):
    """Issue: "never lose computed results to a failed write (write what you can, say where)". The folder
    disappears between the check and the write: the rows go to a temporary file, named in one line."""
    target = tmp_path / "gone" / "jobs.csv"
    message = save_columns(_trace_result().per_job, target, "--per-job")
    assert message is not None and message.startswith(f"--per-job {str(target)!r}: could not be written")
    fallback = Path(message.rsplit("are in ", 1)[1].strip("'"))
    try:
        assert fallback.read_text().splitlines()[0].startswith("job,arrival_time,need")
        assert len(fallback.read_text().splitlines()) == 4
    finally:
        fallback.unlink()
    assert save_columns(_trace_result().per_job, tmp_path / "jobs.csv", "--per-job") is None


def test_a_reproduction_csv_that_cannot_be_written_is_kept(tmp_path):
    """Issue: "if the final write fails anyway, print the results ... and say the file could not be written"
    (reproduce: the CSV of numbers goes to a temporary file, named in the one-line error)."""
    (tmp_path / "afile").write_text("")
    table = CsvTable(tmp_path / "afile" / "numbers.csv")
    table.add(n=1, value=0.5)
    with pytest.raises(MsjgymError, match="could not be written") as info:
        table.write()
    fallback = Path(str(info.value).rsplit("are in ", 1)[1].strip("'"))
    try:
        assert fallback.read_text().splitlines() == ["n,value", "1,0.5"]
    finally:
        fallback.unlink()
