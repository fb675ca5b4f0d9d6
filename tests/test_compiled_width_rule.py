"""Compiled width rules of the user's for the loss systems (``msjgym.systems.loss.compiled``): declared in one file
with their own parameters, run inside the compiled loop bit for bit like the built-in they restate (the same JSON
metrics and event count); bad declarations are one-line errors. What every family's compiled rules share (``--param``,
the parameters' slots): ``tests/test_compiled_rule_params.py``."""
from __future__ import annotations

from pathlib import Path

import pytest

from msjgym.errors import PolicyError
from msjgym.evaluate.evaluator import evaluate
from msjgym.systems.loss import compiled as loss

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "compiled_width_rule.py"
RUN = dict(reps=2, jobs=20_000, seed=3, references=False)


def _numbers(result) -> dict:
    return {k: (e.mean, e.ci95) for k, e in result.metrics.items()}


def test_at_least_one_is_greedy_bit_for_bit():
    mine = loss.resolve(f"{EXAMPLE}:at_least").bind(least=1)
    a = evaluate("loss-sampled", mine, **RUN)
    b = evaluate("loss-sampled", "greedy", **RUN)
    assert a.events == b.events
    assert _numbers(a) == _numbers(b)
    assert "residual_pasta" in a.metrics  # its declared law: the PASTA and Stein residuals are measured
    other = evaluate("loss-sampled", mine.bind(least=2), **RUN)  # its own parameter is read
    assert other.metrics["blocking_probability"].mean > a.metrics["blocking_probability"].mean


def test_a_restated_random_width_is_the_builtin_bit_for_bit():
    a = evaluate("loss-sampled", f"{EXAMPLE}:random_width", **RUN)
    b = evaluate("loss-sampled", "random-width", **RUN)
    assert a.events == b.events
    mine = _numbers(a)
    assert "residual_pasta" not in mine and "residual_stein" not in mine  # no declared law: left out
    builtin = {k: v for k, v in _numbers(b).items() if k not in ("residual_pasta", "residual_stein")}
    assert mine == builtin


def test_bad_declarations_are_refused():
    with pytest.raises(PolicyError, match="5 arguments"):
        loss.width_rule(lambda m, d, s, b: 0)
    with pytest.raises(PolicyError, match="both"):
        loss.width_rule(block_probability=lambda pmf, b, d: 0.0)


def test_as_an_agent_it_says_where_it_runs():
    with pytest.raises(PolicyError, match="compiled loop only"):
        loss.resolve(f"{EXAMPLE}:at_least").width(1, 2)
