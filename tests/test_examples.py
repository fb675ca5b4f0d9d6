"""The files in examples/ load, and the scripts run."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from msjgym.systems.msj import scorecard
from msjgym.api import load_scenario
from msjgym.policies.msj import POLICIES

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.name)
def test_example_scenarios_load(path):
    assert load_scenario(str(path)).model.load < 1


@pytest.mark.parametrize("name, source", [("single_class.toml", "Erlang C"),
                                          ("one_server_mg1.toml", "Pollaczek–Khinchine"),
                                          ("three_class.toml", "open_fcfs")])
def test_example_scenarios_have_exact_references(name, source):
    scenario = load_scenario(str(EXAMPLES / name))
    refs = scorecard.references(scenario.model, POLICIES["fcfs"])
    assert any(r.kind == "exact" and source in r.source for r in refs)


def test_compare_policies_script_runs():
    out = subprocess.run([sys.executable, str(EXAMPLES / "compare_policies.py"), "finite-skip-fig6", "--reps", "2",
                          "--jobs", "2000"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "server-filling" in out.stdout and "E[T]" in out.stdout


def test_training_example_runs(tmp_path):
    pytest.importorskip("sb3_contrib")
    out = subprocess.run([sys.executable, str(EXAMPLES / "train_maskable_ppo.py"), "--steps", "2048", "--jobs", "2000"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "maskable-ppo" in out.stdout and "fcfs" in out.stdout and "first-fit" in out.stdout
