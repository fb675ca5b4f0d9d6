"""A standard output that fails (closed, a full disk, a pipe whose reader left, at any write or at the last flush)
ends a command in one line on stderr, exit status 1, and the whole output saved to the file the line names
(such runs ended in a traceback after the work, and the results were lost)."""
from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from msjgym import cli
from msjgym.core.output import GuardedStdout

FAILURES = {
    "closed": lambda: ValueError("I/O operation on closed file."),
    "disk full": lambda: OSError(errno.ENOSPC, "No space left on device"),
    "broken pipe": lambda: BrokenPipeError(errno.EPIPE, "Broken pipe"),
    "I/O error": lambda: OSError(errno.EIO, "Input/output error"),
}


class FailingStream(io.TextIOBase):
    """A text stream that accepts ``good`` writes, then raises ``failure`` on every write (and, if ``at_flush``,
    fails only when flushed)."""

    def __init__(self, failure: str, good: int, at_flush: bool = False) -> None:
        super().__init__()
        self.failure, self.good, self.at_flush, self.written = failure, good, at_flush, []

    def write(self, text: str) -> int:
        if not self.at_flush and len(self.written) >= self.good:
            raise FAILURES[self.failure]()
        self.written.append(text)
        return len(text)

    def flush(self) -> None:
        if self.at_flush:
            raise FAILURES[self.failure]()

    @property
    def encoding(self) -> str:
        return "utf-8"


def _saved(line: str) -> Path:
    return Path(line.split("the full output is in ")[1].split("'")[1])


@settings(max_examples=80, deadline=None)
@given(failure=st.sampled_from(sorted(FAILURES)), good=st.integers(0, 5), at_flush=st.booleans(),
       texts=st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=8))
def test_every_stream_failure_is_one_line_and_a_saved_copy(failure, good, at_flush, texts):
    stream = FailingStream(failure, good, at_flush)
    err = io.StringIO()
    real_out, real_err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stream, err
    try:
        with GuardedStdout() as out:
            for text in texts:
                sys.stdout.write(text)
        status = out.report(0)
    finally:
        sys.stdout, sys.stderr = real_out, real_err
    failed = at_flush or good < len(texts)
    lines = err.getvalue().strip().splitlines()
    if not failed:
        assert status == 0 and lines == [] and "".join(stream.written) == "".join(texts)
        return
    assert status == 1 and len(lines) == 1 and lines[0].startswith("msjgym: error: standard output could not be "
                                                                     "written"), lines
    saved = _saved(lines[0])
    assert saved.read_text(encoding="utf-8") == "".join(texts)
    saved.unlink()


def test_a_standard_output_closed_before_the_start_is_one_line(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdout", None)
    status = cli.main(["list"])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and "standard output is closed" in line
    saved = _saved(line)
    assert "one-and-n" in saved.read_text(encoding="utf-8")
    saved.unlink()


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_an_evaluations_json_result_is_saved_when_standard_output_fails(capsys, monkeypatch, failure):
    """The whole JSON result, after the run, is in the saved file: nothing computed is lost."""
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdout", FailingStream(failure, good=0))
    status = cli.main(["evaluate", "one-and-n", "--policy", "fcfs", "--reps", "2", "--jobs", "500", "--json",
                       "--no-progress"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and len(lines) == 1, lines
    saved = _saved(lines[0])
    result = json.loads(saved.read_text(encoding="utf-8"))
    assert result["policy"] == "fcfs" and "response_time" in result["metrics"]
    saved.unlink()


# ---------------------------------------------------------------- a real process (the interpreter's own stream)
def _msjgym(*args: str, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return subprocess.run([sys.executable, "-m", "msjgym", *args], env=env, capture_output=False, text=True,
                          stderr=subprocess.PIPE, timeout=300, **kwargs)


def _no_traceback(done: subprocess.CompletedProcess, reason: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1 and reason in lines[0], done.stderr
    saved = _saved(lines[0])
    assert "one-and-n" in saved.read_text(encoding="utf-8")
    saved.unlink()


def test_a_closed_standard_output_in_a_process():
    """``msjgym list >&-``."""
    _no_traceback(_msjgym("list", stdout=None, pass_fds=(), preexec_fn=lambda: os.close(1)),
                  "standard output is closed")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_a_full_disk_in_a_process():
    """``msjgym list > /dev/full``: the error comes at the last flush, after the command."""
    with open("/dev/full", "w") as full:
        _no_traceback(_msjgym("list", stdout=full), "No space left on device")


def test_a_pipe_whose_reader_left_in_a_process():
    """``msjgym list | true``: the reader is gone before msjgym writes."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "msjgym", "list"], env=env, stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(write)
    _no_traceback(done, "Broken pipe")
