"""Slow finite-skip validations (``pytest -m slow``): the full load grid for the bounds, the Fig. 6–7 orderings with
MaxWeight (on the multiserver-job engine), and ServerFilling on both engines."""
from __future__ import annotations

import math

import numpy as np
import pytest

import msjgym
from msjgym.policies.finite_skip import POLICIES
from msjgym.systems.finite_skip import scenarios as F
from msjgym.theory import finite_skip as theory

pytestmark = pytest.mark.slow
WCFS_CASES = [(name, p) for name, fig in F.FIGURES.items() for p in fig.policies if POLICIES[p].wcfs]
GRID = tuple(np.round(np.arange(0.3, 0.951, 0.05), 2))


def run(model, policy: str, *, jobs: int, reps: int, seed: int) -> msjgym.Result:
    """:func:`msjgym.evaluate` of the rate model ``model``."""
    return msjgym.evaluate(model, policy, jobs=jobs, reps=reps, seed=seed, references=False)


@pytest.mark.parametrize("name,policy", WCFS_CASES)
def test_bounds_full_grid(name, policy):
    """At every ρ in 0.30, 0.35, ..., 0.95 the simulated E[T] (point estimate) lies inside Cor. 3.8
    with the generic and with the exact constants."""
    for j, load in enumerate(GRID):
        model = F.load_finite_skip(name, {"load": float(load)})
        s = run(model, policy, jobs=100_000 if load < 0.9 else 400_000, reps=4, seed=1000 + j)
        assert s.stable
        t = s.metrics["response_time"].mean
        for exact in (False, True):
            band = theory.wcfs_band(model, theory.wcfs_constants(model, POLICIES[policy], exact))
            assert band.response_lower <= t <= band.response_upper, (load, exact, band, t)


def _msj(name: str, policy: str, load: float, seed: int):
    from msjgym.evaluate.evaluator import evaluate
    from msjgym.api import load_scenario
    return evaluate(load_scenario(name, {"load": load}), policy, reps=6, jobs=100_000, seed=seed,
                    references=False).metrics["response_time"]


def _separated(a, b):
    return a.mean + a.ci95 < b.mean - b.ci95


def test_fig6_orderings():
    """Fig. 6 (larger needs larger): MaxWeight best; MSF high; ServerFilling and PFF good (below FCFS and MSF); LSF
    outside its stability region at ρ = 0.9 (its number in system reaches the simulator's capacity of 3000 jobs)."""
    load = 0.9
    m = F.load_finite_skip("finite-skip-fig6", {"load": load})
    assert not run(m, "lsf", jobs=200_000, reps=2, seed=70).stable
    t = {p: run(m, p, jobs=200_000, reps=6, seed=71).metrics["response_time"]
         for p in ("server-filling", "preemptive-first-fit", "msf", "fcfs")}
    t["maxweight"] = _msj("finite-skip-fig6", "maxweight", load, 72)
    assert all(_separated(t["maxweight"], t[p]) for p in t if p != "maxweight"), t
    for good in ("server-filling", "preemptive-first-fit"):
        assert _separated(t[good], t["msf"]) and _separated(t[good], t["fcfs"]), t


def test_fig7_orderings():
    """Fig. 7 (larger needs smaller), at ρ = 0.8: MSF best, MaxWeight relatively high (above ServerFilling and PFF),
    FCFS off the chart (unstable: ρ* ≈ 0.58). At ρ <= 0.5 MaxWeight is below PFF in our runs (reproduce CSV), so the
    paper's 'relatively high' holds at the higher loads only."""
    load = 0.8
    m = F.load_finite_skip("finite-skip-fig7", {"load": load})
    assert not run(m, "fcfs", jobs=100_000, reps=2, seed=80).stable
    t = {p: run(m, p, jobs=100_000, reps=6, seed=81).metrics["response_time"]
         for p in ("server-filling", "preemptive-first-fit", "msf", "lsf")}
    t["maxweight"] = _msj("finite-skip-fig7", "maxweight", load, 82)
    assert all(_separated(t["msf"], t[p]) for p in t if p != "msf"), t
    assert _separated(t["server-filling"], t["maxweight"]) and _separated(t["preemptive-first-fit"], t["maxweight"])


def test_rate_model_and_msj_engine_agree():
    """ServerFilling, FCFS, PFF, MSF and LSF on the finite-skip rate model and on the multiserver-job engine, Figs. 6
    and 7 at ρ = 0.5: each difference of means lies within its CI (√(h1² + h2²) at the 95 % level, widened to the
    Bonferroni level over the 10 comparisons by the ratio of normal quantiles)."""
    from scipy import stats
    policies = ("server-filling", "fcfs", "preemptive-first-fit", "msf", "lsf")
    widen = stats.norm.ppf(1 - 0.025 / 10) / stats.norm.ppf(0.975)
    bad = []
    for name in ("finite-skip-fig6", "finite-skip-fig7"):
        for i, policy in enumerate(policies):
            a = run(F.load_finite_skip(name, {"load": 0.5}), policy, jobs=100_000, reps=6, seed=91 + i)
            a = a.metrics["response_time"]
            b = _msj(name, policy, 0.5, 191 + i)
            if abs(a.mean - b.mean) > widen * math.hypot(a.ci95, b.ci95):
                bad.append((name, policy, a, b))
    assert not bad
