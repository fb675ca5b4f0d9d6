"""``import msjgym`` (every command's start) loads neither the rl extra's torch nor scipy.optimize: the training
helpers of ``msjgym.envs`` are imported by their users, and the LP of the capacity region when a reference needs it."""
from __future__ import annotations

import subprocess
import sys

import pytest


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_importing_msjgym_loads_no_torch_and_no_lp_solver():
    loaded = _loaded_after("import msjgym")
    assert "msjgym.envs" in loaded and "msjgym.systems.msj.scorecard" in loaded  # the modules concerned did load
    assert not {"torch", "stable_baselines3", "scipy.optimize"} & loaded


def test_a_training_helper_still_imports_its_packages_when_used():
    """The control: the helper discovery skips is importable, and it is what loads torch."""
    pytest.importorskip("torch")
    loaded = _loaded_after("import msjgym.envs.masked_categorical")
    assert "torch" in loaded
