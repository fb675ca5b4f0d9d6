"""Runs far shorter than the system's relaxation time are flagged: an M/M/1 at ρ = 0.95 relaxes over
about 1/(1 − √ρ)² ≈ 1,600 time units, so 2,000 jobs per replication is far too short (its CI looks tight and is
wrong) and 200,000 is long enough."""
from __future__ import annotations

import numpy as np
import pytest

from msjgym.api import load_scenario
from msjgym.evaluate.checks import relaxation_note
from msjgym.evaluate.evaluator import evaluate

HEAVY = {"servers": 1, "arrival_rate": 0.95}


def _flag(result) -> list[str]:
    return [n for n in result.check_notes if n.startswith("NOT CONVERGED")]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_heavy_load_single_server_run_too_short_is_flagged(seed):
    result = evaluate(load_scenario("one-and-n", HEAVY), "fcfs", reps=5, jobs=2_000, seed=seed)
    assert result.stable and len(_flag(result)) == 1 and "relaxation" in _flag(result)[0]


@pytest.mark.parametrize("seed", [0, 1])
def test_the_same_system_run_long_enough_is_not_flagged(seed):
    result = evaluate(load_scenario("one-and-n", HEAVY), "fcfs", reps=5, jobs=200_000, seed=seed)
    assert not _flag(result)


def test_independent_batches_are_not_flagged_and_a_trend_or_correlation_is():
    """Batch means drawn i.i.d. (a converged run) pass in nearly every seed; a drift between halves common to the
    replications, or AR(1) batch means of correlation 0.9, are flagged."""
    rng = np.random.default_rng(5)
    flagged = sum(relaxation_note([[{"number_in_system": x} for x in rng.normal(4, 1, 20)] for _ in range(5)], 10_000)
                  is not None for _ in range(200))
    assert flagged <= 10  # lag-1 > 0.5 over 5 × 20 i.i.d. values, or a 99.9 % drift: rare
    trend = [[{"number_in_system": 4 + 0.1 * i + 0.05 * rng.normal()} for i in range(20)] for _ in range(5)]
    assert "drifts" in relaxation_note(trend, 10_000)
    ar = []
    for _ in range(5):
        x, rows = 0.0, []
        for _ in range(20):
            x = 0.9 * x + rng.normal()
            rows.append({"number_in_system": 4 + x})
        ar.append(rows)
    assert "autocorrelation" in relaxation_note(ar, 10_000)
    assert relaxation_note([[]], 10) is None and relaxation_note([[{"other": 1.0}] * 20], 10) is None
