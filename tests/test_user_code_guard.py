"""User code cannot escape the guard: any exception of a policy's file, constructor, act property or act
(BaseException subclasses such as GeneratorExit and asyncio.CancelledError included) ends in one line; Ctrl-C keeps
its meaning and stops any run, compiled ones included, within a couple of seconds; a compiled policy's integer
division by zero raises as in Python."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_run import msjgym

ROOT = Path(__file__).resolve().parents[1]
RAISED = ["GeneratorExit()", "asyncio.CancelledError()", "StopIteration()", "ValueError('x')", "BaseException('b')"]
PLACES = {
    "module": "import asyncio\nraise {exc}\nclass P:\n    def act(self, obs, mask):\n        return 0\n",
    "constructor": "import asyncio\nclass P:\n    def __init__(self):\n        raise {exc}\n"
                   "    def act(self, obs, mask):\n        return 0\n",
    "act property": "import asyncio\nclass P:\n    @property\n    def act(self):\n        raise {exc}\n",
    "act": "import asyncio\nclass P:\n    def act(self, obs, mask):\n        raise {exc}\n",
}


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("exc", RAISED)
def test_any_exception_of_the_users_code_is_one_line(tmp_path, place, exc):
    (tmp_path / "pol.py").write_text(PLACES[place].format(exc=exc))
    run = msjgym("evaluate", "one-and-n", "--policy", f"{tmp_path / 'pol.py'}:P", "--reps", "1", "--jobs", "50",
                 "--no-progress")
    assert run.returncode == 2, run
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("msjgym: error:") and exc.split("(")[0].split(".")[-1] in lines[0]


def test_a_compiled_policy_divides_by_zero_as_python_does(tmp_path):
    (tmp_path / "div.py").write_text(
        "import msjgym.systems.msj.compiled as msj\n\n\n@msj.policy\ndef div(s):\n    free = msj.free_servers(s)\n"
        "    if free < msj.servers(s):\n        free = 7 // (free - free)\n    for c in range(msj.num_classes(s)):\n"
        "        while msj.first_waiting(s, c) >= 0 and msj.need(s, c) <= msj.free_servers(s):\n"
        "            msj.start(s, c)\n")
    run = msjgym("evaluate", "one-and-n", "--policy", f"{tmp_path / 'div.py'}:div", "--reps", "1", "--jobs", "100")
    errors = [ln for ln in run.stderr.strip().splitlines() if not ln.startswith("msjgym: compiling")]
    assert run.returncode == 2 and len(errors) == 1 and "it raised ZeroDivisionError" in errors[0]


@pytest.mark.parametrize("policy", ["fcfs", str(ROOT / "examples/compiled_first_fit.py") + ":first_fit"])
def test_ctrl_c_stops_a_long_compiled_run_within_seconds(policy):
    """SIGINT to a process running a long evaluation (built-in, and a compiled policy of the user's, both in the
    compiled loop): it exits within 3 s with status 130 and one line."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "msjgym", "evaluate", "one-and-n", "--policy", policy, "--reps",
                             "4", "--jobs", "50000000", "--no-progress"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(12)  # imports and kernel loading, then simulating (compiling, on a cold cache, takes longer)
        assert proc.poll() is None, proc.communicate()
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        took = time.perf_counter() - sent
    finally:
        proc.kill()
    lines = [ln for ln in err.strip().splitlines() if not ln.startswith("msjgym: compiling")]
    assert proc.returncode == 130 and lines == ["msjgym: interrupted"], (proc.returncode, err)
    assert took < 3.0, took
