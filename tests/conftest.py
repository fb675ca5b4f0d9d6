"""Shared helpers for the test suite."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

try:  # the property suites' profiles (HYPOTHESIS_PROFILE=default|long); hypothesis is in the dev extra
    import hypothesis_profiles  # noqa: F401
except ImportError:
    pass

from msjgym.core import rng
from msjgym.core.distributions import from_spec
from msjgym.policies.msj import POLICIES
from msjgym.systems.msj.simulation import MSJSimulation, RunConfig
from msjgym.systems.msj.model import JobClass, MSJModel


def pytest_configure(config: pytest.Config) -> None:
    """A whole-suite run on pytest-xdist workers compiles every kernel once first, in parallel processes
    (:func:`msjgym.evaluate.precompile.precompile`): on a fresh cache each worker would otherwise compile the same
    loops and policies at the same time. Skipped for a run of chosen tests, on one process, in a worker, or with
    ``MSJGYM_TEST_PRECOMPILE=0``; a warm cache makes it a few seconds of loading."""
    workers = getattr(config.option, "numprocesses", None)
    if (hasattr(config, "workerinput") or not isinstance(workers, int) or workers < 2
            or config.args_source != pytest.Config.ArgsSource.TESTPATHS
            or os.environ.get("MSJGYM_TEST_PRECOMPILE", "1") == "0"):
        return
    from msjgym.evaluate.precompile import precompile

    failed = [f"{label}: {error}" for label, _, error in precompile(workers=workers, progress=False) if error]
    if failed:  # the tests that need these kernels compile (and fail) on their own: say it once, up front
        print("precompile: " + "; ".join(failed))


EXAMPLE = """\
system = "msj"
servers = 10
arrival_rate = 2.33
[[classes]]
name = "small"
need = 1
probability = 0.9
service = { dist = "exp", rate = 1.0 }
[[classes]]
need = 10
probability = 0.1
service = { dist = "hyperexp", mean = 1.0, scv = 10.0 }
"""  # the TOML example of docs/scenarios.md


def exp_class(name: str, need: int, probability: float, rate: float = 1.0) -> JobClass:
    return JobClass(name, need, probability, from_spec({"dist": "exp", "rate": rate}))


def model(servers: int, arrival_rate: float, *classes: JobClass) -> MSJModel:
    return MSJModel(servers=servers, arrival_rate=arrival_rate, classes=tuple(classes))


def sim(m: MSJModel, policy: str, debug: bool = True, **config) -> MSJSimulation:
    """A single-replication simulation for driving events by hand (no arrivals unless run)."""
    return MSJSimulation(m, POLICIES[policy], RunConfig(debug=debug, **config), rng.spawn_states(0, 1)[0])


def skip_unless_applicable(policy, m: MSJModel) -> None:
    """Skip the test when the built-in ``policy`` (a name or a declaration) does not run on model ``m`` (its own
    setting, e.g. ``msfq``'s one-or-all), with the policy's reason."""
    from msjgym.errors import PolicyError
    try:
        (POLICIES[policy] if isinstance(policy, str) else policy).validate(m)
    except PolicyError as exc:
        pytest.skip(f"not applicable: {exc}")


def covers(values: np.ndarray, target: float, level: float = 0.999) -> tuple[bool, float, float]:
    """Does the Student-t CI at ``level`` of the i.i.d. ``values`` cover ``target``? Returns (ok, mean, half)."""
    values = np.asarray(values, dtype=float)
    half = stats.t.ppf(0.5 + level / 2, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size)
    mean = float(values.mean())
    return abs(mean - target) <= half, mean, float(half)


@pytest.fixture
def exp_class_factory():
    return exp_class


@pytest.fixture(scope="session")
def train():
    """``baselines/train.py`` (a script, not a package module), loaded as a module."""
    path = Path(__file__).resolve().parents[1] / "baselines" / "train.py"
    spec = importlib.util.spec_from_file_location("_train_baselines", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
