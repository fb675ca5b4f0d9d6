"""Every path option goes through one layer (:mod:`msjgym.core.paths`): a name longer than the file system allows is
a one-line error (it was ``OSError: [Errno 36]``); a file output with a trailing slash, in a missing folder, or on a
FIFO or device is refused before the work; a relative output is resolved once (a policy that changes the working
folder does not move it); a FIFO given as an input is named, never opened."""
from __future__ import annotations

import os
import signal
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_run import msjgym
from msjgym.core.paths import check_output_dir, check_output_file, path_kind
from msjgym.errors import MsjgymError

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "traces" / "sample.swf"
POLICY = "class P:\n    def act(self, observation, action_mask):\n        return int(action_mask.nonzero()[0][0])\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder with a trace scenario (``t.toml``), a policy file, a stand-in results file, and FIFOs."""
    shutil.copy(SAMPLE, tmp_path / "sample.swf")
    (tmp_path / "t.toml").write_text('arrivals = { trace = "sample.swf", scale_servers = 64 }\n')
    (tmp_path / "pol.py").write_text(POLICY)
    (tmp_path / "results.sqlite").write_bytes(b"")
    for name in ("fifo.toml", "fifo.py", "fifo.swf", "fifo.csv", "fifo.png", "fifo.sqlite"):
        os.mkfifo(tmp_path / name)
    (tmp_path / "fifo_trace.toml").write_text('arrivals = { trace = "fifo.swf", scale_servers = 64 }\n')
    return tmp_path


@pytest.fixture(autouse=True)
def never_blocks():
    """A FIFO opened by mistake would block for ever: fail the test after 60 s instead."""
    def stop(*_):
        raise TimeoutError("blocked (a FIFO opened?)")
    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _one_line(run, *fragments: str) -> str:
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1 and lines[0].startswith("msjgym: error: "), run
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert len(lines[0]) < 400, lines[0]  # a long name is shortened in the message
    return lines[0]


# Every option that takes a path, as a command with NAME where the path goes.
PATH_OPTIONS = {
    "--policy FILE.py:NAME": ["evaluate", "one-and-n", "--policy", "NAME.py:P"],
    "--policy sb3:": ["evaluate", "one-and-n", "--policy", "sb3:NAME.zip"],
    "--policy rllib:": ["evaluate", "one-and-n", "--policy", "rllib:NAME"],
    "scenario file": ["evaluate", "NAME.toml", "--policy", "fcfs"],
    "sweep scenario": ["sweep", "NAME.toml", "--policy", "fcfs", "--out", "o"],
    "sweep --policy": ["sweep", "one-and-n", "--policy", "NAME.py:P", "--out", "o"],
    "--per-job": ["evaluate", "t.toml", "--policy", "fcfs", "--reps", "1", "--per-job", "NAME.csv"],
    "sweep --out": ["sweep", "one-and-n", "--policy", "fcfs", "--out", "NAME"],
    "reproduce --out": ["reproduce", "loss-scaling", "--out", "NAME"],
    "plot RESULTS": ["plot", "NAME", "--x", "arrival_rate", "--y", "response_time"],
    "plot --out": ["plot", "results.sqlite", "--x", "arrival_rate", "--y", "response_time", "--out", "NAME.png"],
}


@pytest.mark.parametrize("option", PATH_OPTIONS)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(length=st.integers(256, 5000), char=st.sampled_from("xé_"))
def test_a_name_longer_than_the_file_system_allows_is_one_line(folder, option, length, char):
    name = char * length
    args = [a.replace("NAME", name) for a in PATH_OPTIONS[option]]
    line = _one_line(msjgym(*args, cwd=folder), "the file system allows")
    assert name not in line


FILE_OUTPUTS = {
    "--per-job": ["evaluate", "t.toml", "--policy", "fcfs", "--reps", "1", "--per-job"],
    "plot --out": ["plot", "results.sqlite", "--x", "arrival_rate", "--y", "response_time", "--out"],
}


@pytest.mark.parametrize("option", FILE_OUTPUTS)
@pytest.mark.parametrize("path, fragment", [
    ("new/", "ends with '/'"), ("new/sub/", "ends with '/'"), ("missing/x.png", "does not exist"),
    ("missing/deeper/x.png", "does not exist"), ("fifo.png", "a FIFO"), ("/dev/null", "a device"),
    (".", "is a folder"), ("pol.py/x.png", "is a file, not a folder"),
])
def test_a_file_output_that_cannot_be_a_file_is_refused_before_the_work(folder, option, path, fragment):
    before = sorted(p.name for p in folder.rglob("*"))
    _one_line(msjgym(*FILE_OUTPUTS[option], path, cwd=folder), fragment)
    assert sorted(p.name for p in folder.rglob("*")) == before  # nothing created: no folder, no file


@pytest.mark.parametrize("args, fragment", [
    (["evaluate", "fifo.toml", "--policy", "fcfs"], "a FIFO"),
    (["evaluate", "one-and-n", "--policy", "fifo.py:P"], "a FIFO"),
    (["evaluate", "fifo_trace.toml", "--policy", "fcfs", "--reps", "1"], "not a regular file"),
    (["sweep", "fifo.toml", "--policy", "fcfs", "--out", "o"], "a FIFO"),
    (["plot", "fifo.sqlite", "--x", "a", "--y", "b"], "a FIFO"),
    (["sweep", "one-and-n", "--policy", "fcfs", "--out", "fifo_out"], "a FIFO"),
])
def test_a_fifo_is_named_never_opened(folder, args, fragment):
    (folder / "fifo_out").mkdir()
    os.mkfifo(folder / "fifo_out" / "results.sqlite")
    _one_line(msjgym(*args, cwd=folder), fragment)


def test_a_policy_that_changes_folder_does_not_move_the_output(folder):
    (folder / "elsewhere").mkdir()
    (folder / "mover.py").write_text(
        f"import os\nclass P:\n    def act(self, observation, action_mask):\n"
        f"        os.chdir({str(folder / 'elsewhere')!r})\n        return int(action_mask.nonzero()[0][0])\n")
    done = msjgym("evaluate", "t.toml", "--policy", "mover.py:P", "--reps", "1", "--per-job", "jobs.csv", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert (folder / "jobs.csv").is_file() and not (folder / "elsewhere" / "jobs.csv").exists()
    assert f"rows written to {folder / 'jobs.csv'}" in done.stdout


# ---------------------------------------------------------------- the layer itself
_parts = st.text(alphabet="abc_.-é", min_size=1, max_size=8).filter(lambda s: s not in (".", ".."))


@settings(max_examples=50, deadline=None)
@given(parts=st.lists(_parts, min_size=1, max_size=4), slash=st.booleans())
def test_check_output_file_gives_an_absolute_path_or_one_line(tmp_path_factory, parts, slash):
    base = tmp_path_factory.mktemp("out")
    text = os.path.join(*parts) + ("/" if slash else "")
    here = os.getcwd()
    os.chdir(base)
    try:
        result = check_output_file(text, "--x")
    except MsjgymError as exc:
        message = str(exc)
        assert "\n" not in message and message.startswith("--x ")
        assert ("ends with '/'" in message) == slash
        assert slash or (len(parts) > 1 and "does not exist" in message)
        return
    finally:
        os.chdir(here)
    assert not slash and len(parts) == 1 and result == base / parts[0] and result.is_absolute()
    assert not result.exists()  # the probe is removed


@settings(max_examples=30, deadline=None)
@given(parts=st.lists(_parts, min_size=1, max_size=4))
def test_check_output_dir_is_absolute_and_creates_nothing(tmp_path_factory, parts):
    base = tmp_path_factory.mktemp("dir")
    here = os.getcwd()
    os.chdir(base)
    try:
        result = check_output_dir(os.path.join(*parts), "--out")
    finally:
        os.chdir(here)
    assert result == base.joinpath(*parts) and list(base.iterdir()) == []


@pytest.mark.parametrize("make, kind", [
    (lambda p: p.write_text(""), "file"), (lambda p: p.mkdir(), "folder"), (lambda p: os.mkfifo(p), "special"),
    (lambda p: None, "missing"),
])
def test_path_kind(tmp_path, make, kind):
    make(tmp_path / "x")
    assert path_kind(tmp_path / "x")[0] == kind
    assert path_kind(tmp_path / ("y" * 300))[0] == "unusable"
    assert path_kind("/dev/null")[0] == "special"
