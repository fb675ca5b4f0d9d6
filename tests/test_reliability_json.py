"""Reliability, strict JSON: every ``--json`` (``msjgym evaluate``, ``msjgym theory``; no other command
has one) is valid for strict parsers, on every family, stable or not: no ``Infinity`` or ``NaN`` tokens."""
from __future__ import annotations

import json

import pytest

from msjgym import api
from msjgym.cli import main

from cli_run import msjgym


def _strict(text: str) -> dict:
    def refuse(token: str) -> None:
        raise ValueError(f"not strict JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def test_theory_json_with_an_infinite_load_is_strict(capsys):
    """Issue: "`--json` must be valid JSON for strict parsers in every case (no `Infinity`/`NaN` tokens) ...
    infinite references, theory outputs". `msjgym theory one-and-n --param arrival_rate=1e308 --json` printed
    `"load": Infinity`."""
    assert main(["theory", "one-and-n", "--param", "arrival_rate=1e308", "--json"]) == 0
    result = _strict(capsys.readouterr().out)
    assert result["load"] is None


def test_an_overflowing_load_is_infinite_without_a_warning():
    """λ = 1e308 makes λ·m·E[S] overflow: the load is infinite (every policy unstable), which is the answer; numpy's
    "overflow encountered" warning printed two stray lines on stderr."""
    run = msjgym("theory", "one-and-n", "--param", "arrival_rate=1e308", "--json")
    assert run.returncode == 0 and run.stderr == "", run.stderr
    assert _strict(run.stdout)["load"] is None


@pytest.mark.parametrize("family", [f.name for f in api.families()])
def test_theory_json_is_strict_on_every_family_stable_or_not(capsys, family):
    """Issue: "for every command that has `--json` and every family (unstable runs, ... theory outputs)"."""
    fam = api.family(family)
    for name, _ in fam.scenarios():
        for policy in fam.policies():
            if main(["theory", name, "--policy", policy, "--json"]) == 0:  # 2: the policy cannot run there
                result = _strict(capsys.readouterr().out)
                assert result["family"] == family
        capsys.readouterr()


@pytest.mark.parametrize("args", [
    ["--param", "arrival_rate=5", "--reps", "2", "--jobs", "4000"],  # unstable: no metrics, a growth rate
    ["--reps", "1", "--jobs", "40", "--warmup", "0"],  # one short replication: CIs from 20 batch means of 2 jobs
])
def test_evaluate_json_is_strict_stable_or_not(capsys, args):
    """Issue: "(unstable runs, empty metrics, infinite references ...)"."""
    assert main(["evaluate", "one-and-n", "--policy", "fcfs", "--seed", "3", "--json", "--no-progress", *args]) == 0
    _strict(capsys.readouterr().out)
