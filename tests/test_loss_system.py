"""Loss system with adaptive multiserver jobs: simulator vs exact theory, trace-level claims, identities, bounds.

Every estimate comes from :func:`msjgym.evaluate` (its replications' values); the trace-level claims read the compiled
loop's own state (:class:`msjgym.systems.loss.simulation.LossSimulation`, the same streams). Stochastic checks use fixed
seeds and Student-t CIs over independent replications at 99 % (a 95 % CI misses 1 in 20 true values by design;
nothing here is widened to pass).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import hypergeom

import msjgym
from msjgym.core import rng
from msjgym.evaluate.intervals import t_interval
from msjgym.policies.loss import POLICIES
from msjgym.systems.loss import state as ls
from msjgym.systems.loss.loop import censored_pmf
from msjgym.systems.loss.simulation import LossSimulation
from msjgym.systems.loss.metrics import default_warmup, loss_metrics
from msjgym.systems.loss.model import make_loss_model
from msjgym.systems.loss import theory as th
from msjgym.theory.queues import erlang_b

LEVEL = 0.99


def evaluate(model, policy: str, *, reps: int, jobs: int, seed: int) -> msjgym.Result:
    """``msjgym.evaluate`` of a loss model (default warm-up and batches), without the scorecard."""
    return msjgym.evaluate(model, policy, reps=reps, jobs=jobs, seed=seed, references=False)


def estimates(result: msjgym.Result) -> dict:
    """Every metric's Student-t interval at ``LEVEL`` over the result's replications."""
    reps = result.replications
    return {k: t_interval(np.array([r[k] for r in reps]), LEVEL) for k in reps[0]}


def kernel_run(model, policy: str, *, reps: int, jobs: int, seed: int, trace_events: int = 0) -> LossSimulation:
    """The compiled loop's replications as ``msjgym.evaluate`` runs them (same streams, warm-up and batches), run to
    their end, with the first ``trace_events`` events of each recorded: for the claims about single trajectories."""
    streams, _ = rng.spawn_states(seed, reps)
    sim = LossSimulation(model, POLICIES[policy], default_warmup(model, jobs), jobs, 20, streams, trace_events)
    for b in range(reps):
        while not sim.advance(b, 1 << 20):
            pass
    return sim


def assert_covers(est, value, what=""):
    assert abs(est.mean - value) <= est.ci95, f"{what}: {est.mean} ± {est.ci95} does not cover {value}"


# ------------------------------------------------------------------------------------------- sampler
@pytest.mark.parametrize("n,idle,k,d", [(50, 10, 7, 3), (50, 45, 7, 3), (1000, 3, 900, 4), (30, 0, 5, 2),
                                        (30, 29, 30, 2), (40, 20, 1, 1), (10**4, 500, 922, 3)])
def test_censored_pmf_matches_scipy_hypergeometric(n, idle, k, d):
    logfact = np.array([math.lgamma(j + 1.0) for j in range(n + 1)])
    out = np.zeros(d + 1)
    censored_pmf(n, idle, k, d, logfact, out)
    ref = hypergeom(n, idle, k).pmf(np.arange(d))
    assert np.allclose(out[:d], ref, rtol=1e-9, atol=1e-14)
    assert out[d] == pytest.approx(hypergeom(n, idle, k).sf(d - 1), abs=1e-12)
    assert np.allclose(out, th.censored_hypergeometric(n, idle, k, d), rtol=1e-9, atol=1e-14)


# ------------------------------ full access, d | n: Erlang B (docs/derivations.md#loss-full-access-exact)
@pytest.mark.parametrize("n,d", [(20, 1), (24, 3), (100, 4)])
def test_divisible_full_access_is_erlang_b_and_every_job_gets_d(n, d):
    lam = 0.85
    model = make_loss_model(n, d, "n", lam=lam)
    result = evaluate(model, "greedy", reps=10, jobs=40_000, seed=11)
    assert_covers(estimates(result)["blocking_probability"], erlang_b(n // d, n * lam / d), "P_b vs Erlang B")
    for rep in result.replications:  # exactly 1/d in every replication: every accepted job ran on d servers
        assert rep["response_time"] == 1.0 / d
    sim = kernel_run(model, "greedy", reps=10, jobs=40_000, seed=11, trace_events=20_000)
    for b in range(10):
        tr = sim.trace(b)
        assert len(tr) == 20_000
        widths = tr[tr[:, 0] >= 0, 0]
        assert set(np.unique(widths)) <= {0, d}  # arrivals: blocked or exactly d servers
        assert set(np.unique(-tr[tr[:, 0] < 0, 0])) <= {d}  # departures: only d-jobs
        assert tr[:, 2].max() == 0  # never a job on fewer than d servers
        assert sim.state.ints[b, ls.I_MAXPART] == 0  # over the whole run, not only the traced prefix
        assert (tr[:, 1] <= n).all() and (tr[:, 1] % d == 0).all()


# ------ full access, d ∤ n: one partial job, the exact chain (docs/derivations.md#loss-full-access-exact)
@pytest.mark.parametrize("n,d,lam", [(13, 3, 0.8), (50, 4, 0.9), (101, 5, 0.95)])
def test_non_divisible_full_access_one_partial_job_and_exact_chain(n, d, lam):
    model = make_loss_model(n, d, "n", lam=lam)
    sim = kernel_run(model, "greedy", reps=10, jobs=40_000, seed=5, trace_events=20_000)
    r = n % d
    for b in range(10):
        assert sim.state.ints[b, ls.I_MAXPART] == 1  # at most one partial job, and one does occur
        assert sim.state.ints[b, ls.I_PARTMASK] == 1 << r  # and it always has n mod d servers
        tr = sim.trace(b)
        assert tr[:, 2].max() == 1
        assert set(np.unique(tr[tr[:, 0] > 0, 0])) <= {r, d}
    exact = th.greedy_full_access(n, d, lam)
    est = estimates(evaluate(model, "greedy", reps=10, jobs=40_000, seed=5))
    assert_covers(est["blocking_probability"], exact.blocking, "P_b vs (m, p) chain")
    assert_covers(est["response_time"], exact.response_time, "E[D] vs (m, p) chain")
    assert est["response_time"].mean > 1.0 / d


def test_mp_chain_equals_generic_count_chain():
    for n, d, lam in [(13, 3, 0.8), (50, 4, 0.9), (24, 3, 0.7)]:
        a, c = th.greedy_full_access(n, d, lam), th.exact_chain(n, d, n, lam)
        assert a.blocking == pytest.approx(c.blocking, rel=1e-10)
        assert a.response_time == pytest.approx(c.response_time, rel=1e-10)


# ------------------------------------------------------------------------------------------- sampling vs exact
@pytest.mark.parametrize("policy", th.POLICIES)
@pytest.mark.parametrize("k", [2, 5])
def test_sampled_simulation_matches_exact_count_chain(policy, k):
    n, d, lam = 16, 3, 0.8
    model = make_loss_model(n, d, k, lam=lam)
    est = estimates(evaluate(model, policy, reps=10, jobs=30_000, seed=3))
    chain = th.exact_chain(n, d, k, lam, policy)
    if policy == "fixed-width" and k < d:  # a sample of k < d servers can never hold a d-wide job
        assert chain.blocking == 1.0 and est["blocking_probability"].mean == 1.0
        return
    assert_covers(est["blocking_probability"], chain.blocking, "P_b")
    assert_covers(est["response_time"], chain.response_time, "E[D]")
    assert_covers(est["utilization"], chain.busy_fraction, "q_1")
    for i in range(d + 1):
        assert_covers(est[f"width_probability[w{i}]"], chain.width_probability[i], f"E[A_{i}]")


# ------------------------------------------ conservation identities (docs/derivations.md#loss-identities)
@pytest.mark.parametrize("policy", th.POLICIES)
@pytest.mark.parametrize("k", [1, 2, 6, "n"])
def test_conservation_identities_hold_within_ci(policy, k):
    n, d = 30, 3
    if policy == "fixed-width" and k in (1, 2):
        pytest.skip("k < d: fixed-width blocks every job (no accepted job, no E[D]); see the exact-chain test")
    model = make_loss_model(n, d, k, lam=0.9)
    est = estimates(evaluate(model, policy, reps=10, jobs=20_000, seed=17))
    names = ["residual_work", "residual_little", "residual_pasta", "residual_stein"]
    names += [f"residual_width[w{i}]" for i in range(1, d + 1)]
    for name in names:
        assert_covers(est[name], 0.0, f"{policy}, k={k}: {name}")
    assert est["blocking_probability"].mean > 0.01  # the identities are tested where blocking actually happens


def test_identity_residuals_detect_a_wrong_load():
    """The residual checks can fail: λ(1 − P_b) with a wrong λ leaves a residual far outside the CI."""
    n, d = 30, 3
    model = make_loss_model(n, d, 6, lam=0.9)
    sim = kernel_run(model, "greedy", reps=10, jobs=20_000, seed=17)
    wrong = make_loss_model(n, d, 6, lam=0.8)
    reps = [loss_metrics(sim.state.stats[b].sum(axis=0), wrong) for b in range(10)]
    est = t_interval(np.array([r["residual_work"] for r in reps]), LEVEL)
    assert abs(est.mean) > 5 * est.ci95


# ----------------------------------------------------- Ghanbarian et al. Theorem 4's bounds (full access)
@pytest.mark.parametrize("n", [100, 1000, pytest.param(10_000, marks=pytest.mark.slow)])
@pytest.mark.parametrize("d", [2, 3])
def test_theorem4_bounds_hold_in_simulation(n, d):
    """n = 10⁴ runs 8 × 500,000 jobs (half of this test's CPU): -m slow; n = 10², 10³ check the same bounds."""
    model = make_loss_model(n, d, "n", alpha=0.5, beta=1.0)
    lam = model.lam
    est = estimates(evaluate(model, "greedy", reps=8, jobs=max(100_000, 50 * n), seed=n + d))
    t4 = th.theorem4_bounds(n, d, lam)
    assert t4.condition_holds
    assert est["blocking_probability"].mean + est["blocking_probability"].ci95 <= t4.blocking_upper
    assert est["stein_lhs"].mean + est["stein_lhs"].ci95 <= t4.stein_upper
    pb = est["blocking_probability"].mean
    assert est["response_time"].mean <= th.theorem4_response_bound(n, d, lam, pb)
    exact = th.greedy_full_access(n, d, lam)
    assert_covers(est["blocking_probability"], exact.blocking, "P_b vs exact")
    assert exact.blocking <= t4.blocking_upper and exact.response_time <= t4.response_upper


def test_sqrt_n_blocking_approaches_halfin_whitt_limit():
    """Exact √n P_b at α = ½ approaches √d φ(β/√d)/Φ(β/√d) monotonically; simulation agrees at n = 10⁴."""
    for d in (1, 2, 3):
        limit = th.sqrt_n_blocking_limit(0.5, 1.0, d)
        gaps = []
        for n in (10**2, 10**3, 10**4, 10**5, 10**6):
            lam = th.arrival_fraction(n, 0.5, 1.0)
            gaps.append(abs(math.sqrt(n) * th.greedy_full_access(n, d, lam).blocking - limit))
        assert all(a > b for a, b in zip(gaps, gaps[1:]))
        assert gaps[-1] < 0.01 * limit
    model = make_loss_model(10_000, 2, "n", alpha=0.5, beta=1.0)
    est = estimates(evaluate(model, "greedy", reps=10, jobs=200_000, seed=8))
    assert abs(est["sqrt_n_blocking"].mean - th.sqrt_n_blocking_limit(0.5, 1.0, 2)) < 0.03
    assert_covers(est["sqrt_n_blocking"], 100 * th.greedy_full_access(10_000, 2, model.lam).blocking, "√n P_b")


# ------------------------------------------------------------------------------------------- sampling regimes
def test_constant_k_tracks_the_fixed_point_and_does_not_vanish():
    pbs = []
    for n in (200, 2000):
        model = make_loss_model(n, 2, 2, alpha=0.0, beta=0.2)
        est = estimates(evaluate(model, "greedy", reps=6, jobs=60_000, seed=n))
        pbs.append(est["blocking_probability"].mean)
    fp = th.fixed_point(2, 2, 0.8)
    assert pbs[-1] == pytest.approx(fp.blocking, rel=0.03)
    assert min(pbs) > 0.2


def test_theta_n_alpha_sampling_loses_the_full_access_rate():
    """α = ½, k = ⌈√n⌉: √n P_b grows with n (full access: it converges to the HW limit ≈ 0.578), so k = Θ(n^α)
    loses the full-access rate (docs/errata.md#loss-k-omega).

    But P_b is not bounded away from 0: it does fall (≈ 0.12 → 0.025 from n = 10² to 10⁴), in line with
    the mean-field heuristic √n P_b ≈ y, y e^y ≈ √n e^(−β).
    """
    scaled, full = [], []
    for n in (100, 1000, 10_000):
        for k, out in (("sqrt n", scaled), ("n", full)):
            model = make_loss_model(n, 2, k, alpha=0.5, beta=1.0)
            out.append(estimates(evaluate(model, "greedy", reps=6, jobs=100_000, seed=n))
                       ["sqrt_n_blocking"])
    for lo, hi in zip(scaled, scaled[1:]):
        assert hi.mean - hi.ci95 > lo.mean + lo.ci95  # strictly growing, CIs separated
    assert all(e.mean < th.sqrt_n_blocking_limit(0.5, 1.0, 2) + e.ci95 for e in full)
    mf = th.mean_field_blocking(10_000, 100, 2, th.arrival_fraction(10_000, 0.5, 1.0))
    assert scaled[-1].mean / 100 == pytest.approx(mf.blocking, rel=0.1)


def test_theorem9_setting_blocking_below_corollary8_bound():
    n, d, alpha, beta = 4096, 2, 0.5, 4.0
    model = make_loss_model(n, d, "n^alpha log n", alpha=alpha, beta=beta)
    assert model.k == math.ceil(64 * math.log(4096))
    est = estimates(evaluate(model, "greedy", reps=6, jobs=100_000, seed=2))
    c8 = th.corollary8_bound(n, d, model.k, alpha, beta)
    assert est["stein_lhs"].mean <= c8.stein_upper
    full = th.greedy_full_access(n, d, model.lam).blocking
    assert est["blocking_probability"].mean < 5 * full + 1e-3  # close to full access (both tiny here)


# ------------------------------------------------------------------------------------------- theory statements
def test_theorem9_alpha0_rate_is_not_claimed():
    t = th.theorem9(0.0, 0.5, 2)
    assert t.applies and t.blocking_rate_exponent is None and "NOT follow" in t.note
    assert th.theorem9(0.5, 4.0, 2).blocking_rate_exponent == pytest.approx(0.25)
    assert not th.theorem9(0.5, 2.0, 2).applies  # β <= 2(α(d−1)+1) = 3


def test_alpha0_log_n_sampling_decays_slower_than_sqrt_n():
    """Erratum check (docs/errata.md#loss-thm-9-alpha-0): with α = 0, β = 0.2, k = ⌈ln n⌉ the fixed point q^k is far
    above n^-1/2."""
    scaled = [math.sqrt(n) * th.fixed_point(math.ceil(math.log(n)), 2, 0.8).blocking for n in (10**3, 10**5, 10**7)]
    assert scaled[0] > 3 and scaled[1] > 3 * scaled[0] and scaled[2] > 3 * scaled[1]  # not O(n^-1/2)
    model = make_loss_model(10_000, 2, "log n", alpha=0.0, beta=0.2)
    est = estimates(evaluate(model, "greedy", reps=6, jobs=100_000, seed=9))
    assert est["blocking_probability"].mean == pytest.approx(th.fixed_point(10, 2, 0.8).blocking, rel=0.05)


def test_trace_recording_is_bounded_and_rng_reproducible():
    model = make_loss_model(40, 3, 7, lam=0.9)
    a = kernel_run(model, "random-width", reps=3, jobs=5_000, seed=4, trace_events=100)
    b = kernel_run(model, "random-width", reps=3, jobs=5_000, seed=4, trace_events=100)
    assert np.array_equal(a.state.stats, b.state.stats) and len(a.trace(0)) == 100
    c = kernel_run(model, "random-width", reps=3, jobs=5_000, seed=5)
    assert not np.array_equal(a.state.stats, c.state.stats)
    assert not np.array_equal(a.state.stats[0], a.state.stats[1])  # replications use different streams


# ------------------------------------------------------------------------------------------- general size laws
def test_general_kernel_with_exponential_law_matches_exact_chain():
    """The per-job (heap) kernel, fed Erlang(1) = Exp(1) sizes, reproduces the exact sampled count chain."""
    n, d, k, lam = 16, 3, 4, 0.85
    model = make_loss_model(n, d, k, lam=lam, service={"dist": "erlang", "k": 1, "mean": 1.0})
    assert model.service is not None  # really the general path
    est = estimates(evaluate(model, "greedy", reps=10, jobs=40_000, seed=21))
    chain = th.exact_chain(n, d, k, lam)
    assert_covers(est["blocking_probability"], chain.blocking, "P_b")
    assert_covers(est["response_time"], chain.response_time, "E[D]")


@pytest.mark.parametrize("service", [{"dist": "det", "value": 1.0}, {"dist": "hyperexp", "mean": 1.0, "scv": 8.0}])
def test_erlang_b_insensitivity_and_identities_for_general_sizes(service):
    n, d, lam = 24, 3, 0.85
    model = make_loss_model(n, d, "n", lam=lam, service=service)
    est = estimates(evaluate(model, "greedy", reps=10, jobs=40_000, seed=6))
    assert_covers(est["blocking_probability"], erlang_b(n // d, n * lam / d), "insensitive Erlang B")
    for name in ("residual_work", "residual_little", "residual_pasta", "residual_width[w3]"):
        assert_covers(est[name], 0.0, name)
    assert "residual_stein" not in est


def test_service_mean_must_be_one():
    from msjgym.errors import ScenarioError
    with pytest.raises(ScenarioError, match="must be 1"):
        make_loss_model(10, 2, "n", lam=0.5, service={"dist": "det", "value": 2.0})
