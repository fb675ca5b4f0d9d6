"""Requested run times as a job attribute: read from SWF field 9 and the CSV ``requested`` column, kept when below
the run time, seen by compiled policies (``estimate(s, j)``), and the replay's ``arrivals.overrun`` option: "run"
(the default: the job runs its recorded duration) or "kill" (killed at its requested time, counted)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from msjgym.api import load_scenario
from msjgym.core import rng
from msjgym.systems.msj.trace.files import TraceError, kill_at_requested, read_trace
from msjgym.errors import ScenarioError
from msjgym.policies.msj import POLICIES
from msjgym.systems.msj import compiled
from msjgym.systems.msj.simulation import MSJSimulation, RunConfig
from msjgym.systems.msj.state import DONE

SJF_USER = f"{Path(__file__).with_name('data_sjf_policy.py')}:sjf_requested"

UNDER = """arrival_time,need,duration,requested
0,2,10,5
1,1,3,3
2,2,1,
"""


def _scenario(tmp_path, text: str, servers: int, overrun: str | None = None, name: str = "t"):
    (tmp_path / f"{name}.csv").write_text(text)
    extra = "" if overrun is None else f', overrun = "{overrun}"'
    (tmp_path / f"{name}.toml").write_text(
        f'servers = {servers}\narrivals = {{ trace = "{name}.csv", scale_servers = {servers}{extra} }}\n')
    return load_scenario(str(tmp_path / f"{name}.toml"))


def _starts(sc, policy) -> list[float]:
    m = sc.model
    sim = MSJSimulation(m, policy, RunConfig(jobs=len(m.trace), warmup=0, batches=1, debug=True),
                        rng.spawn_states(0, 1)[0])
    while sim.advance(0, 10_000) != DONE:
        pass
    return [float(x) for x in sim.completion_times() - m.trace.duration]


def test_csv_requested_column_and_underestimates_are_kept(tmp_path):
    """An empty (or -1) requested time is unknown: the estimate is the duration; one below the duration is kept."""
    (tmp_path / "t.csv").write_text(UNDER)
    trace = read_trace(tmp_path / "t.csv", servers=2)
    assert trace.estimate.tolist() == [5.0, 3.0, 1.0] and trace.duration.tolist() == [10.0, 3.0, 1.0]
    assert any("1 jobs ran longer than their requested time" in n for n in trace.notes)
    (tmp_path / "plain.csv").write_text("arrival_time,need,duration\n0,1,2\n1,1,3\n")
    plain = read_trace(tmp_path / "plain.csv", servers=1)
    assert np.array_equal(plain.estimate, plain.duration)


@pytest.mark.parametrize("text, message", [
    ("arrival_time,need,duration,walltime\n0,1,1,1\n", "header must be arrival_time,need,duration .*requested"),
    ("arrival_time,need,duration,requested\n0,1,1,abc\n", "line 2: requested"),
    ("arrival_time,need,duration,requested\n0,1,1\n", r"line 2: expected 4 fields \(.*,requested\), got 3"),
])
def test_csv_errors_name_the_line_and_column(text, message, tmp_path):
    (tmp_path / "bad.csv").write_text(text)
    with pytest.raises(TraceError, match=message):
        read_trace(tmp_path / "bad.csv")


def test_overrun_run_versus_kill_worked_out_by_hand(tmp_path):
    """Two servers, EASY (FCFS order). A (0, 2 servers, runs 10, requested 5), B (1, 1, 3, requested 3), C (2, 2, 1,
    requested unknown = 1).

    run (default): A holds both servers until 10; from 5 on the scheduler sees it ending "now". B starts at 10 (ends
    13), C (2 servers) at 13. Starts A0 B10 C13.
    kill: A is killed at 5 (its duration becomes 5); B starts at 5 (ends 8), C at 8. Starts A0 B5 C8; the note
    counts one killed job and 5 time units of service cut."""
    easy = POLICIES["easy-backfilling"]
    run = _scenario(tmp_path, UNDER, 2, name="run")
    assert _starts(run, easy) == [0, 10, 13]
    assert _scenario(tmp_path, UNDER, 2, "run", name="run2").model.trace.duration.tolist() == [10, 3, 1]
    kill = _scenario(tmp_path, UNDER, 2, "kill", name="kill")
    assert kill.model.trace.duration.tolist() == [5, 3, 1]
    assert _starts(kill, easy) == [0, 5, 8]
    assert any("1 job(s) killed at their requested time" in n and "5 time units" in n for n in kill.model.trace.notes)


def test_kill_leaves_a_trace_without_underestimates_alone(tmp_path):
    (tmp_path / "ok.csv").write_text("arrival_time,need,duration,requested\n0,1,2,4\n1,1,3,3\n")
    trace = read_trace(tmp_path / "ok.csv", servers=1)
    assert kill_at_requested(trace) is trace


def test_overrun_errors_and_overrides(tmp_path):
    with pytest.raises(ScenarioError, match=r"arrivals.overrun.*'run', 'kill'"):
        _scenario(tmp_path, UNDER, 2, "stop")
    _scenario(tmp_path, UNDER, 2, name="base")
    sc = load_scenario(str(tmp_path / "base.toml"), {"arrivals.overrun": "kill"})
    assert sc.model.trace.duration.tolist() == [5, 3, 1]


def test_a_compiled_policy_of_the_users_reads_requested_times(tmp_path):
    """SJF by requested time written by a user with ``estimate(s, j)`` is the built-in priority(order=sjf,
    backfill=none), job for job, on a trace whose requested times differ from (and undercut) the run times."""
    gen = np.random.default_rng(4)
    lines = ["arrival_time,need,duration,requested"]
    t = 0.0
    for _ in range(300):
        t += float(gen.exponential(2.0))
        run = float(np.ceil(gen.exponential(20.0)))
        req = float(np.ceil(run * gen.uniform(0.5, 3.0)))
        lines.append(f"{t:.3f},{int(gen.integers(1, 9))},{run},{req}")
    sc = _scenario(tmp_path, "\n".join(lines) + "\n", 8, name="many")
    assert np.any(sc.model.trace.estimate < sc.model.trace.duration)
    builtin = _starts(sc, POLICIES["priority"].bind(order="sjf", backfill="none"))
    assert _starts(sc, compiled.resolve(SJF_USER)) == builtin
