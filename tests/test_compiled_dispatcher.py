"""Compiled dispatchers of the user's (``msjgym.systems.dispatch.compiled``): declared in one file with their own
parameters, run inside the compiled loop bit for bit like the built-in they restate, their parameters bound by
``--param``; bad declarations are one-line errors."""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from msjgym.cli import main
from msjgym.errors import PolicyError
from msjgym.evaluate.evaluator import evaluate
from msjgym.policies.dispatch import POLICIES
from msjgym.systems.dispatch import compiled as lb

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "compiled_dispatcher.py"
RUN = dict(reps=2, jobs=20_000, seed=1, references=False)


def test_a_user_jsq_d_is_the_builtin_bit_for_bit():
    mine = lb.resolve(f"{EXAMPLE}:my_jsq_d").bind(sample=3)
    a = evaluate("lb-dispatch", mine, **RUN)
    b = evaluate("lb-dispatch", POLICIES["jsq-d"].bind(d=3), **RUN)
    assert a.events == b.events and a.replications == b.replications
    assert {k: (e.mean, e.ci95) for k, e in a.metrics.items()} == {k: (e.mean, e.ci95) for k, e in b.metrics.items()}
    other = evaluate("lb-dispatch", mine.bind(sample=2), **RUN)  # its own parameter is read
    assert other.metrics["response_time"].mean != a.metrics["response_time"].mean


ROUND_ROBIN = """
import msjgym.systems.dispatch.compiled as lb


@lb.dispatcher(own=1)
def my_round_robin(st, pr, b, now):
    i = lb.own_get(st, 0)
    lb.own_set(st, 0, i + 1 if i + 1 < lb.servers(pr) else 0)
    return i
"""


def test_a_user_dispatcher_keeps_state_in_its_own_area(tmp_path):
    """A compiled round-robin whose pointer is its own area (zeroed at every reset) is the built-in bit for bit."""
    path = tmp_path / "rr.py"
    path.write_text(ROUND_ROBIN)
    mine = lb.resolve(f"{path}:my_round_robin")
    assert mine.own_ints == 1
    a = evaluate("lb-dispatch", mine, **RUN)
    b = evaluate("lb-dispatch", "round-robin", **RUN)
    assert a.events == b.events and a.replications == b.replications


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["evaluate", "lb-dispatch", "--policy", f"{EXAMPLE}:below_threshold", "--reps", "2", "--jobs",
                       "5000", "--seed", "1", "--json", *args])
    return status, out.getvalue(), err.getvalue()


def test_its_parameters_are_given_with_param():
    status, out, _ = _cli("--param", "sample=3", "--param", "threshold=1")
    assert status == 0
    assert json.loads(out)["policy"] == "below_threshold(sample=3, threshold=1)"
    # threshold = 1: an empty server is taken at once, else the shortest of the sample: JSQ(3) decision for decision
    builtin = evaluate("lb-dispatch", POLICIES["jsq-d"].bind(d=3), reps=2, jobs=5000, seed=1, references=False)
    assert json.loads(out)["events"] == builtin.events


def test_a_parameter_out_of_range_is_one_line():
    status, _, err = _cli("--param", "sample=0")
    assert status == 2 and "sample" in err.strip().splitlines()[-1]


def test_bad_declarations_are_refused():
    with pytest.raises(PolicyError, match="four arguments"):
        lb.dispatcher(lambda st, pr: 0)
    with pytest.raises(PolicyError, match="own = -1; must be an integer >= 0"):
        lb.dispatcher(own=-1)
    with pytest.raises(PolicyError, match="room for 4"):
        lb.dispatcher(params=tuple(lb.Param(f"p{i}", 1, "") for i in range(5)))


def test_a_server_out_of_range_or_a_bad_sample_stops_the_run_in_one_line(tmp_path):
    (tmp_path / "bad.py").write_text(
        "import msjgym.systems.dispatch.compiled as lb\n\n"
        "@lb.dispatcher\ndef nowhere(st, pr, b, now):\n    return lb.servers(pr)\n\n"
        "@lb.dispatcher(params=(lb.Param('sample', 2, '', low=1, integer=True),))\n"
        "def too_many(st, pr, b, now):\n    lb.sample(st, pr, b, lb.arg(pr, 0))\n    return lb.sampled(st, 0)\n")
    with pytest.raises(PolicyError, match=r"dispatcher nowhere: returned server \d+; valid: 0 \.\. \d+ \(arrival 1 "):
        evaluate("lb-dispatch", f"{tmp_path / 'bad.py'}:nowhere", reps=1, jobs=100, seed=1, references=False)
    big = lb.resolve(f"{tmp_path / 'bad.py'}:too_many").bind(sample=10**6)
    with pytest.raises(PolicyError, match=r"sampled 1000000 servers; valid: 1 \.\. \d+ \(servers\)"):
        evaluate("lb-dispatch", big, reps=1, jobs=100, seed=1, references=False)
