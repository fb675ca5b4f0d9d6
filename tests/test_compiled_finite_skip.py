"""Compiled rate rules of the user's for the finite-skip systems (``msjgym.systems.finite_skip.compiled``): declared
in one file with their own parameters, run inside the compiled loop bit for bit like the built-in they restate (the
same JSON metrics and event count); bad declarations are one-line errors. What every family's compiled rules share
(``--param``, the parameters' slots): ``tests/test_compiled_rule_params.py``."""
from __future__ import annotations

from pathlib import Path

import pytest

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


def test_a_rule_for_another_system_is_refused():
    rule = fsk.rule(system=fsk.LPS)(lambda n, cls, prm, srv, speeds, k, levels, taken, rates, rng: None)
    with pytest.raises(PolicyError, match="runs on LPS"):
        evaluate("finite-skip-fig4a", rule, **RUN)


def test_bad_declarations_are_refused():
    with pytest.raises(PolicyError, match="ten arguments"):
        fsk.rule(system=fsk.LPS)(lambda n, cls: None)
    with pytest.raises(PolicyError, match="system"):
        fsk.rule(system=7)
