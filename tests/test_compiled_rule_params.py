"""What every family's compiled policies of the user's share, tested once over the families: parameters bound by
``--param`` (the JSON then equals the built-in's the rule restates), a parameter out of range in one line, and the one
check of their declarations (:func:`msjgym.core.user_policy.compiled_params`): no more parameters than the loop's
slots, each a ``Param``. Each family's own file tests what only it has (its kernel's arguments, its laws)."""
from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from msjgym.cli import main
from msjgym.errors import PolicyError
from msjgym.systems.dispatch import compiled as lb
from msjgym.systems.finite_skip import compiled as fsk
from msjgym.systems.loss import compiled as loss

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@dataclass(frozen=True)
class Family:
    """A family's compiled rule in ``examples/``: the scenario it runs on, its parameter, a value with which it is
    the built-in ``builtin`` decision for decision, a value out of range, and its decorator given ``params``."""

    scenario: str
    example: str
    rule: str
    params: tuple[str, ...]
    builtin: str
    bad: str
    declare: Callable[[tuple[Any, ...]], Any]


FAMILIES = {
    "loss": Family("loss-sampled", "compiled_width_rule.py", "at_least", ("least=1",), "greedy", "least=0",
                   lambda params: loss.width_rule(params=params)),
    "finite-skip": Family("finite-skip-fig4a", "compiled_finite_skip.py", "capped_fcfs", ("cap=0",), "tp-fcfs",
                          "cap=-1", lambda params: fsk.rule(system=fsk.LPS, params=params)),
    "dispatch": Family("lb-dispatch", "compiled_dispatcher.py", "below_threshold", ("sample=3", "threshold=1"),
                       "jsq-d", "sample=0", lambda params: lb.dispatcher(params=params)),
}
ROOM = 4
"""The parameter slots of every family's compiled loop (``NARG``)."""


def evaluate_json(scenario: str, *args: str) -> tuple[int, str, str]:
    """``msjgym evaluate SCENARIO --reps 2 --jobs 2000 --seed 1 --json ARGS``: (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["evaluate", scenario, "--reps", "2", "--jobs", "2000", "--seed", "1", "--json",
                       "--no-progress", *args])
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name", list(FAMILIES))
def test_its_parameters_are_given_with_param_and_the_json_is_the_builtins(name):
    f = FAMILIES[name]
    params = [a for p in f.params for a in ("--param", p)]
    status, out, err = evaluate_json(f.scenario, "--policy", f"{EXAMPLES / f.example}:{f.rule}", *params)
    assert status == 0, err
    mine = json.loads(out)
    assert mine["policy"] == f"{f.rule}({', '.join(f.params)})"
    builtin_params = ["--param", "d=3"] if name == "dispatch" else []  # jsq-d samples 3, as sample=3 does
    status, out, err = evaluate_json(f.scenario, "--policy", f.builtin, *builtin_params)
    builtin = json.loads(out)
    assert mine["events"] == builtin["events"]
    if name != "dispatch":  # the dispatcher's JSON has no law of its own: the events are its decisions' witness
        assert mine["metrics"] == builtin["metrics"]


@pytest.mark.parametrize("name", list(FAMILIES))
def test_a_parameter_out_of_range_is_one_line(name):
    f = FAMILIES[name]
    status, _, err = evaluate_json(f.scenario, "--policy", f"{EXAMPLES / f.example}:{f.rule}", "--param", f.bad)
    assert status == 2 and f.bad.split("=")[0] in err.strip().splitlines()[-1], err


@pytest.mark.parametrize("name", list(FAMILIES))
def test_a_declaration_has_at_most_room_for_its_loops_parameters_each_a_param(name):
    declare = FAMILIES[name].declare
    module = {"loss": loss, "finite-skip": fsk, "dispatch": lb}[name]
    with pytest.raises(PolicyError, match=f"room for {ROOM}"):
        declare(tuple(module.Param(f"p{i}", 1, "") for i in range(ROOM + 1)))
    with pytest.raises(PolicyError, match="must be msjgym.api.Param declarations"):
        declare(("p0",))
    assert callable(declare(tuple(module.Param(f"p{i}", 1, "") for i in range(ROOM))))  # the control: room is enough
