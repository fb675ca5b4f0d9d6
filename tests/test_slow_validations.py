"""Long validations (run with `python -m pytest -m slow`; about a minute).

Tolerances are 99.9 % Student-t CIs over independent replications; seeds are fixed.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import covers, exp_class, model
from msjgym.evaluate.evaluator import evaluate
from msjgym.api import load_scenario
from msjgym.theory import queues

pytestmark = pytest.mark.slow

SIZES = (64, 256, 1024, 4096)


def _queueing(set_number: int, n: int, seed: int, **params: object) -> dict[str, np.ndarray]:
    scenario = load_scenario(f"zero-queueing-set{set_number}", {"servers": n, **params})
    result = evaluate(scenario, "fcfs", reps=8, jobs=1_000_000, seed=seed)
    assert result.stable
    names = ["queueing_probability"] + [f"queueing_probability[c{i}]" for i in (1, 2, 3)]
    return {k: np.array([r[k] for r in result.replications]) for k in names}


def test_zero_queueing_set1_probability_falls_with_n_and_orders_by_need():
    """Set I (2α + γ < 1): P_Q decreases in n; P_Q,1 <= P_Q,2 <= P_Q,3 (needs 3 <= log2 n <= √n; by PASTA)."""
    previous = None
    for n in SIZES:
        pq = _queueing(1, n, seed=n)
        for lower, higher in (("c1", "c2"), ("c2", "c3")):
            diff = pq[f"queueing_probability[{higher}]"] - pq[f"queueing_probability[{lower}]"]
            ok, mean, half = covers(diff, 0.0)
            assert mean + half >= 0, f"n={n}: P_Q[{higher}] − P_Q[{lower}] = {mean} ± {half}"
        overall = pq["queueing_probability"]
        if previous is not None:
            ok, mean, half = covers(previous - overall, 0.0)
            assert mean - half > 0, f"n={n}: P_Q did not fall: drop {mean} ± {half}"
        previous = overall


def test_zero_queueing_set2_probability_does_not_vanish():
    """Set II (2α + γ >= 1): P_Q falls far more slowly than in Set I; over 64 → 4096 servers it keeps more than half
    its value (the paper's Fig. 7: 'unlikely that the queueing probabilities will converge to zero')."""
    small = _queueing(2, 64, seed=1)["queueing_probability"].mean()
    large = _queueing(2, 4096, seed=2)["queueing_probability"].mean()
    assert large > 0.5 * small


@pytest.mark.parametrize("n", SIZES[1:])
def test_zero_queueing_set3_class3_ordered_by_max_need(n):
    """Set III (Fig. 8): the class-3 queueing probability is ordered by m_3: √n >= 3n^(1/4) >= log2 n + 2
    (for n >= 256, where the three needs differ)."""
    pq = [_queueing(3, n, seed=n + i, m3=rule)["queueing_probability[c3]"]
          for i, rule in enumerate(("sqrt", "4th-root", "log"))]
    for larger, smaller in ((pq[0], pq[1]), (pq[1], pq[2])):
        ok, mean, half = covers(larger - smaller, 0.0)
        assert mean - half > 0, f"n={n}: difference {mean} ± {half}"


@pytest.mark.parametrize("load", [0.95, 0.98])
def test_erlang_c_in_heavy_traffic(load):
    """M/M/64 near saturation: queueing probability and mean wait match Erlang C."""
    n = 64
    result = evaluate(model(n, load * n, exp_class("a", 1, 1.0)), "fcfs", reps=20, jobs=2_000_000, seed=51)
    for name, exact in (("queueing_probability", queues.erlang_c(n, load * n)),
                        ("waiting_time", queues.mmc_mean_wait(n, load * n, 1.0))):
        ok, mean, half = covers([r[name] for r in result.replications], exact)
        assert ok, f"{name}: {mean} ± {half} vs {exact}"

