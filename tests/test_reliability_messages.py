"""Reliability, messages that mislead: each says what is wrong and what to do, and a policy that calls
``sys.exit`` is a one-line error, never a silent exit 0."""
from __future__ import annotations

from pathlib import Path

import pytest

from msjgym import api
from msjgym.cli import main
from msjgym.systems.msj.trace.files import TraceError, read_trace
from msjgym.errors import ScenarioError

SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "traces" / "sample.swf"
THREE = Path(__file__).resolve().parents[1] / "examples" / "three_class.toml"


def _error(capsys, status: int) -> str:
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and err.count("\n") == 1 and err.startswith("msjgym: error: "), (out, err)
    return err


def test_unknown_scenario_lists_every_family_and_points_to_list(capsys):
    """Issue: "the unknown-scenario error lists only the MSJ built-ins (`msjgym evaluate no-such-scenario`) — it
    should list every family's scenarios or point to `msjgym list`"."""
    err = _error(capsys, main(["evaluate", "no-such-scenario", "--policy", "fcfs"]))
    assert "msjgym list" in err
    for family in api.families():
        assert family.scenarios()[0][0] in err


def test_too_few_jobs_for_the_batches_says_what_to_do(capsys):
    """Issue: "`msjgym evaluate one-and-n --jobs 1` is refused by naming a `batches` default the user never set
    (say what to do ...)"."""
    err = _error(capsys, main(["evaluate", "one-and-n", "--policy", "fcfs", "--jobs", "1"]))
    assert err.startswith("msjgym: error: jobs = 1: at least 20 jobs for the 20 batch means") and "batches" in err
    err = _error(capsys, main(["evaluate", "loss-sampled", "--policy", "greedy", "--jobs", "3"]))
    assert err.startswith("msjgym: error: jobs = 3: at least 20 jobs for the 20 batch means")


def test_a_duplicate_class_name_points_at_the_duplicate(tmp_path):
    """Issue: "a duplicate class name in a TOML scenario points at the wrong entry"."""
    path = tmp_path / "dup.toml"
    path.write_text(THREE.read_text().replace('name = "four"', 'name = "one"'))
    duplicate = r"classes\[2\]\.name = 'one': class names must be unique \(classes\[0\] has this name too\)"
    with pytest.raises(ScenarioError, match=duplicate):
        api.load_scenario(str(path))


def _swf(tmp_path: Path, header: str, order: list[int] | None = None) -> Path:
    jobs = [line for line in SAMPLE.read_text().splitlines() if not line.startswith(";")][:5]
    jobs = [jobs[i] for i in order] if order else jobs
    path = tmp_path / "t.swf"
    path.write_text("\n".join([header, *jobs]) + "\n")
    return path


def test_an_unknown_maxprocs_header_gets_a_note(tmp_path):
    """Issue: "invalid SWF `MaxProcs` headers ... are handled without a note (see msjgym/systems/msj/trace/files.py)"; and the
    machine size is never guessed from the largest job: without a valid header, the caller's servers are required.
    -1 is the format's "unknown"; any other value that is not a machine size is an error (item 4:
    tests/test_validated_values.py)."""
    with pytest.raises(TraceError, match=r"t\.swf: the header gives the machine size neither as MaxProcs nor as "
                                         r"MaxNodes; give the traced machine's processors as servers = N"):
        read_trace(_swf(tmp_path, "; MaxProcs: -1"))
    trace = read_trace(_swf(tmp_path, "; MaxProcs: -1"), servers=16)
    assert trace.machine == 16
    assert trace.notes == ["line 1: MaxProcs -1 (unknown); ignored"]
    assert read_trace(_swf(tmp_path, "; MaxProcs: 128")).notes == []


@pytest.mark.parametrize("value", ["abc", "0", "12.5", "1e20"])
def test_an_invalid_maxprocs_header_is_an_error(tmp_path, value):
    expected = r"t\.swf line 1: MaxProcs = .*: (must be an integer in \[1, 1,000,000,000\]|not a number)"
    with pytest.raises(TraceError, match=expected):
        read_trace(_swf(tmp_path, f"; MaxProcs: {value}"), servers=16)


def test_an_unsorted_trace_gets_a_note(tmp_path):
    """Issue: "... and unsorted traces are handled without a note"."""
    trace = read_trace(_swf(tmp_path, "; MaxProcs: 128", [2, 0, 1, 4, 3]))
    assert list(trace.arrival) == sorted(trace.arrival)
    assert trace.notes == ["not in arrival order (2 job(s) arrive before the job listed above them); replayed in "
                           "arrival order (sorted, ties kept in file order)"]
    csv = tmp_path / "t.csv"
    csv.write_text("arrival_time,need,duration\n3,1,1\n1,1,1\n2,2,1\n")
    assert read_trace(csv, servers=2).notes[0].startswith("not in arrival order (1 job(s)")


EXITING = '''
class Exit:
    def act(self, observation, action_mask=None):
        raise SystemExit(0)


class Interrupt:
    def act(self, observation, action_mask=None):
        raise KeyboardInterrupt


class ExitAtInit:
    def __init__(self):
        raise SystemExit(0)

    def act(self, observation):
        return 0
'''

FAMILIES = [f.name for f in api.families() if api.smoke_case(f).user_options is not None]
"""Every family that runs a policy of the user's (its smoke case says under which options)."""


def _evaluate(path: Path, name: str, family: str) -> int:
    smoke = api.smoke_case(api.family(family))
    return main(["evaluate", smoke.scenario, "--policy", f"{path}:{name}", "--reps", "1", "--jobs", "300", "--seed",
                 "1", "--no-progress", *smoke.flags(smoke.user_options)])


@pytest.mark.parametrize("family", FAMILIES)
def test_a_policy_calling_sys_exit_is_one_line_exit_2_on_every_family(tmp_path, capsys, family):
    """Issue: "a policy calling `SystemExit(0)` (a policy file whose act raises SystemExit(0)) exits 0 with no output
    — it must be a one-line error with exit 2, naming the policy, on every family's user-policy path"."""
    assert FAMILIES  # the registry's families with a user-policy path
    path = tmp_path / "exiting.py"
    path.write_text(EXITING)
    err = _error(capsys, _evaluate(path, "Exit", family))
    assert f"policy {path}:Exit" in err and "sys.exit(0)" in err


def test_a_policy_raising_keyboard_interrupt_stops_the_run_as_ctrl_c(tmp_path, capsys):
    """Issue: "KeyboardInterrupt must still stop the run as Ctrl-C does, exit 130"."""
    path = tmp_path / "exiting.py"
    path.write_text(EXITING)
    assert _evaluate(path, "Interrupt", "msj") == 130
    assert capsys.readouterr().err == "msjgym: interrupted\n"


def test_sys_exit_while_loading_the_policy_is_one_line(tmp_path, capsys):
    """The same at import and at construction (the user-policy loader, shared by every family)."""
    path = tmp_path / "exiting.py"
    path.write_text(EXITING)
    err = _error(capsys, _evaluate(path, "ExitAtInit", "msj"))
    assert "constructing it called sys.exit(0)" in err
    (tmp_path / "bye.py").write_text("raise SystemExit(3)\n")
    err = _error(capsys, _evaluate(tmp_path / "bye.py", "Policy", "loss"))
    assert "importing" in err and "sys.exit(3)" in err
