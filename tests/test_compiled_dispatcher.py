"""Compiled dispatchers of the user's (``msjgym.systems.dispatch.compiled``): declared in one file with their own
parameters, run inside the compiled loop bit for bit like the built-in they restate; bad declarations are one-line
errors. What every family's compiled rules share (``--param``, the parameters' slots):
``tests/test_compiled_rule_params.py``."""
from __future__ import annotations

from pathlib import Path

import pytest

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


def test_bad_declarations_are_refused():
    with pytest.raises(PolicyError, match="four arguments"):
        lb.dispatcher(lambda st, pr: 0)
    with pytest.raises(PolicyError, match="own = -1; must be an integer >= 0"):
        lb.dispatcher(own=-1)


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
