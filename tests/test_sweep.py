"""``msjgym sweep``: grid parsing, task seeds, identical numbers on every backend, resuming after Ctrl-C and SIGKILL,
and one-line errors for bad input."""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from msjgym.errors import MsjgymError
from msjgym.evaluate.store import ResultStore
from msjgym.evaluate.sweep import (add_arguments, baseline_combo, grid_points, main, make_plan, parse_grid, task_seed,
                                   unread_note)

MAIN = "import sys; from msjgym.evaluate.sweep import main; sys.exit(main(sys.argv[1:]))"
SMALL = ["one-and-n", "--grid", "arrival_rate=1.0,1.5,2.0", "--policy", "fcfs,server-filling", "--reps", "5",
         "--jobs", "2000", "--seed", "11", "--no-progress"]
# ~0.07 CPU-s per task (30 tasks: ~2 CPU-s): long enough to interrupt a sweep part-way, short enough to rerun it whole.
LONG = ["one-and-n", "--grid", "arrival_rate=1.0,1.5,2.0", "--policy", "fcfs,server-filling", "--reps", "5",
        "--jobs", "200000", "--seed", "5", "--no-progress", "--workers", "2"]
TASKS = 30


def sweep_command(*args: str) -> list[str]:
    return [sys.executable, "-c", MAIN, *args]


def sweep(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The sweep in a fresh process: for what only a real process shows (signals, exit status, no traceback)."""
    return subprocess.run(sweep_command(*args), capture_output=True, text=True, cwd=cwd, timeout=300)


def run(capsys: pytest.CaptureFixture | None, *args: str) -> subprocess.CompletedProcess:
    """The sweep in this process (``main``), its output captured (by ``capsys``, or without it by redirecting the
    streams): the same command without the ~2 CPU-s of starting Python, numba and the kernels again. A pool
    (``--workers 2``) forks its workers from the forkserver this process started once, so later pool sweeps in the
    same test process start at once."""
    if capsys is None:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(list(args))
        return subprocess.CompletedProcess(["msjgym sweep", *args], status, out.getvalue(), err.getvalue())
    capsys.readouterr()
    status = main(list(args))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["msjgym sweep", *args], status, out, err)


def stored(out: Path) -> dict[tuple, tuple]:
    """Every stored task: key -> (task seed, stable, growth rate, metrics, events)."""
    with ResultStore(out / "results.sqlite") as store:
        return {r.key(): (r.task_seed, r.stable, r.growth_rate, r.metrics, r.events) for r in store.rows()}


def table_rows(stdout: str) -> list[list[str]]:
    """The data rows of the final summary table (between its header and the blank line after it)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["arrival_rate", "policy"])
    rows = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        rows.append(line.split())
    return rows


# =====================================================================================================================
# Grid


def test_linspace_grid_is_rounded_and_inclusive():
    name, values = parse_grid("load=0.5:0.95:10")
    assert name == "load" and len(values) == 10
    assert values[0] == 0.5 and values[1] == 0.55 and values[-1] == 0.95 and values[7] == 0.85  # no 0.8500000001
    assert parse_grid("servers=16:64:4") == ("servers", [16, 32, 48, 64])  # int ends, integral values: ints
    assert parse_grid("servers=16:64:3") == ("servers", [16.0, 40.0, 64.0])
    assert parse_grid("load=0.7:0.9:1") == ("load", [0.7])


def test_list_and_single_value_grids():
    assert parse_grid("servers=16,32,64") == ("servers", [16, 32, 64])
    assert parse_grid(" load = 0.7 ") == ("load", [0.7])
    assert parse_grid("m3=sqrt,4th-root,log") == ("m3", ["sqrt", "4th-root", "log"])
    assert parse_grid("load_split=[0.2,0.3,0.5],[0.5,0.25,0.25]") == (
        "load_split", [[0.2, 0.3, 0.5], [0.5, 0.25, 0.25]])
    assert parse_grid('name="a,b",c') == ("name", ["a,b", "c"])


@pytest.mark.parametrize("text", ["load", "=0.5", "load=", "load=0.5:0.9", "load=0.5:0.9:0", "load=0.5:0.9:2.5",
                                  "load=a:b:3", "load=0.5:0.9:3:4", "load=1,,2", "load=0.5,0.5", "load=@@",
                                  "load=0.5:inf:3"])
def test_bad_grids_are_refused(text):
    with pytest.raises(MsjgymError, match="--grid"):
        parse_grid(text)


def test_points_are_the_cartesian_product():
    points = grid_points([("servers", [8, 16]), ("load", [0.5, 0.6, 0.7])], {"p_n": 0.2})
    assert len(points) == 6 and points[0] == {"p_n": 0.2, "servers": 8, "load": 0.5}
    assert points[-1] == {"p_n": 0.2, "servers": 16, "load": 0.7}
    assert grid_points([]) == [{}]
    with pytest.raises(MsjgymError, match="twice"):
        grid_points([("load", [0.5]), ("load", [0.6])])
    with pytest.raises(MsjgymError, match="--param"):
        grid_points([("load", [0.5])], {"load": 0.6})


# =====================================================================================================================
# Seeds


def plan_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args([*argv, "--out", "unused"])


def seeds(*argv: str) -> dict[tuple, int]:
    return {t.key(): t.task_seed for t in make_plan(plan_args(*argv)).tasks}


def test_task_seed_depends_only_on_the_task():
    base = seeds("one-and-n", "--grid", "servers=8,16", "--grid", "p_n=0.1,0.2", "--policy", "fcfs,msf",
                 "--reps", "3")
    reordered = seeds("one-and-n", "--grid", "p_n=0.2,0.1", "--grid", "servers=16,8", "--policy", "msf,fcfs",
                      "--reps", "3")
    extended = seeds("one-and-n", "--grid", "servers=8,12,16", "--grid", "p_n=0.1,0.2", "--policy",
                     "lsf,fcfs,msf", "--reps", "5")
    assert len(base) == 2 * 2 * 2 * 3 and reordered == base
    assert {k: extended[k] for k in base} == base
    assert len(set(extended.values())) == len(extended)  # different tasks, different seeds
    assert task_seed(0, {"servers": 8}, "fcfs", 0) != task_seed(1, {"servers": 8}, "fcfs", 0)
    assert task_seed(0, {"servers": 8}, "fcfs", 0) != task_seed(0, {"servers": 8.0}, "fcfs", 0)
    assert 0 <= task_seed(2**40, {}, "fcfs", 10**6) < 2**63


def test_a_policy_that_does_not_read_a_grid_key_runs_once_across_it():
    """JSQ does not read d: across --grid d=2,3,4 it is one combination (shown as "any" for d), JSQ(d) three; a key
    it does read (lam) still splits it."""
    plan = make_plan(plan_args("lb-dispatch", "--grid", "d=2,3,4", "--grid", "lam=0.5,0.7", "--policy", "jsq,jsq-d",
                               "--reps", "2", "--jobs", "100"))
    rows = sorted((c.policy, str(c.grid["d"]), c.grid["lam"]) for c in plan.combos)
    assert rows == [("jsq", "any", 0.5), ("jsq", "any", 0.7)] + [
        ("jsq-d", str(d), lam) for d in (2, 3, 4) for lam in (0.5, 0.7)]
    assert {c.unread for c in plan.combos if c.policy == "jsq"} == {("d",)}
    assert len(plan.tasks) == 2 * (2 + 6)
    assert unread_note(plan) == "any: jsq does not read d (one run, at d=2, stands for every value)."
    assert baseline_combo(plan, {"policy": "jsq", "d": 4, "lam": 0.7}).grid == {"d": "any", "lam": 0.7}


def test_a_policy_without_another_compared_policys_parameter_runs_once_across_it():
    """``order`` and ``backfill`` are parameters of ``priority``, not of ``first-fit`` (nor keys of the scenario):
    across --grid order=... first-fit is one combination ("any"), not a refused point; ``priority`` splits on both."""
    plan = make_plan(plan_args("one-and-n", "--grid", "order=fcfs,sjf,f1", "--grid", "backfill=none,easy",
                               "--policy", "priority,first-fit", "--reps", "2", "--jobs", "100"))
    rows = sorted((c.policy, str(c.grid["order"]), str(c.grid["backfill"])) for c in plan.combos)
    assert rows == [("first-fit", "any", "any")] + [
        ("priority", o, b) for o in ("f1", "fcfs", "sjf") for b in ("easy", "none")]
    assert {c.unread for c in plan.combos if c.policy == "first-fit"} == {("order", "backfill")}
    assert "first-fit does not read order, backfill" in unread_note(plan)
    with pytest.raises(MsjgymError, match="no_such_key"):  # a key no compared policy declares is still refused
        make_plan(plan_args("one-and-n", "--grid", "no_such_key=1,2", "--policy", "priority,first-fit",
                            "--reps", "2", "--jobs", "100"))


def test_a_poisson_sweep_prints_the_response_time_table_and_no_trace_metrics(tmp_path, capsys):
    """Without --metric, a sweep of simulated (not replayed) scenarios prints the response-time table, with no warning
    about trace metrics it never measured (its rows have a bounded slowdown too)."""
    done = run(capsys, "one-and-n", "--grid", "servers=8", "--policy", "fcfs", "--reps", "2", "--jobs", "300",
               "--workers", "1", "--no-progress", "--out", str(tmp_path / "o"))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    tables = [line for line in done.stdout.splitlines() if line.endswith(":") and " " not in line]
    assert tables == ["response_time:"]


def test_a_policy_without_runtime_estimates_runs_once_across_an_estimate_axis():
    """FCFS reads no runtime estimates: across --grid estimate.factor=1,2,4 it is one combination; EASY three."""
    example = str(Path(__file__).resolve().parents[1] / "examples" / "three_class.toml")
    plan = make_plan(plan_args(example, "--grid", "estimate.factor=1,2,4", "--policy", "fcfs,easy-backfilling",
                               "--reps", "2", "--jobs", "100"))
    rows = sorted((c.policy, str(c.grid["estimate.factor"])) for c in plan.combos)
    assert rows == [("easy-backfilling", "1"), ("easy-backfilling", "2"), ("easy-backfilling", "4"), ("fcfs", "any")]


def test_sweep_table_shows_the_one_run_of_a_policy_that_does_not_read_the_key(tmp_path, capsys):
    done = run(capsys, "lb-dispatch", "--grid", "d=2,3", "--policy", "jsq,jsq-d", "--reps", "2", "--jobs", "300",
               "--param", "servers=10", "--workers", "1", "--no-progress", "--out", str(tmp_path / "o"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = lines.index(next(line for line in lines if line.split()[:2] == ["d", "policy"]))
    shown = [line.split()[:2] for line in lines[start + 1:start + 4]]
    assert shown == [["any", "jsq"], ["2", "jsq-d"], ["3", "jsq-d"]]
    assert "any: jsq does not read d (one run, at d=2, stands for every value)." in done.stdout
    assert len(stored(tmp_path / "o")) == 3 * 2


# =====================================================================================================================
# Same numbers on every backend, in any order, and when a grid is extended


def test_pool_and_in_process_store_identical_numbers(tmp_path, capsys):
    pool = run(capsys, *SMALL, "--out", str(tmp_path / "pool"), "--workers", "2")
    assert pool.returncode == 0, pool.stderr
    assert "0 of 30 tasks already done" in pool.stdout
    rows = table_rows(pool.stdout)
    assert len(rows) == 6 and all(r[2] == "5" and r[3] == "yes" for r in rows)
    assert str(tmp_path / "pool" / "results.sqlite") in pool.stdout.splitlines()[-1]

    # In-process: first part of the grid, then the whole grid in another order, reusing the finished tasks.
    part = run(capsys, *SMALL[:2], "arrival_rate=2.0,1.0", *SMALL[3:], "--out", str(tmp_path / "one"), "--workers", "1")
    assert part.returncode == 0, part.stderr
    whole = run(capsys, *SMALL[:2], "arrival_rate=2.0,1.5,1.0", SMALL[3], "server-filling,fcfs", *SMALL[5:],
                  "--out", str(tmp_path / "one"), "--workers", "1")
    assert whole.returncode == 0, whole.stderr
    assert "20 of 30 tasks already done; running 10" in whole.stdout
    reference = stored(tmp_path / "pool")
    assert len(reference) == TASKS and stored(tmp_path / "one") == reference  # bit for bit


def test_unstable_replications_are_stored_with_their_growth_rate(tmp_path, capsys):
    status = main(["one-and-n", "--grid", "arrival_rate=3.5", "--policy", "fcfs", "--reps", "2", "--jobs", "3000000",
                   "--workers", "1", "--no-progress", "--out", str(tmp_path)])
    assert status == 0
    rows = list(stored(tmp_path).values())
    assert len(rows) == 2 and all(not stable and growth > 0 for _, stable, growth, _, _ in rows)
    assert table_rows(capsys.readouterr().out)[0][:6] == ["3.5", "fcfs", "2", "no", "(2", "of"]


@pytest.mark.ray
def test_ray_stores_identical_numbers(tmp_path):
    pytest.importorskip("ray")
    ray = sweep(*SMALL, "--out", str(tmp_path / "ray"), "--backend", "ray", "--workers", "2")
    assert ray.returncode == 0, ray.stderr
    one = sweep(*SMALL, "--out", str(tmp_path / "one"), "--workers", "1")
    assert one.returncode == 0, one.stderr
    assert table_rows(ray.stdout) == table_rows(one.stdout)
    assert len(stored(tmp_path / "ray")) == TASKS and stored(tmp_path / "ray") == stored(tmp_path / "one")


EVERY_FAMILY = {  # a grid of each family's built-ins, and the number of tasks it makes with 2 replications
    "dispatch": (["lb-dispatch", "--grid", "lam=0.5:0.9:3", "--policy", "jsq-d,jiq"], 12),
    "loss": (["loss-sampled", "--grid", "servers=100,400", "--policy", "greedy,fixed-width"], 8),
    "finite-skip": (["finite-skip-fig3", "--grid", "load=0.5,0.7", "--policy", "lps"], 4),
}


@pytest.mark.parametrize("family", EVERY_FAMILY)
def test_every_family_sweeps_with_the_same_numbers_in_a_pool_and_in_process(tmp_path, capsys, family):
    args, tasks = EVERY_FAMILY[family]
    common = [*args, "--reps", "2", "--jobs", "4000", "--seed", "3", "--no-progress"]
    pool = run(capsys, *common, "--out", str(tmp_path / "pool"), "--workers", "2")
    assert pool.returncode == 0, pool.stderr
    one = run(capsys, *common, "--out", str(tmp_path / "one"), "--workers", "1")
    assert one.returncode == 0, one.stderr
    rows = stored(tmp_path / "pool")
    assert len(rows) == tasks and rows == stored(tmp_path / "one")
    assert all(stable and metrics["response_time"] > 0 for _, stable, _, metrics, _ in rows.values())


SYNTHETIC_TRACE = """system = "msj"
estimate = { model = "tsafrir", seed = 2 }
arrivals = { model = "lublin-feitelson", jobs = 3000, processors = 64, seed = 5, time_scale = 0.7 }
"""


@pytest.mark.parametrize("sampling", [["--windows", "2", "--window-jobs", "150"], ["--reps", "2", "--jobs", "300"]])
def test_a_synthetic_trace_sweeps_with_the_same_numbers_in_a_pool_and_in_process(tmp_path, capsys, sampling):
    """A workload model's scenario (its trace generator, scaled and with drawn users' estimates) goes to the pool's
    worker processes: windows of one draw, and --reps (each replication a trace of its own from the generator)."""
    scenario = tmp_path / "lublin.toml"
    scenario.write_text(SYNTHETIC_TRACE)
    common = [str(scenario), "--grid", "order=sjf,f1", "--param", "backfill=easy", *sampling, "--seed", "4",
              "--no-progress"]
    pool = run(capsys, *common, "--out", str(tmp_path / "pool"), "--workers", "2")
    assert pool.returncode == 0, pool.stderr
    one = run(capsys, *common, "--out", str(tmp_path / "one"), "--workers", "1")
    assert one.returncode == 0, one.stderr
    rows = stored(tmp_path / "pool")
    assert len(rows) == 4 and rows == stored(tmp_path / "one")


@pytest.mark.ray
@pytest.mark.parametrize("family", ["dispatch", "loss"])
def test_every_family_sweeps_on_ray_with_the_same_numbers(tmp_path, family):
    pytest.importorskip("ray")
    args, tasks = EVERY_FAMILY[family]
    common = [*args, "--reps", "2", "--jobs", "4000", "--seed", "3", "--no-progress"]
    ray = sweep(*common, "--out", str(tmp_path / "ray"), "--backend", "ray", "--workers", "2")
    assert ray.returncode == 0, ray.stderr
    one = sweep(*common, "--out", str(tmp_path / "one"), "--workers", "1")
    assert one.returncode == 0, one.stderr
    assert len(stored(tmp_path / "ray")) == tasks and stored(tmp_path / "ray") == stored(tmp_path / "one")


@pytest.mark.ray
def test_unreachable_ray_address_is_one_line(tmp_path, capsys):
    pytest.importorskip("ray")
    assert main([*SMALL, "--out", str(tmp_path), "--backend", "ray", "--address", "127.0.0.1:1"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("msjgym: error: --address 127.0.0.1:1: nothing answers there")
    assert len(err.splitlines()) == 1


def test_missing_ray_is_one_line_with_the_install_command(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` meets without Ray installed
    out = run(capsys, *SMALL, "--out", str(tmp_path), "--backend", "ray")
    assert out.returncode == 2 and out.stdout == "" and out.stderr.splitlines() == [
        'msjgym: error: --backend ray: Ray is not installed; install it with: pip install "msjgym[ray]"']


# =====================================================================================================================
# Interrupt and resume


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> dict[tuple, tuple]:
    out = tmp_path_factory.mktemp("reference")
    done = run(None, *LONG, "--out", str(out))
    assert done.returncode == 0, done.stderr
    return stored(out)


def start_and_wait_for_rows(out: Path, rows: int) -> subprocess.Popen:
    """Start the LONG sweep and return once ``rows`` tasks are stored (and the sweep is still running)."""
    proc = subprocess.Popen(sweep_command(*LONG, "--out", str(out)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 300  # the workers may first compile the kernels (about a minute)
    while stored_count(out / "results.sqlite") < rows:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the sweep stored no rows in time"
        time.sleep(0.02)
    return proc


def stored_count(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
    except sqlite3.OperationalError:  # created but the table not yet
        return 0


def resume_and_check(out: Path, done_before: int, reference: dict[tuple, tuple]) -> None:
    """Rerun the interrupted sweep (in this process: resuming is the store's and the plan's work, not the process's)
    and check it ran only what was missing and stored the uninterrupted numbers."""
    rerun = run(None, *LONG, "--out", str(out))
    assert rerun.returncode == 0, rerun.stderr
    assert f"{done_before} of {TASKS} tasks already done; running {TASKS - done_before}" in rerun.stdout
    rows = table_rows(rerun.stdout)
    assert len(rows) == 6 and all(r[2] == "5" for r in rows)
    assert stored(out) == reference


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(c) for c in path.read_text().split()] if path.exists() else []


def test_ctrl_c_keeps_finished_tasks_and_resumes(tmp_path, uninterrupted):
    proc = start_and_wait_for_rows(tmp_path, 3)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    done = stored_count(tmp_path / "results.sqlite")
    assert 3 <= done < TASKS
    assert stderr.splitlines() == [
        f"msjgym: interrupted: {done} of {TASKS} tasks done (results in {tmp_path / 'results.sqlite'}); "
        "rerun the same command to resume"]
    resume_and_check(tmp_path, done, uninterrupted)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds worker processes through /proc")
def test_sigkill_leaves_a_valid_file_and_resumes(tmp_path, uninterrupted):
    proc = start_and_wait_for_rows(tmp_path, 3)
    workers = children(proc.pid)
    proc.kill()
    proc.communicate(timeout=60)
    with sqlite3.connect(tmp_path / "results.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        done = db.execute("SELECT COUNT(*) FROM tasks").fetchone()[0]
    assert 3 <= done < TASKS
    deadline = time.monotonic() + 10  # orphaned workers notice and exit
    while any(Path(f"/proc/{w}").exists() and "zombie" not in _state(w) for w in workers):
        assert time.monotonic() < deadline, "worker processes outlived the killed sweep"
        time.sleep(0.1)
    resume_and_check(tmp_path, done, uninterrupted)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds worker processes through /proc")
def test_a_dead_worker_stops_the_sweep_with_one_line(tmp_path):
    proc = start_and_wait_for_rows(tmp_path, 1)
    workers = [c for c in children(proc.pid) if b"resource_tracker" not in Path(f"/proc/{c}/cmdline").read_bytes()]
    os.kill(workers[0], signal.SIGKILL)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert len(stderr.splitlines()) == 1 and stderr.startswith("msjgym: error: a worker process died"), stderr
    assert "rerun the same command to resume" in stderr


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split("\n")[0].lower()
    except (OSError, IndexError):
        return "zombie"


# =====================================================================================================================
# Bad input


TWO_NEEDS = """\
servers = 8
arrival_rate = 0.5
[[classes]]
need = 1
probability = 0.5
service = { dist = "exp", rate = 1.0 }
[[classes]]
need = 4
probability = 0.5
service = { dist = "exp", rate = 1.0 }
"""


@pytest.mark.parametrize("args, key", [
    (["one-and-n", "--grid", "servers=8:16", "--policy", "fcfs"], "servers=8:16"),
    (["one-and-n", "--grid", "servers", "--policy", "fcfs"], "--grid"),
    (["one-and-n", "--grid", "arrival_rate=1.0", "--policy", "fcfs,fcsf"], "fcsf"),
    (["one-and-n", "--grid", "servers=8,-3", "--policy", "fcfs"], "servers=-3"),
    (["one-and-n", "--grid", "nope=1,2", "--policy", "fcfs"], "nope"),
    (["no-such-scenario", "--policy", "fcfs"], "one-and-n"),
    (["zero-queueing-set1", "--policy", "server-filling"], "server-filling"),
    (["one-and-n", "--policy", "fcfs", "--address", "auto"], "--address"),
    (["one-and-n", "--policy", "fcfs", "--reps", "0"], "--reps"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, args, key):
    try:
        status = main([*args, "--out", str(tmp_path)])
    except SystemExit as exc:  # argparse's own errors
        status = exc.code
    out, err = capsys.readouterr()
    assert status == 2, (out, err)
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1 and lines[0].startswith("msjgym: error:"), err
    assert key in lines[0], lines[0]
    assert not (tmp_path / "results.sqlite").exists()


def test_bad_input_in_a_subprocess_has_no_traceback(tmp_path):
    out = sweep("one-and-n", "--grid", "servers=8,-3", "--policy", "fcfs", "--out", str(tmp_path))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == ("msjgym: error: grid point servers=-3: one-and-n: servers = -3: must be an integer in "
                          "[1, 10,000,000] (the engine keeps per-server state)\n")


def test_inapplicable_policy_is_an_error_unless_skipped(tmp_path, capsys, monkeypatch):
    (tmp_path / "two.toml").write_text(TWO_NEEDS)
    monkeypatch.chdir(tmp_path)
    args = ["two.toml", "--grid", "servers=8,10", "--policy", "fcfs,server-filling", "--reps", "2", "--jobs", "2000",
            "--workers", "1", "--out", "out", "--no-progress"]
    refused = run(capsys, *args)
    assert refused.returncode == 2 and "servers=10" in refused.stderr and "--skip-invalid" in refused.stderr
    skipped = run(capsys, *args, "--skip-invalid")
    assert skipped.returncode == 0, skipped.stderr
    assert skipped.stderr.startswith("msjgym: warning: skipping server-filling at grid point servers=10: ")
    assert "grid point servers=10: policy server-filling" in refused.stderr
    assert "= 6 tasks" in skipped.stdout and len(stored(tmp_path / "out")) == 6


def test_the_cli_command_is_the_sweep(tmp_path, capsys):
    """``msjgym sweep`` (the CLI's subcommand) gives the same output, numbers and errors as the sweep's ``main``."""
    from msjgym import cli

    args = ["one-and-n", "--grid", "arrival_rate=1.0,2.0", "--policy", "fcfs", "--reps", "2", "--jobs", "2000",
            "--workers", "1", "--no-progress"]
    capsys.readouterr()
    status = cli.main(["sweep", *args, "--out", str(tmp_path / "a")])
    via_cli = capsys.readouterr()
    direct = run(capsys, *args, "--out", str(tmp_path / "b"))
    assert status == direct.returncode == 0, via_cli.err
    assert table_rows(via_cli.out) == table_rows(direct.stdout)
    assert stored(tmp_path / "a") == stored(tmp_path / "b")
    status = cli.main(["sweep", "one-and-n", "--grid", "servers=8:16", "--policy", "fcfs", "--out",
                       str(tmp_path / "c")])
    assert status == 2 and capsys.readouterr().err.startswith("msjgym: error: --grid")


# =====================================================================================================================
# Trace schedulers: policy parameters as grid axes, windows, paired tables, the CSV table

LUBLIN = str(Path(__file__).resolve().parents[1] / "examples" / "lublin_256.toml")


def test_trace_sweep_over_priority_orders_is_paired_by_window(tmp_path, capsys):
    """``--grid order=... --windows N --window-jobs M`` on a trace, with no --policy, --reps nor --jobs: the policy
    is the one built-in with an ``order`` parameter, the defaults fit the trace, each row's window r is window r of
    ``msjgym evaluate --windows N`` (same numbers, metric for metric), and the paired difference and the CSV are the
    differences of those numbers window by window."""
    import csv

    import numpy as np

    from msjgym import load_scenario
    from msjgym.evaluate.evaluator import evaluate
    from msjgym.evaluate.intervals import t_interval
    from msjgym.policies.msj import POLICIES

    table = tmp_path / "table.csv"
    out = run(capsys, LUBLIN, "--grid", "order=fcfs,sjf", "--param", "backfill=easy", "--windows", "3",
              "--window-jobs", "128", "--seed", "4", "--baseline", "order=sjf", "--csv", str(table),
              "--workers", "1", "--no-progress", "--out", str(tmp_path / "out"))
    assert out.returncode == 0, out.stderr
    assert "--policy priority" in out.stderr
    assert "2 point(s) x 1 policy(ies) x 3 window(s) = 6 tasks; 128 measured" in out.stdout
    lines = out.stdout.splitlines()
    at = lines.index("waiting_time:")
    assert lines[at + 1].split()[:5] == ["order", "policy", "n", "mean", "±"]
    assert lines[at + 3].split()[:3] == ["sjf", "priority", "3"] and lines[at + 3].endswith("(baseline)")

    scenario = load_scenario(LUBLIN)
    per_window = {order: evaluate(scenario, POLICIES["priority"].bind(order=order, backfill="easy"), windows=3,
                                  window_jobs=128, seed=4, references=False).replications
                  for order in ("fcfs", "sjf")}
    with ResultStore(tmp_path / "out" / "results.sqlite") as store:
        rows = list(store.rows())
    assert len(rows) == 6
    for r in rows:
        expected = per_window[r.point["order"]][r.rep]
        for name in ("waiting_time", "bounded_slowdown", "makespan", "utilization", "response_time"):
            assert r.metrics[name] == expected[name], (r.point, r.rep, name)
    with table.open() as f:
        tidy = {(row["order"], row["metric"]): row for row in csv.DictReader(f)}
    diffs = np.array([per_window["fcfs"][w]["waiting_time"] - per_window["sjf"][w]["waiting_time"] for w in range(3)])
    expected = t_interval(diffs)
    row = tidy[("fcfs", "waiting_time")]
    assert row["n"] == row["pairs"] == "3" and row["policy"] == "priority"
    assert float(row["diff_mean"]) == pytest.approx(expected.mean, rel=1e-12)
    assert float(row["diff_ci95"]) == pytest.approx(expected.ci95, rel=1e-12)
    assert float(row["mean"]) == pytest.approx(np.mean([w["waiting_time"] for w in per_window["fcfs"]]), rel=1e-12)
    assert tidy[("sjf", "waiting_time")]["diff_mean"] == "0.0"  # the baseline against itself


def test_trace_sweep_checks_only_the_flags_given(tmp_path, capsys):
    """A trace's sweep without run-length flags is one exact replay (no error about --reps/--jobs defaults); a flag
    the user gave that conflicts is named; a baseline that names no single row is refused before the run."""
    base = [LUBLIN, "--policy", "fcfs,easy-backfilling", "--workers", "1", "--no-progress"]
    conflict = run(capsys, *base, "--windows", "3", "--window-jobs", "128", "--jobs", "100",
                   "--out", str(tmp_path / "a"))
    assert conflict.returncode == 2 and conflict.stderr.startswith("msjgym: error: ") and "--jobs" in conflict.stderr
    reps = run(capsys, *base, "--reps", "3", "--out", str(tmp_path / "b"))
    assert reps.returncode == 2 and "--windows N --window-jobs M" in reps.stderr
    ambiguous = run(capsys, *base, "--windows", "3", "--window-jobs", "128", "--baseline", "backfill=easy",
                    "--out", str(tmp_path / "c"))
    assert ambiguous.returncode == 2 and "--baseline" in ambiguous.stderr
    assert not (tmp_path / "c" / "results.sqlite").exists()


def test_policy_axis_on_one_exact_replay(tmp_path, capsys):
    """``--grid policy=A,B`` on a trace without run-length flags: one exact replay per policy (1 task each), the
    difference from the baseline is the difference of the two replays' exact values; ``--policy`` as well is refused."""
    from msjgym import load_scenario
    from msjgym.evaluate.evaluator import evaluate

    out = run(capsys, LUBLIN, "--grid", "policy=fcfs,easy-backfilling", "--baseline", "policy=fcfs",
              "--metric", "waiting_time", "--csv", str(tmp_path / "t.csv"), "--workers", "1", "--no-progress",
              "--out", str(tmp_path / "out"))
    assert out.returncode == 0, out.stderr
    assert "1 point(s) x 2 policy(ies) x 1 replication(s) = 2 tasks; 5,000 measured" in out.stdout
    scenario = load_scenario(LUBLIN)
    exact = {p: evaluate(scenario, p, references=False).metrics["waiting_time"].mean for p in ("fcfs",
                                                                                              "easy-backfilling")}
    with (tmp_path / "t.csv").open() as f:
        import csv
        rows = {(r["policy"], r["metric"]): r for r in csv.DictReader(f)}
    easy = rows[("easy-backfilling", "waiting_time")]
    assert float(easy["mean"]) == exact["easy-backfilling"] and easy["ci95"] == "" and easy["n"] == "1"
    assert float(easy["diff_mean"]) == pytest.approx(exact["easy-backfilling"] - exact["fcfs"], rel=1e-12)
    both = run(capsys, LUBLIN, "--grid", "policy=fcfs", "--policy", "fcfs", "--out", str(tmp_path / "b"))
    assert both.returncode == 2 and "--grid policy" in both.stderr
