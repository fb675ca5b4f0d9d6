"""``--policy rllib:CHECKPOINT_DIR`` without Ray: the errors raised before Ray is needed, the message when Ray is
missing, and that ``import msjgym`` does not import Ray. (With Ray: tests/test_rllib.py.)"""
from __future__ import annotations

import subprocess
import sys

import pytest

import cli_run
from msjgym import load_scenario
from msjgym.api import is_user_policy
from msjgym.core.user_policy import load_user_policy
from msjgym.errors import PolicyError
from msjgym.systems.msj.agent import EnvSpec


@pytest.fixture
def spec():
    return EnvSpec.make(load_scenario("one-and-n"), "start", 2, None, None, 1000, 0)


def test_rllib_policies_are_the_users(spec):
    assert is_user_policy("rllib:some/dir") and not is_user_policy("fcfs")


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "missing", "no such directory"),
    (lambda p: (p / "f.txt").write_text("x") and p / "f.txt", "a file, not a checkpoint directory"),
    (lambda p: p, "is not an RLlib checkpoint"),
])
def test_a_bad_checkpoint_path_gets_one_clear_error(tmp_path, spec, make, message):
    path = make(tmp_path)
    with pytest.raises(PolicyError, match=message) as info:
        load_user_policy(f"rllib:{path}", spec)
    assert "\n" not in str(info.value) and f"rllib:{path}" in str(info.value)


def test_an_algorithm_checkpoint_without_the_default_module_is_named(tmp_path, spec):
    (tmp_path / "learner_group" / "learner" / "rl_module" / "other_policy").mkdir(parents=True)
    with pytest.raises(PolicyError, match="no module 'default_policy' \\(modules: other_policy\\)"):
        load_user_policy(f"rllib:{tmp_path}", spec)


def test_ray_missing_is_one_clear_error(tmp_path, spec, monkeypatch):
    (tmp_path / "class_and_ctor_args.pkl").write_bytes(b"")
    (tmp_path / "module_state.pkl").write_bytes(b"")
    for name in [m for m in sys.modules if m == "ray" or m.startswith("ray.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(PolicyError, match=r"needs Ray RLlib and torch \(pip install torch==2.13.0 then pip install "
                                          r"\"msjgym\[rllib\]\"\)"):
        load_user_policy(f"rllib:{tmp_path}", spec)


def test_the_cli_reports_a_missing_checkpoint_in_one_line(tmp_path):
    out = cli_run.msjgym("evaluate", "one-and-n", "--policy", f"rllib:{tmp_path / 'nothing'}", "--window", "2",
                         "--reps", "2", "--jobs", "2000")
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and "no such directory" in lines[0], out.stderr


def test_import_msjgym_does_not_import_ray():
    code = "import sys, msjgym, msjgym.envs.rllib, msjgym.core.rllib_policy; print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr
