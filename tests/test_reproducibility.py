"""Seeds: same seed, same numbers bit for bit; replications independent."""
from __future__ import annotations

import numpy as np
from scipy import stats

from msjgym.core import rng
from msjgym.evaluate.evaluator import evaluate
from msjgym.api import load_scenario

SCENARIO = load_scenario("finite-skip-fig6", {"load": 0.6})


def test_same_seed_same_numbers_bit_for_bit():
    a = evaluate(SCENARIO, "server-filling", reps=3, jobs=20_000, seed=5)
    b = evaluate(SCENARIO, "server-filling", reps=3, jobs=20_000, seed=5)
    assert a.replications == b.replications  # exact float equality, every metric of every replication
    assert a.to_dict()["metrics"] == b.to_dict()["metrics"] and a.events == b.events


def test_replication_does_not_depend_on_how_many_were_run():
    two = evaluate(SCENARIO, "fcfs", reps=2, jobs=20_000, seed=6)
    five = evaluate(SCENARIO, "fcfs", reps=5, jobs=20_000, seed=6)
    assert two.replications == five.replications[:2]


def test_different_seeds_and_replications_differ():
    a = evaluate(SCENARIO, "fcfs", reps=4, jobs=20_000, seed=7)
    b = evaluate(SCENARIO, "fcfs", reps=4, jobs=20_000, seed=8)
    means = [r["response_time"] for r in a.replications + b.replications]
    assert len(set(means)) == len(means)


def test_replication_streams_are_uncorrelated():
    """The streams SeedSequence.spawn gives each replication: pairwise sample correlations of 20,000 uniforms
    lie within the 99.9 % band of independent samples (|r| < 3.29/√n) for all pairs of 8 streams."""
    states, _ = rng.spawn_states(9, 8)
    n = 20_000
    draws = np.array([[rng.uniform(states, b) for _ in range(n)] for b in range(8)])
    corr = np.corrcoef(draws)
    off_diagonal = corr[~np.eye(8, dtype=bool)]
    assert np.all(np.abs(off_diagonal) < stats.norm.ppf(0.9995) / np.sqrt(n))


def test_replication_means_are_independent_across_replications():
    """Lag-1 correlation of 30 replication means is within the 99.9 % band of zero (no shared stream)."""
    result = evaluate(SCENARIO, "fcfs", reps=30, jobs=5_000, seed=10)
    x = np.array([r["response_time"] for r in result.replications])
    r1 = np.corrcoef(x[:-1], x[1:])[0, 1]
    assert abs(r1) < stats.norm.ppf(0.9995) / np.sqrt(len(x) - 1)
