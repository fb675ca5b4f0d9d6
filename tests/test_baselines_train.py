"""baselines/train.py without training: scenario files in recipes, policies that refuse a scenario, the reference
column of the comparison table."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import msjgym
from msjgym.errors import PolicyError

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def train():
    spec = importlib.util.spec_from_file_location("_train_baselines", ROOT / "baselines" / "train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_recipe_scenario_file_resolves_from_any_working_directory(train, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = train.load_config(ROOT / "baselines" / "maskable_ppo_preemptive_nondivisible.toml")
    name = train.scenario_name(config)
    assert Path(name).is_file() and Path(name).resolve().parent == ROOT / "baselines" / "scenarios"
    scenario = msjgym.load_scenario(name, train.scenario_params(config))
    assert scenario.model.servers == 10 and sorted(scenario.model.needs) == [1, 3, 4, 7]
    assert scenario.model.load == pytest.approx(0.9)
    assert train.scenario_name({"scenario": {"name": "one-and-n"}}) == "one-and-n"


def test_server_filling_refuses_the_nondivisible_recipe(train):
    """The refusal the recipe's table records: ServerFilling is undefined when needs do not divide n."""
    config = train.load_config(ROOT / "baselines" / "maskable_ppo_preemptive_nondivisible.toml")
    scenario = msjgym.load_scenario(train.scenario_name(config), train.scenario_params(config))
    for policy in ("server-filling", "server-filling-divisible"):
        with pytest.raises(PolicyError, match="every need must divide servers=10"):
            msjgym.evaluate(scenario, policy, reps=2, jobs=100, warmup=10, seed=1, references=False)


def test_table_uses_the_configured_reference_and_shows_refusals(train):
    learned = {"policy": "maskable-ppo (learned)", "preemptive": "yes", "stable": True, "response_time": 5.0,
               "ci95": 0.1, "growth_rate": None}
    mw = {"policy": "maxweight", "preemptive": "yes", "stable": True, "response_time": 4.0, "ci95": 0.2,
          "growth_rate": None}
    refused = {"policy": "server-filling", "preemptive": "yes", "stable": None, "refused": "needs [3] do not"}
    table = train.format_table([learned, refused, mw], "maxweight")
    assert "| × MaxWeight |" in table
    assert "| maskable-ppo (learned) | yes | yes | 5.000 ± 0.100 | 1.250 |" in table
    assert "| server-filling | yes | — | refused: needs [3] do not | — |" in table
    assert "Learned vs MaxWeight (preemptive): 1.250×" in table and "worse, disjoint 95 % CIs" in table
    learned["response_time"] = 4.1  # CIs [4.0, 4.2] and [3.8, 4.2] overlap
    assert "the 95 % CIs overlap" in train.format_table([learned, mw], "maxweight")
