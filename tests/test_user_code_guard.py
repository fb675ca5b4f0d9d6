"""User code cannot escape the guard: any exception of a policy's file, constructor, act property or act
(BaseException subclasses such as GeneratorExit and asyncio.CancelledError included) ends in one line; Ctrl-C keeps
its meaning and stops any run, compiled ones included, within a couple of CPU seconds; a compiled policy's integer
division by zero raises as in Python."""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
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


# ``python -m msjgym``, with a probe: after the first chunk of events it prints the CPU time the process has used, and
# at exit the CPU time again, the number of chunks run, the most events they could hold and the run's jobs (stderr
# lines starting "probe:")
PROBE = """
import atexit, runpy, sys, time
import msjgym.evaluate.evaluator as ev

run_replications = ev.run_replications


def probed(sim, *args, **kwargs):
    advance, chunks = sim.advance, []

    def counted(rep, max_events):
        status = advance(rep, max_events)
        chunks.append(max_events)
        if len(chunks) == 1:
            print(f"probe: simulating {time.process_time():.6f}", file=sys.stderr, flush=True)
        return status

    sim.advance = counted
    atexit.register(lambda: print(f"probe: exit {time.process_time():.6f} {len(chunks)} {sum(chunks)} "
                                  f"{sim.reps * sim.per_rep}", file=sys.stderr, flush=True))
    return run_replications(sim, *args, **kwargs)


ev.run_replications = probed
sys.argv[0] = "msjgym"
runpy.run_module("msjgym", run_name="__main__")
"""
CPU_AFTER_SIGINT = 3.0
"""CPU seconds a run may use from Ctrl-C to its exit: the rest of one chunk (about 0.05 s) and the interpreter's exit.
CPU time, not wall-clock time: a loaded machine stretches the wall time of the same work, not its CPU time."""


def cpu_seconds(pid: int) -> float | None:
    """The CPU seconds (user + system, every thread) process ``pid`` has used so far, read from ``/proc`` (Linux);
    None where there is no ``/proc``. Read by the test when it sends the signal, so that the time the test itself takes
    to react (long on a loaded machine) is not counted against the run."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14-15 of stat(5)


@pytest.mark.parametrize("policy", ["fcfs", str(ROOT / "examples/compiled_first_fit.py") + ":first_fit"])
def test_ctrl_c_stops_a_long_compiled_run_within_seconds(policy):
    """SIGINT to a process running a long evaluation (built-in, and a compiled policy of the user's, both in the
    compiled loop, sent once it has simulated a chunk of events): it exits with status 130 and one line, having used
    at most ``CPU_AFTER_SIGINT`` CPU seconds after the signal (counted from the process's CPU time when the signal was
    sent, or from its first chunk where there is no ``/proc``), a few chunks of a run that needs several minutes."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # SIGINT at its default in the child, as in a terminal's process: an ignored disposition is inherited across exec,
    # and a test runner's worker may have SIGINT ignored, depending on the tests it ran before (Python then installs
    # no KeyboardInterrupt handler, and the run, rightly, ignores Ctrl-C: `msjgym ... &` in a script stays running)
    proc = subprocess.Popen([sys.executable, "-c", PROBE, "evaluate", "one-and-n", "--policy", policy, "--reps", "4",
                             "--jobs", "50000000", "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for line in proc.stderr:
            lines.put(line.rstrip("\n"))
        lines.put(None)  # the end of its output

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    err: list[str] = []
    try:
        while not err or not err[-1].startswith("probe: simulating"):  # imports, kernel loading (or compiling)
            line = lines.get(timeout=600)
            assert line is not None, ("the run ended before simulating", proc.wait(), err)
            err.append(line)
        at_signal = cpu_seconds(proc.pid)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=600)  # a bound against a hang only: the assertions below are on CPU time
        reader.join(timeout=60)
    finally:
        proc.kill()
    while not lines.empty():
        line = lines.get()
        err += [] if line is None else [line]
    probes = {line.split()[1]: line.split()[2:] for line in err if line.startswith("probe:")}
    said = [line for line in err if not line.startswith(("probe:", "msjgym: compiling"))]
    assert proc.returncode == 130 and said == ["msjgym: interrupted"], (proc.returncode, err)
    cpu = float(probes["exit"][0]) - (float(probes["simulating"][0]) if at_signal is None else at_signal)
    chunks, events, jobs = (int(x) for x in probes["exit"][1:])
    assert cpu < CPU_AFTER_SIGINT, f"{cpu:.2f} CPU seconds after Ctrl-C ({chunks} chunks run)"
    assert events < jobs / 10, (chunks, events, jobs)  # it stopped long before its end (about 2 events per job)
