"""The input-layer probe: results keyed by content, outputs that never destroy inputs, and the cases of the one
input layer (each failed on the code before the issue: a stale number, a destroyed input, a traceback, a hang or a
misleading message). ``tests/probe_cases.py`` reruns them all as a user would and prints one line per case."""
from __future__ import annotations

import copy
import io
import json
import sqlite3
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from msjgym import api
from msjgym.cli import main
from msjgym.core.inputs import content_digest, recording, refuse_overwrite
from msjgym.core.output import GuardedStdout
from msjgym.systems.msj.trace.files import TraceError, read_trace
from msjgym.errors import MsjgymError, PolicyError, ScenarioError
from msjgym.evaluate import sweep
from msjgym.evaluate.store import ResultStore, TaskRow

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "traces" / "sample.swf"
SCENARIO = """servers = 10
arrival_rate = 2.33
[[classes]]
name = "triple"
need = 3
service = { dist = "exp", rate = 1.0 }
"""


def _one_line(capsys, status: int, *fragments: str) -> str:
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and lines[0].startswith("msjgym: error: "), (status, out, err)
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def _trace(folder: Path, edit=None, jobs: int = 60) -> Path:
    lines = SAMPLE.read_text().splitlines()
    body = [x.split() for x in lines if x.strip() and not x.startswith(";")][:jobs]
    if edit:
        for i, fields in enumerate(body):
            edit(i, fields)
    path = folder / "t.swf"
    path.write_text("\n".join([x for x in lines if x.startswith(";")] + [" ".join(f) for f in body]) + "\n")
    return path


# ==================================================================================================================
# Section 2


def test_an_edited_scenario_is_recomputed_and_the_table_says_what_is_earlier(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("s.toml").write_text(SCENARIO)
    args = ["sweep", "s.toml", "--policy", "fcfs", "--reps", "2", "--jobs", "2000", "--workers", "1",
            "--no-progress", "--out", "o"]
    assert main(args) == 0
    first = capsys.readouterr().out
    Path("s.toml").write_text(SCENARIO.replace("2.33", "0.5"))
    assert main(args) == 0
    second = capsys.readouterr().out
    assert "0 of 2 tasks already done" in second and "recomputed" in second
    assert main(args[:-1] + ["fresh"]) == 0
    fresh = capsys.readouterr().out
    row = lambda text: next(x for x in text.splitlines() if x.startswith("fcfs")).split()  # noqa: E731
    assert row(second)[:6] == row(fresh)[:6] != row(first)[:6]
    assert main(args) == 0
    third = capsys.readouterr().out
    assert "2 of 2 tasks already done" in third and row(third)[-2:] == ["earlier", "run"]
    with ResultStore(Path("o/results.sqlite"), create=False) as store:  # the plot sees the current inputs only
        assert len(list(store.rows(superseded=True))) == 4 and len(list(store.rows())) == 2


def test_the_digest_is_of_content_not_names(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("x")
    b.write_text("x")
    assert content_digest({"p": 1}, [a]) == content_digest({"p": 1}, [b]) != content_digest({"p": 2}, [a])
    b.write_text("y")
    assert content_digest({"p": 1}, [a]) != content_digest({"p": 1}, [b])


def test_seeds_up_to_2_128_are_stored_and_found_again(tmp_path):
    seed = 2**128 - 1
    row = TaskRow("s", {}, "fcfs", 0, 10, 1, 1, seed, 2**62, True, None, {"response_time": 1.0}, 5, 0.1, "abc")
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add(row)
        assert store.done_keys() == {row.key()}
        assert next(store.rows()).seed == seed


def test_a_store_of_an_earlier_msjgym_is_read_and_converted(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE tasks (scenario TEXT NOT NULL, point TEXT NOT NULL, policy TEXT NOT NULL, rep INTEGER "
               "NOT NULL, jobs INTEGER NOT NULL, warmup INTEGER NOT NULL, batches INTEGER NOT NULL, seed INTEGER NOT "
               "NULL, task_seed INTEGER NOT NULL, stable INTEGER NOT NULL, growth_rate REAL, metrics TEXT NOT NULL, "
               "events INTEGER NOT NULL, wall_seconds REAL NOT NULL, finished_at TEXT NOT NULL, PRIMARY KEY "
               "(scenario, point, policy, rep, jobs, warmup, batches, seed))")
    db.execute("INSERT INTO tasks VALUES ('one-and-n', '{}', 'fcfs', 0, 10, 1, 1, 7, 9, 1, NULL, ?, 5, 0.1, 'now')",
               (json.dumps({"response_time": 2.0}),))
    db.commit()
    db.close()
    with ResultStore(path, create=False) as store:
        (row,) = store.rows()
        assert row.seed == 7 and row.inputs == "" and row.metrics == {"response_time": 2.0}
    with ResultStore(path) as store:  # written to: converted, rows kept (their inputs unknown)
        assert [r.seed for r in store.rows()] == [7]
        assert ("one-and-n", "{}", "fcfs", 0, 10, 1, 1, "7", "") in store.done_keys()


def test_a_store_is_read_without_writing_to_it(tmp_path):
    path = tmp_path / "r.sqlite"
    with ResultStore(path) as store:
        store.add(TaskRow("s", {}, "fcfs", 0, 10, 1, 1, 1, 1, True, None, {"x": 1.0}, 5, 0.1, "abc"))
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    with ResultStore(path, create=False) as store:
        assert len(list(store.rows())) == 1
    with pytest.raises(sqlite3.OperationalError):  # opened read-only: SQLite refuses any write
        store = ResultStore(path, create=False)
        store._db.execute("DELETE FROM tasks")
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir() if p.name in before} == before


@pytest.mark.parametrize("target", ["trace", "toml", "link"])
def test_per_job_onto_an_input_is_refused_before_running(tmp_path, capsys, monkeypatch, target):
    monkeypatch.chdir(tmp_path)
    Path("sample.swf").write_bytes(SAMPLE.read_bytes())
    Path("t.toml").write_text('arrivals = { trace = "sample.swf", scale_servers = 64 }\n')
    Path("alias.csv").symlink_to(tmp_path / "sample.swf")
    out = {"trace": "sample.swf", "toml": "./t.toml", "link": "alias.csv"}[target]
    _one_line(capsys, main(["evaluate", "t.toml", "--policy", "fcfs", "--per-job", out]), "--per-job",
              "input of this run")
    assert Path("sample.swf").read_bytes() == SAMPLE.read_bytes()


def test_refuse_overwrite_by_real_path_and_inode(tmp_path):
    a = tmp_path / "a.toml"
    a.write_text("x")
    (tmp_path / "hard").hardlink_to(a)
    for out in (a, tmp_path / "sub" / ".." / "a.toml", tmp_path / "hard"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        with pytest.raises(MsjgymError, match="--out .* input of this run"):
            refuse_overwrite({"--out": out}, [a])
    refuse_overwrite({"--out": tmp_path / "b.csv", "--json": None}, [a])


def test_the_inputs_of_a_scenario_are_recorded(tmp_path):
    (tmp_path / "sample.swf").write_bytes(SAMPLE.read_bytes())
    (tmp_path / "t.toml").write_text('arrivals = { trace = "sample.swf", scale_servers = 64 }\n')
    with recording() as files:
        api.load_scenario(str(tmp_path / "t.toml"))
    assert files == [(tmp_path / "t.toml").resolve(), (tmp_path / "sample.swf").resolve()]


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_stdout_that_cannot_encode_ends_in_one_line_and_a_saved_copy(capsys, monkeypatch, encoding):
    raw = io.BytesIO()
    console = io.TextIOWrapper(raw, encoding=encoding)  # errors="strict", as PYTHONIOENCODING=ascii gives
    monkeypatch.setattr(sys, "stdout", console)
    with GuardedStdout() as out:
        print("response_time 1.5 ± 0.2, ρ = 0.9")
    assert out.report(0) == 1
    console.flush()
    assert raw.getvalue().decode(encoding).startswith("response_time 1.5 ")
    (line,) = capsys.readouterr().err.strip().splitlines()
    saved = Path(line.split("the full output is in ")[1].split("'")[1])
    assert saved.read_text(encoding="utf-8") == "response_time 1.5 ± 0.2, ρ = 0.9\n"
    saved.unlink()


def test_stdout_wrapper_asked_isatty_after_its_stream_closed_says_no():
    """colorama asks ``isatty()`` at interpreter exit, when the real stream may be closed: no traceback."""
    console = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    out = GuardedStdout()
    out._stream = console
    assert out.isatty() is False
    console.close()
    assert out.isatty() is False


# ==================================================================================================================
# Section 3


@pytest.mark.parametrize("edit, fragment", [
    (lambda i, f: f.__setitem__(4, "1e20") if i == 3 else None, "allocated processors (field 5) = 1e+20"),
    (lambda i, f: f.__setitem__(3, "1e300") if i == 3 else None, "run time (field 4) = 1e+300"),
    (lambda i, f: f.__setitem__(3, "1e-300") if i == 3 else None, "run time (field 4) = 1e-300"),
    (lambda i, f: f.__setitem__(8, "1e300") if i == 3 else None, "requested time (field 9) = 1e+300"),
    (lambda i, f: f.__setitem__(1, "1" + "0" * 500) if i == 3 else None, "longer than 100 characters"),
])
def test_swf_numbers_go_through_the_input_layer(tmp_path, edit, fragment):
    path = _trace(tmp_path, edit)
    with pytest.raises(TraceError, match="line") as info:
        read_trace(path)
    assert fragment in str(info.value) and "\n" not in str(info.value)
    assert len(read_trace(path, skip_bad_lines=True)) < 60


def test_csv_hostile_fields_are_malformed_lines(tmp_path):
    path = tmp_path / "n.csv"
    path.write_text("arrival_time,need,duration\n0,1,1\n1,inf,1\n2,1e400,1\n3,2,1\n4,1," + "9" * 140_000
                    + "\n5,1,2\n")
    with pytest.raises(TraceError, match=r"line 3: need = inf: must be an integer in \[1, 1,000,000,000\]"):
        read_trace(path)
    trace = read_trace(path, skip_bad_lines=True, servers=4)
    assert trace.skipped_malformed == 3 and list(trace.need) == [1, 2, 1]


def test_inputs_that_never_end_are_refused(tmp_path):
    with pytest.raises(ScenarioError, match="/dev/zero.*not a regular file"):
        (tmp_path / "z.toml").write_text(SCENARIO.replace('{ dist = "exp", rate = 1.0 }',
                                                          '{ dist = "empirical", file = "/dev/zero" }'))
        api.load_scenario(str(tmp_path / "z.toml"))
    with pytest.raises(TraceError, match="not a regular file"):
        read_trace(Path("/dev/zero.swf") if Path("/dev/zero.swf").exists() else _fifo(tmp_path))


def _fifo(tmp_path: Path) -> Path:
    import os
    path = tmp_path / "pipe.swf"
    os.mkfifo(path)
    return path


def test_trace_time_scale_that_float64_cannot_resolve(tmp_path):
    (tmp_path / "sample.swf").write_bytes(SAMPLE.read_bytes())
    (tmp_path / "t.toml").write_text('arrivals = { trace = "sample.swf", scale_servers = 64, time_scale = 1e16 }\n')
    with pytest.raises(ScenarioError, match="arrivals.time_scale = 1e\\+16: .*float64 cannot resolve"):
        api.load_scenario(str(tmp_path / "t.toml"))


def test_num_envs_memory_is_estimated_before_allocating():
    import gymnasium as gym

    with pytest.raises(ValueError, match=r"^num_envs = 10,000,000: .* GiB; must be at most 4 GiB"):
        gym.make_vec("msjgym/MSJ-v0", num_envs=10**7, vectorization_mode="vector_entry_point")


@pytest.mark.parametrize("argv, fragments", [
    (["evaluate", "one-and-n", "--policy", "fcfs", "--saturated", "--backlog", "100000000"],
     ("backlog=100,000,000", "GiB", "--backlog")),
    (["evaluate", "one-and-n", "--policy", "fcfs", "--backlog", "5"], ("--backlog: only with --saturated",)),
    (["theory", "lb-dispatch", "--param", f"dist=h2(f=1/2, scv={'9' * 400}/3)"], ("dist.scv",)),
    (["theory", "lb-dispatch", "--policy", "jsq-d", "--param", "dist=h2(f=1/2, scv=1e400)"],
     ("dist.scv = inf",)),
])
def test_one_line_errors(capsys, argv, fragments):
    _one_line(capsys, main(argv), *fragments)


def test_list_indices_are_ascii_digits(tmp_path, capsys):
    (tmp_path / "s.toml").write_text(SCENARIO)
    _one_line(capsys, main(["theory", str(tmp_path / "s.toml"), "--param", "classes.².probability=0.5"]),
              "no entry classes.²")


def test_a_warmup_longer_than_the_trace(capsys, tmp_path):
    (tmp_path / "sample.swf").write_bytes(SAMPLE.read_bytes())
    (tmp_path / "t.toml").write_text('arrivals = { trace = "sample.swf", scale_servers = 64 }\n')
    _one_line(capsys, main(["evaluate", str(tmp_path / "t.toml"), "--policy", "fcfs", "--warmup", "5000"]),
              "--warmup 5,000: the trace has 980 jobs")


def test_a_file_of_a_family_without_files(tmp_path, capsys):
    (tmp_path / "d.toml").write_text('system = "dispatch"\nservers = 10\n')
    line = _one_line(capsys, main(["theory", str(tmp_path / "d.toml")]), "system = 'dispatch'",
                     "built-in scenarios only", "lb-dispatch")
    assert "neither a built-in nor an existing file" not in line


def test_theory_never_checks_the_simulation_state(tmp_path, capsys):
    classes = "".join(f'[[classes]]\nname = "c{i}"\nneed = 3\nprobability = {1 / 2000!r}\n'
                      f'service = {{ dist = "exp", rate = 1.0 }}\n' for i in range(2000))
    (tmp_path / "big.toml").write_text(f"servers = 10\narrival_rate = 2.33\n{classes}")
    assert main(["theory", str(tmp_path / "big.toml")]) == 0
    assert "--reps" not in capsys.readouterr().err
    _one_line(capsys, main(["evaluate", str(tmp_path / "big.toml"), "--policy", "fcfs"]), "GiB", "--reps")


def test_control_characters_in_names_are_refused_and_never_printed_raw(tmp_path, capsys):
    (tmp_path / "c.toml").write_text(SCENARIO.replace('name = "triple"', 'name = "tri\\u001b[31mple"'))
    line = _one_line(capsys, main(["theory", str(tmp_path / "c.toml")]), "classes[0].name", "control characters")
    assert "\x1b" not in line


def test_a_policy_file_that_pickles_itself(tmp_path):
    import pickle

    from msjgym.core.user_policy import load_object

    (tmp_path / "pol.py").write_text(textwrap.dedent("""
        import pickle

        class Policy:
            def act(self, observation):
                return 0

        POLICY = pickle.loads(pickle.dumps(Policy()))
        """))
    policy = load_object(tmp_path / "pol.py", "POLICY", "pol.py:POLICY")
    assert type(pickle.loads(pickle.dumps(policy))).__name__ == "Policy"
    (tmp_path / "bad.py").write_text("raise RuntimeError('no')\n")
    with pytest.raises(PolicyError, match="importing .* failed: RuntimeError: no"):
        load_object(tmp_path / "bad.py", "X", "bad.py:X")


@pytest.mark.parametrize("env_id", ["msjgym/Dispatch-v0"])
def test_a_deep_copy_samples_from_its_own_mask(env_id):
    import gymnasium as gym

    env = gym.make(env_id).unwrapped
    env.reset(seed=1)
    for _ in range(50):
        env.step(int(env.action_space.sample()))
    twin = copy.deepcopy(env)
    for _ in range(7):
        env.step(int(env.action_space.sample()))
    assert all(twin.action_masks()[int(twin.action_space.sample())] for _ in range(200))
    space = copy.deepcopy(env.action_space)  # the space alone: still the environment's mask
    assert all(env.action_masks()[int(space.sample())] for _ in range(50))


def test_a_large_grid_says_what_checking_it_costs(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sweep, "LARGE_GRID", 30)
    monkeypatch.setattr(sweep, "PLAN_PROBE", 5)
    args = sweep.argparse.Namespace(
        scenario="one-and-n", grid=["arrival_rate=1:2:6", "servers=8:12:5"], policy=["fcfs"], param=[], reps=1,
        jobs=1000, warmup=None, batches=20, seed=0, out=str(tmp_path), backend="local", workers=1, address=None,
        skip_invalid=False, no_progress=True)
    plan = sweep.make_plan(args)
    assert len(plan.tasks) == 30 and len({t.inputs for t in plan.tasks}) == 30
    assert "checking the 30 grid points before anything runs" in capsys.readouterr().err


def test_a_private_error_class_is_reraised_with_its_public_kind(tmp_path):
    (tmp_path / "s.toml").write_text(SCENARIO.replace('{ dist = "exp", rate = 1.0 }',
                                                      '{ dist = "exp", mean = 1e300 }'))
    with pytest.raises(ScenarioError, match="s.toml: classes\\[0\\].service"):
        api.load_scenario(str(tmp_path / "s.toml"))
    assert np.isfinite(1.0)


@pytest.mark.parametrize("where", ["param", "grid", "file"])
def test_an_integer_beyond_pythons_4300_digit_limit(tmp_path, capsys, where):
    """Not in the probe's list, found by the same mechanism: tomllib raises a bare ValueError for an integer of
    more than 4300 digits (Python's limit on int(str)); every reader of a number answers in one line."""
    huge = "9" * 5000
    (tmp_path / "h.toml").write_text(SCENARIO.replace("servers = 10", f"servers = {huge}"))
    argv = {"param": ["theory", "one-and-n", "--param", f"servers={huge}"],
            "grid": ["sweep", "one-and-n", "--grid", f"servers={huge}", "--policy", "fcfs", "--out", str(tmp_path)],
            "file": ["theory", str(tmp_path / "h.toml")]}[where]
    line = _one_line(capsys, main(argv))
    assert len(line) < 400
