"""Learning on a trace: a saved model carries the arguments of its observation (``record_env``), so ``--policy
sb3:MODEL.zip`` rebuilds it (``estimates=True`` included) without being told; a model saved without them gets a
one-line error naming what to pass; ``baselines/train.py``'s trace recipe reads its baselines (priority with
parameters) and the recorded model evaluates over two short windows of the trace."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from msjgym.cli import main
from msjgym.errors import PolicyError
from msjgym.evaluate.evaluator import evaluate

ROOT = Path(__file__).resolve().parents[1]
TRACE = str(ROOT / "examples" / "lublin_256.toml")
RECIPE = ROOT / "baselines" / "maskable_ppo_lublin_bsld.toml"
RECORDED = ROOT / "baselines" / "results" / "maskable_ppo_lublin_bsld.zip"


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """An untrained MaskablePPO on the trace with estimates=True, window 4: saved with and without its settings."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from msjgym.envs import MSJVectorEnv, to_sb3
    from msjgym.envs.sb3 import record_env

    venv = MSJVectorEnv(2, scenario=TRACE, window=4, horizon_jobs=32, estimates=True, reward="bounded-slowdown",
                        trace_windows=True)
    model = MaskablePPO("MlpPolicy", to_sb3(venv), n_steps=8, batch_size=16, seed=0, device="cpu")
    folder = tmp_path_factory.mktemp("models")
    model.save(folder / "bare.zip")
    assert record_env(model, venv) == {"id": "msjgym/MSJ-v0", "mode": "start", "window": 4, "estimates": True}
    model.save(folder / "recorded.zip")
    return folder


def test_a_recorded_model_evaluates_with_its_own_observation(saved, capsys):
    with zipfile.ZipFile(saved / "recorded.zip") as archive:
        assert json.loads(archive.read("data"))["msjgym_env"]["estimates"] is True
    code = main(["evaluate", TRACE, "--policy", f"sb3:{saved / 'recorded.zip'}", "--windows", "2", "--window-jobs",
                 "20", "--seed", "3", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and "2 windows x 20 trace jobs" in out and "bounded_slowdown" in out


def test_a_model_without_settings_names_the_options_to_pass(saved, capsys):
    policy = f"sb3:{saved / 'bare.zip'}"
    with pytest.raises(PolicyError, match=r"\(--mode, --window, --estimates\)$"):
        evaluate(TRACE, policy, windows=2, window_jobs=20, seed=3, window=4)
    result = evaluate(TRACE, policy, windows=2, window_jobs=20, seed=3, window=4, estimates=True, references=False)
    assert result.reps == 2 and result.metrics["bounded_slowdown"].mean >= 1.0


def test_the_trace_recipe_reads_its_baselines(train):
    config = train.load_config(RECIPE)
    assert train.is_trace(config)
    assert config["env"]["reward"] == "bounded-slowdown" and config["env"]["estimates"] is True
    labels = [p.label for p in train.baseline_policies(config["evaluate"])]
    assert "priority(order=sjf, backfill=easy)" in labels and "priority(order=f1, backfill=easy)" in labels


@pytest.mark.skipif(not RECORDED.is_file(), reason="the recorded model is not there")
def test_the_recorded_model_evaluates_over_two_short_windows(capsys):
    pytest.importorskip("sb3_contrib")
    code = main(["evaluate", TRACE, "--policy", f"sb3:{RECORDED}", "--windows", "2", "--window-jobs", "32",
                 "--seed", "1", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and "2 windows x 32 trace jobs" in out
