"""A sweep with a user's policy file (``FILE.py:NAME``, a Python class or a compiled ``@msj.policy``) runs, and a
name the file does not define is the one-line "defines no" error (the input recorder removed a nested
recording by equality, so two recordings holding the same file ended in ``ValueError: list.remove(x)``)."""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_run import msjgym
from msjgym.core import inputs

ROOT = Path(__file__).resolve().parents[1]

PYTHON_POLICY = """\
class FirstAllowed:
    def act(self, observation, action_mask) -> int:
        return int(action_mask.nonzero()[0][0])
"""


# ---------------------------------------------------------------- the recorder, over every nesting
@st.composite
def blocks(draw, depth: int = 0):
    """A tree of recording blocks: each reads some files (from a small set, so lists are often equal), then runs
    its children, and may end by raising."""
    reads = draw(st.lists(st.sampled_from(["a", "b", "c"]), max_size=3))
    children = draw(st.lists(blocks(depth + 1), max_size=2 if depth < 3 else 0))
    raises = draw(st.booleans())
    return reads, children, raises


def _run_block(block, root: Path, seen: list) -> set:
    """Run one block inside ``recording``; return the files read in it (its children's included)."""
    reads, children, raises = block
    expected: set = set()
    with inputs.recording() as files:
        for name in reads:
            inputs.note_read(root / name)
            expected.add(inputs.real(root / name))
        for child in children:
            try:
                expected |= _run_block(child, root, seen)
            except RuntimeError:
                expected |= seen.pop()
        seen_now = set(files)
    if raises:
        seen.append(expected)
        raise RuntimeError("a failing block")
    assert seen_now == expected
    return expected


@settings(max_examples=200, deadline=None)
@given(tree=blocks())
def test_nested_recordings_each_see_their_files_and_end_cleanly(tree, tmp_path_factory):
    root = tmp_path_factory.getbasetemp()
    seen: list = []
    try:
        _run_block(tree, root, seen)
    except RuntimeError:
        pass
    assert inputs._RECORDERS == []


def test_two_equal_recordings_end_in_any_order():
    with inputs.recording() as outer:
        inputs.note_read("same.py")
        with inputs.recording() as inner:
            inputs.note_read("same.py")
        assert outer == inner and inputs._RECORDERS == [outer] and inputs._RECORDERS[0] is outer
    assert inputs._RECORDERS == []


# ---------------------------------------------------------------- every sweep path with a policy file
@pytest.fixture
def policy_folder(tmp_path: Path) -> Path:
    (tmp_path / "pol.py").write_text(PYTHON_POLICY)
    shutil.copy(ROOT / "examples" / "compiled_first_fit.py", tmp_path / "compiled.py")
    shutil.copy(ROOT / "examples" / "three_class.toml", tmp_path / "scenario.toml")
    return tmp_path


def _rows(out: Path) -> int:
    with sqlite3.connect(out / "results.sqlite") as db:
        return db.execute("select count(*) from tasks").fetchone()[0]


GRIDS = {"no grid": [], "a grid": ["--grid", "arrival_rate=0.5,0.7"]}
POLICIES = {"python class": "pol.py:FirstAllowed", "compiled": "compiled.py:first_fit",
            "with a built-in": "fcfs,pol.py:FirstAllowed"}


@pytest.mark.parametrize("scenario", ["one-and-n", "scenario.toml"])
@pytest.mark.parametrize("grid", GRIDS)
@pytest.mark.parametrize("policy", POLICIES)
def test_a_sweep_of_a_policy_file_runs(policy_folder, scenario, grid, policy):
    args = ["sweep", scenario, *GRIDS[grid], "--policy", POLICIES[policy], "--reps", "2", "--jobs", "500",
            "--workers", "1", "--no-progress", "--out", "out"]
    done = msjgym(*args, cwd=policy_folder)
    assert done.returncode == 0, done.stderr
    points = 2 if GRIDS[grid] else 1
    assert _rows(policy_folder / "out") == points * 2 * len(POLICIES[policy].split(","))
    if scenario == "one-and-n" and not GRIDS[grid]:  # the stored results are found again (keyed by file content)
        again = msjgym(*args, cwd=policy_folder)
        assert again.returncode == 0 and "running 0 (" in again.stdout, again.stdout + again.stderr


def test_a_sweep_of_a_policy_file_on_a_pool_of_workers(policy_folder):
    done = msjgym("sweep", "one-and-n", "--grid", "arrival_rate=0.5,0.7", "--policy", "pol.py:FirstAllowed",
                  "--reps", "2", "--jobs", "500", "--workers", "2", "--no-progress", "--out", "out", cwd=policy_folder)
    assert done.returncode == 0, done.stderr
    assert _rows(policy_folder / "out") == 4


@pytest.mark.parametrize(("scenario", "grid"), [("one-and-n", "no grid"), ("one-and-n", "a grid"),
                                               ("scenario.toml", "a grid")])
@pytest.mark.parametrize("policy", ["pol.py:Nope", "compiled.py:Nope", "fcfs,pol.py:Nope", "pol.py:FirstAllowed.x"])
@pytest.mark.parametrize("skip", [False, True])
def test_a_name_the_file_does_not_define_is_one_line(policy_folder, scenario, grid, policy, skip):
    done = msjgym("sweep", scenario, *GRIDS[grid], "--policy", policy, "--reps", "2", "--jobs", "500",
                  "--workers", "1", "--no-progress", "--out", "out", *(["--skip-invalid"] if skip else []),
                  cwd=policy_folder)
    name = policy.split(",")[-1]
    if skip and policy.startswith("fcfs,"):  # the built-in runs; the bad one is left out with a warning
        assert done.returncode == 0, done.stderr
        assert "warning: skipping" in done.stderr and name in done.stderr
        return
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    if skip:  # each refusal is a warning; then the one error
        assert [line.startswith("msjgym: warning: skipping") for line in lines] == [True] * (len(lines) - 1) + [False]
        assert "defines no" in lines[0] and "no (point, policy) left" in lines[-1], done.stderr
    else:
        assert len(lines) == 1 and "defines no" in lines[0], done.stderr
    assert lines[-1].startswith("msjgym: error:"), done.stderr
    assert not (policy_folder / "out" / "results.sqlite").exists()
