"""A saved model is loaded once per evaluation (and per process, for the same file), not once per replication or
window; a rewritten file is loaded again."""
from __future__ import annotations

from pathlib import Path

import pytest

from msjgym.core import user_policy
from msjgym.evaluate.evaluator import evaluate

ROOT = Path(__file__).resolve().parents[1]
TRACE = str(ROOT / "examples" / "lublin_256.toml")


@pytest.fixture()
def loads(monkeypatch):
    """Counts the loads of saved models (``_load_sb3`` calls), with an empty cache."""
    pytest.importorskip("sb3_contrib")
    calls = []
    real = user_policy._load_sb3
    monkeypatch.setattr(user_policy, "_LOADED", {})
    monkeypatch.setattr(user_policy, "_load_sb3", lambda path, spec: calls.append(path) or real(path, spec))
    return calls


def _save(path: Path, scenario: str, **env) -> Path:
    from sb3_contrib import MaskablePPO

    from msjgym.envs import MSJVectorEnv, to_sb3
    from msjgym.envs.sb3 import record_env

    venv = MSJVectorEnv(2, scenario=scenario, horizon_jobs=32, **env)
    model = MaskablePPO("MlpPolicy", to_sb3(venv), n_steps=8, batch_size=16, seed=0, device="cpu")
    record_env(model, venv)
    model.save(path)
    return path


def test_one_load_over_three_replications_and_four_windows(loads, tmp_path):
    model = _save(tmp_path / "m.zip", "one-and-n")
    result = evaluate("one-and-n", f"sb3:{model}", reps=3, jobs=200, warmup=20, seed=1, references=False)
    assert result.reps == 3 and len(loads) == 1
    trace_model = _save(tmp_path / "t.zip", TRACE, window=4, estimates=True, trace_windows=True)
    result = evaluate(TRACE, f"sb3:{trace_model}", windows=4, window_jobs=20, seed=3, references=False)
    assert result.reps == 4 and len(loads) == 2
    evaluate(TRACE, f"sb3:{trace_model}", windows=2, window_jobs=20, seed=4, references=False)
    assert len(loads) == 2  # the same file again in this process: not reloaded


def test_a_rewritten_model_is_loaded_again(loads, tmp_path):
    model = _save(tmp_path / "m.zip", "one-and-n")
    evaluate("one-and-n", f"sb3:{model}", reps=2, jobs=100, warmup=10, seed=1, references=False)
    _save(model, "one-and-n", window=4)  # another model at the same path: another observation
    result = evaluate("one-and-n", f"sb3:{model}", reps=2, jobs=100, warmup=10, seed=1, references=False)
    assert len(loads) == 2 and result.reps == 2
