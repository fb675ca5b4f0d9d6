"""Compiled rate rules of the user's for the finite-skip systems (``msjgym.systems.finite_skip.compiled``): declared
in one file with their own parameters, run inside the compiled loop bit for bit like the built-in they restate (the
same JSON metrics and event count), their parameters bound by ``--param``; bad declarations are one-line errors."""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from msjgym.cli import main
from msjgym.errors import PolicyError
from msjgym.evaluate.evaluator import evaluate
from msjgym.systems.finite_skip import compiled as fsk

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "compiled_finite_skip.py"
RUN = dict(reps=2, jobs=5_000, seed=4, references=False)


def _numbers(result) -> dict:
    return {k: (e.mean, e.ci95) for k, e in result.metrics.items()}


def test_uncapped_fcfs_is_tp_fcfs_bit_for_bit():
    mine = fsk.resolve(f"{EXAMPLE}:capped_fcfs").bind(cap=0)
    a = evaluate("finite-skip-fig4a", mine, **RUN)
    b = evaluate("finite-skip-fig4a", "tp-fcfs", **RUN)
    assert a.events == b.events
    assert _numbers(a) == _numbers(b)
    other = evaluate("finite-skip-fig4a", mine.bind(cap=4), **RUN)  # its own parameter is read
    assert other.metrics["response_time"].mean > a.metrics["response_time"].mean


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["evaluate", "finite-skip-fig4a", "--reps", "2", "--jobs", "2000", "--seed", "1", "--json",
                       "--no-progress", *args])
    return status, out.getvalue(), err.getvalue()


def test_its_parameters_are_given_with_param_and_the_json_is_the_builtins():
    status, out, _ = _cli("--policy", f"{EXAMPLE}:capped_fcfs", "--param", "cap=0")
    assert status == 0
    mine = json.loads(out)
    assert mine["policy"] == "capped_fcfs(cap=0)"
    status, out, _ = _cli("--policy", "tp-fcfs")
    builtin = json.loads(out)
    assert mine["metrics"] == builtin["metrics"] and mine["events"] == builtin["events"]


def test_a_parameter_out_of_range_is_one_line():
    status, _, err = _cli("--policy", f"{EXAMPLE}:capped_fcfs", "--param", "cap=-1")
    assert status == 2 and "cap" in err.strip().splitlines()[-1]


def test_a_rule_for_another_system_is_refused():
    rule = fsk.rule(system=fsk.LPS)(lambda n, cls, prm, srv, speeds, k, levels, taken, rates, rng: None)
    with pytest.raises(PolicyError, match="runs on LPS"):
        evaluate("finite-skip-fig4a", rule, **RUN)


def test_bad_declarations_are_refused():
    with pytest.raises(PolicyError, match="ten arguments"):
        fsk.rule(system=fsk.LPS)(lambda n, cls: None)
    with pytest.raises(PolicyError, match="system"):
        fsk.rule(system=7)
    with pytest.raises(PolicyError, match="room for 4"):
        fsk.rule(system=fsk.LPS, params=tuple(fsk.Param(f"p{i}", 1, "") for i in range(5)))
