"""Nothing a user measured changed: every built-in scenario × policy gives the metrics recorded before the
refactor (``tests/golden/golden.json``), with the same events, references and errors; and every family prints the
same top-level JSON keys.

The recording was made on another machine. Integers, verdicts, strings and errors are compared exactly (they are a
property of the code: the same seed gives the same sample path everywhere); floating-point values to the relative
tolerance :data:`record.REL` with the absolute floor :data:`record.ABS` (their last bits are a property of the CPU:
numpy's SIMD reductions and libm round differently on Intel and AMD). The tests at the end show that the tolerance
admits the differences recorded between two CPUs and nothing a genuine change makes.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import msjgym
from msjgym.evaluate.result import JSON_KEYS

sys.path.insert(0, str(Path(__file__).resolve().parent / "golden"))
import record  # noqa: E402

GOLDEN = record.load()


@pytest.mark.parametrize("command", list(GOLDEN))
def test_the_same_numbers_as_before_the_refactor(command: str) -> None:
    new = record.run(command)
    assert record.differences(record.expected(GOLDEN, command), new) == []
    if new["status"] == 0:
        assert tuple(new["json"]) == JSON_KEYS
        assert all(set(m) == {"mean", "ci95"} for m in new["json"]["metrics"].values())


def test_every_builtin_scenario_of_every_recorded_family_is_covered() -> None:
    """The runs above include a successful one of every built-in scenario of each family they record, so each such
    family's JSON is checked. A family with no recorded numbers (a new one) is not required here: its smoke case runs
    (tests/test_contract.py), and its numbers are recorded with ``python tests/golden/record.py`` when it has some to
    keep."""
    ran = {c.split()[1] for c in GOLDEN if record.expected(GOLDEN, c)["status"] == 0}
    recorded = {msjgym.api.family_of(name).name for name in ran if _known(name)}
    assert recorded, "the golden file records no family of the registry"
    for family in msjgym.api.families():
        if family.name in recorded:
            missing = {name for name, _ in family.scenarios()} - ran
            assert not missing, f"{family.name}: built-in scenarios without a golden run: {sorted(missing)}"


def _known(name: str) -> bool:
    """Whether some family of the registry owns the scenario ``name``."""
    try:
        msjgym.api.family_of(name)
    except msjgym.api.ScenarioError:
        return False
    return True


# ------------------------------------------------------------------ the tolerance, on both sides

CPU_PAIRS = [  # (recorded on Intel Xeon, the same run on AMD EPYC): one_and_n fcfs, metric little_response_time
    ({"mean": 4.557676573275142, "ci95": 2.3014547707031303}, {"mean": 4.557676573275141, "ci95": 2.301454770703125}),
]
"""The differences quoted from a run of the suite on an AMD EPYC machine (the recording is from an Intel
Xeon): last-bit differences of the same sample path."""


@pytest.mark.parametrize("intel, amd", CPU_PAIRS)
def test_last_bit_differences_between_cpus_are_inside_the_tolerance(intel, amd) -> None:
    assert record.value_differences(intel, amd, "little_response_time") == []


def _ulps(x: float, n: int) -> float:
    for _ in range(abs(n)):
        x = math.nextafter(x, math.inf if n > 0 else -math.inf)
    return x


@pytest.mark.parametrize("value", [4.557676573275142, 1e-9, 0.0, 3.2e6, -0.75])
def test_a_few_ulps_are_admitted_and_a_genuine_change_is_not(value: float) -> None:
    assert not record.floats_differ(value, _ulps(value, 1))
    assert not record.floats_differ(value, _ulps(value, -16))
    big = max(abs(value), 1.0)
    assert record.floats_differ(value, value + 1e-10 * big)  # 1e-10 relative: not rounding
    assert record.floats_differ(value, float("nan")) and record.floats_differ(value, math.inf)


def test_integers_verdicts_and_strings_are_exact() -> None:
    assert record.value_differences(88004, 88005, "events") == ["events: 88004 -> 88005"]
    assert record.value_differences(True, False, "stable") != []
    assert record.value_differences("inside", "outside", "agrees") != []
    assert record.value_differences(None, 0.0, "value") != []
    assert record.value_differences({"mean": 1.0, "ci95": 0.1}, {"mean": 1.0}, "m") != []


def test_the_ci_is_compared_at_the_scale_of_its_mean() -> None:
    """A half-width computed from two nearly equal replications is a difference of numbers the size of the mean,
    so its rounding is relative to the mean (here 1e-15 of the mean, 1e-9 of the half-width: admitted)."""
    assert record.value_differences({"mean": 5.0, "ci95": 5e-6}, {"mean": 5.0, "ci95": 5e-6 + 5e-15}) == []
    assert record.value_differences({"mean": 5.0, "ci95": 5e-6}, {"mean": 5.0, "ci95": 5e-6 + 5e-10}) != []


PERTURBED = ["evaluate one-and-n --policy fcfs", "evaluate lb-dispatch --policy jsq-d", "evaluate loss-full-access "
             "--policy random-width", "finite-skip finite-skip-fig3 --policy lps"]


@pytest.mark.parametrize("command", [c for c in PERTURBED if c in GOLDEN])
def test_a_different_sample_path_fails_the_comparison(command: str) -> None:
    """The same command with the seed perturbed (2 instead of the recorded 1) is a different sample path: the
    golden comparison rejects it, and every float metric it changes moves by far more than the tolerance."""
    new = record.run(command, seed=record.SEED + 1)
    assert new["status"] == 0
    assert record.differences(record.expected(GOLDEN, command), new) != []
    old = record._renamed(record.expected(GOLDEN, command))["json"]["metrics"]
    changes = [abs(new["json"]["metrics"][k]["mean"] - v["mean"]) / max(abs(v["mean"]), 1e-300)
               for k, v in old.items() if k in new["json"]["metrics"] and v["mean"] != new["json"]["metrics"][k]["mean"]]
    assert changes and np.min(changes) > 1e5 * record.REL, sorted(changes)[:3]


def test_recorded_arrays_match_to_the_same_tolerance() -> None:
    """The environments' recorded trajectories (``tests/test_env_trajectories.py``) use the same rule."""
    want = np.array([[0.0, 1.0, 4.557676573275142], [np.nan, np.inf, -2.5]])
    got = want.copy()
    got[0, 2] = _ulps(got[0, 2], 3)
    assert record.arrays_match(got, want)
    got[1, 2] += 1e-9
    assert not record.arrays_match(got, want)
    assert not record.arrays_match(want[:1], want)
    assert not record.arrays_match(np.where(np.isinf(want), 1e308, want), want)
