"""Exact solver of small open FCFS multiserver-job systems (msjgym.systems.msj.theory.open_fcfs).

Deterministic checks: classical reductions (M/M/⌊n/m⌋, M/H₂/1), Little's law, the saturated throughput against
Grosof & Ayhan's Lemma 5.3, the truncation control, and an independent full-order CTMC (queue of explicit classes)
that validates the deferred-decision state and the per-class formula.

Against simulation: the simulated FCFS mean number in system matches the solver at 0.5, 0.8 and 0.95 of the
FCFS stability threshold on two "1 and n" systems and a three-class system. Tolerance: the 99.9 % Student-t CI over
10 independent replications must cover the exact value (``msjgym evaluate`` prints the 95 % CI; 99.9 % keeps the
family of seeded checks from failing by chance). Seeds are fixed, so the tests are repeatable. The default suite
runs 60,000–200,000 jobs a replication; ``-m slow`` runs 5–100 times longer.
"""
from __future__ import annotations


import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from conftest import covers, exp_class, model
from msjgym.evaluate.evaluator import evaluate
from msjgym.api import load_scenario
from msjgym.theory import queues
from msjgym.systems.msj.theory.open_fcfs import OpenFCFSSolution, solve_open_fcfs
from msjgym.theory.saturated import fcfs_stability_threshold


def _threshold(servers: int, needs, probabilities, rates) -> float:
    """The FCFS stability threshold μ (saturated throughput) of the system, jobs per unit time."""
    return fcfs_stability_threshold(servers, needs, probabilities, rates)

THREE_CLASS = {"needs": [1, 2, 4], "probabilities": [1 / 3, 1 / 3, 1 / 3], "rates": [1.0, 0.5, 2.0]}


def one_and_n(n: int, p_n: float, mu_1: float = 1.0, mu_n: float = 1.0) -> dict:
    return {"needs": [1, n], "probabilities": [1 - p_n, p_n], "rates": [mu_1, mu_n]}


# =====================================================================================================================
# Classical reductions


@pytest.mark.parametrize("n, m, load", [(10, 3, 0.3), (10, 3, 0.9), (8, 8, 0.7), (12, 1, 0.8), (9, 4, 0.5)])
def test_single_class_is_mms(n, m, load):
    """K = 1 with need m on n servers is an M/M/s, s = ⌊n/m⌋: E[N], E[N_Q] and Erlang C to 1e-9."""
    s, mu = n // m, 1.5
    lam = load * s * mu
    sol = solve_open_fcfs(n, [m], [1.0], [mu], lam, tol=1e-14)
    assert sol.stability_threshold == pytest.approx(s * mu, rel=1e-12)
    assert sol.mean_number_in_system == pytest.approx(queues.mmc_mean_number_in_system(s, lam, mu), abs=1e-9)
    assert sol.mean_number_in_queue == pytest.approx(queues.mmc_mean_number_in_queue(s, lam, mu), abs=1e-9)
    assert sol.queueing_probability == pytest.approx(queues.erlang_c(s, lam / mu), abs=1e-9)
    assert sol.utilization == pytest.approx(lam * m / (mu * n), abs=1e-9)


@pytest.mark.parametrize("load", [0.3, 0.7, 0.9])
def test_one_server_two_classes_is_mh2_1(load):
    """n = 1, two classes with Exp(μ₁), Exp(μ₂) durations: an M/H₂/1, Pollaczek–Khinchine E[N] to 1e-9."""
    p, mu = [0.3, 0.7], [0.5, 3.0]
    mean = sum(pi / m for pi, m in zip(p, mu))
    second = sum(2 * pi / m**2 for pi, m in zip(p, mu))
    lam = load / mean
    sol = solve_open_fcfs(1, [1, 1], p, mu, lam, tol=1e-14)
    assert sol.stability_threshold == pytest.approx(1 / mean, rel=1e-12)
    assert sol.mean_number_in_system == pytest.approx(queues.mg1_mean_number_in_system(lam, mean, second), abs=1e-9)
    assert sol.queueing_probability == pytest.approx(load, abs=1e-9)  # P(server busy) = ρ (PASTA)


@pytest.mark.parametrize("n, system", [(10, one_and_n(10, 0.1)), (4, one_and_n(4, 0.2, 2.0, 0.5)),
                                       (4, THREE_CLASS)])
@pytest.mark.parametrize("fraction", [0.5, 0.9])
def test_littles_law_busy_servers(n, system, fraction):
    """E[busy servers] = λ Σ_i p_i m_i/μ_i and E[c_i] = λp_i/μ_i (Little's law for the servers) to 1e-9."""
    lam = fraction * _threshold(n, **system)
    sol = solve_open_fcfs(n, arrival_rate=lam, tol=1e-12, **system)
    p, m, mu = (np.array(system[k]) for k in ("probabilities", "needs", "rates"))
    assert sol.utilization * n == pytest.approx(lam * np.sum(p * m / mu), abs=1e-9)
    np.testing.assert_allclose(sol.mean_number_in_service_per_class, lam * p / mu, rtol=0, atol=1e-9)
    assert sum(sol.mean_number_in_system_per_class) == pytest.approx(sol.mean_number_in_system, abs=1e-9)
    assert sol.queueing_probability == pytest.approx(float(p @ sol.queueing_probability_per_class), abs=1e-12)


def test_queueing_probability_increases_with_need():
    """P_{Q,i} = P(q ≥ 1 or idle < m_i) is non-decreasing in m_i (PASTA; P_Q as in Wang, Xie & Harchol-Balter §3)."""
    sol = solve_open_fcfs(4, arrival_rate=0.8 * _threshold(4, **THREE_CLASS), **THREE_CLASS)
    assert np.all(np.diff(sol.queueing_probability_per_class) >= 0)


# =====================================================================================================================
# Heavy traffic


@pytest.mark.parametrize("rhos", [(0.95, 0.99), pytest.param((0.99, 0.999), marks=pytest.mark.slow)])
@pytest.mark.parametrize("n, system", [(10, one_and_n(10, 0.1)), (4, THREE_CLASS)])
def test_heavy_traffic_law(n, system, rhos):
    """(1 − ρ)E[q] → E[Δ(Y_d)] + 1 as ρ = λ/μ → 1 (Grosof & Ayhan eq. (2)); the gap shrinks like 1 − ρ: from ρ₀ to
    ρ₁ it falls by at least ((1 − ρ₀)/(1 − ρ₁))^0.7 (5× for 0.99 → 0.999), and at ρ₁ it is below 5(1 − ρ₁) of the
    limit (0.5 % at 0.999). Measured: the gap is 2.1–2.5 (1 − ρ) of the limit at every ρ from 0.9 to 0.999, so a
    law of another order (a √(1 − ρ) gap falls only 2.2× from 0.95 to 0.99) fails. The solver's state space grows
    like 1/(1 − ρ): ρ = 0.999 (8 CPU-s of the two cases) is -m slow, the default suite checks 0.95 → 0.99."""
    from msjgym.theory import saturated
    if not hasattr(saturated, "heavy_traffic_constant"):
        pytest.skip("msjgym.theory.saturated.heavy_traffic_constant is not available")
    limit = saturated.heavy_traffic_constant(n, system["needs"], system["probabilities"], system["rates"])
    mu = _threshold(n, **system)
    gaps = [abs((1 - rho) * solve_open_fcfs(n, arrival_rate=rho * mu, **system).mean_number_in_queue - limit)
            for rho in rhos]
    assert gaps[1] < gaps[0] / ((1 - rhos[0]) / (1 - rhos[1])) ** 0.7
    assert gaps[1] < 5 * (1 - rhos[1]) * limit


@pytest.mark.parametrize("fraction", [1.0, 1.2])
def test_refuses_unstable_load(fraction):
    lam = fraction * _threshold(4, **THREE_CLASS)
    with pytest.raises(ValueError, match="stability threshold"):
        solve_open_fcfs(4, arrival_rate=lam, **THREE_CLASS)


# =====================================================================================================================
# Truncation control


def test_truncation_error_decreases_with_tol():
    """Smaller tol: larger Q, smaller boundary mass (<= tol) and error estimate, and E[N] converges."""
    n, system = 10, one_and_n(10, 0.1)
    lam = 0.9 * _threshold(n, **system)
    sols = [solve_open_fcfs(n, arrival_rate=lam, tol=tol, **system) for tol in (1e-4, 1e-6, 1e-8, 1e-10, 1e-12)]
    reference = solve_open_fcfs(n, arrival_rate=lam, tol=1e-15, **system).mean_number_in_system
    for sol, tol in zip(sols, (1e-4, 1e-6, 1e-8, 1e-10, 1e-12)):
        assert sol.truncation_mass <= tol
        assert sol.truncation_trials[-1] == (sol.truncation_level, sol.truncation_mass)
        assert sol.states == 12 + sol.truncation_level * 13  # 12 configs; 13 phases (c, h) per queue level
    assert all(a.truncation_level < b.truncation_level for a, b in zip(sols, sols[1:]))
    assert all(a.truncation_mass > b.truncation_mass for a, b in zip(sols, sols[1:]))
    assert all(a.queue_error_estimate > b.queue_error_estimate for a, b in zip(sols, sols[1:]))
    errors = [abs(s.mean_number_in_system - reference) for s in sols]
    assert all(a > b for a, b in zip(errors, errors[1:]))
    for sol, err in zip(sols, errors):  # the estimate has the right size (geometric tail)
        assert err <= 3 * sol.queue_error_estimate


def test_decay_rate_of_mms_tail():
    """In an M/M/s the queue-length tail is exactly geometric with ratio ρ."""
    sol = solve_open_fcfs(6, [2], [1.0], [1.0], 2.4)  # M/M/3 at ρ = 0.8
    assert sol.tail_decay_rate == pytest.approx(0.8, rel=1e-6)


@pytest.mark.parametrize("level", [1, 2, 3])
def test_fixed_small_truncation_level(level):
    """A fixed Q is solved once; with too few levels the decay rate (and the error estimate) are unknown (nan)."""
    sol = solve_open_fcfs(4, arrival_rate=0.5, truncation_level=level, **THREE_CLASS)
    assert sol.truncation_level == level and sol.states == 10 + 19 * level  # 10 configs, 19 phases (c, h)
    assert np.isnan(sol.tail_decay_rate) == (level < 3)


def test_refuses_state_space_beyond_max_states():
    lam = 0.95 * _threshold(4, **THREE_CLASS)
    with pytest.raises(ValueError, match="max_states"):
        solve_open_fcfs(4, arrival_rate=lam, max_states=2000, **THREE_CLASS)
    with pytest.raises(ValueError, match="max_states"):
        solve_open_fcfs(200, [1, 2, 3, 5], [0.25] * 4, [1.0] * 4, 1.0, max_states=10_000)


@pytest.mark.parametrize("kwargs, match", [
    ({"needs": [1, 5]}, r"needs"),
    ({"probabilities": [0.5, 0.4, 0.2]}, r"sum to 1"),
    ({"probabilities": [0.5, 0.5]}, r"lengths"),
    ({"rates": [1.0, -1.0, 1.0]}, r"rates\[1\]"),
    ({"arrival_rate": 0.0}, r"arrival_rate"),
    ({"tol": 0.0}, r"tol"),
    ({"servers": 0}, r"servers"),
    ({"needs": []}, r"needs"),
])
def test_rejects_bad_input(kwargs, match):
    args = {"servers": 4, "arrival_rate": 0.5, **THREE_CLASS} | kwargs
    with pytest.raises(ValueError, match=match):
        solve_open_fcfs(**args)


# =====================================================================================================================
# Independent check of the deferred-decision state: the full-order chain (every waiting job's class explicit)


def full_order_chain(servers: int, needs, probabilities, rates, arrival_rate: float, level: int) -> dict:
    """Stationary means of FCFS/HOL with the waiting classes kept in order, arrivals blocked when ``level`` wait."""
    K = len(needs)

    def admit(config, queue):
        config, queue = list(config), list(queue)
        while queue and needs[queue[0]] <= servers - sum(m * c for m, c in zip(needs, config)):
            config[queue.pop(0)] += 1
        return tuple(config), tuple(queue)

    start = ((0,) * K, ())
    index, order, rows, cols, vals = {start: 0}, [start], [], [], []
    for s in order:  # breadth-first over reachable states
        config, queue = s
        moves = []
        if len(queue) < level:
            moves += [(arrival_rate * probabilities[i], admit(config, queue + (i,))) for i in range(K)]
        for j in range(K):
            if config[j]:
                moves.append((rates[j] * config[j], admit(config[:j] + (config[j] - 1,) + config[j + 1:], queue)))
        for rate, t in moves:
            if t not in index:
                index[t] = len(order)
                order.append(t)
            rows.append(index[s])
            cols.append(index[t])
            vals.append(rate)
    size = len(order)
    gen = sp.csr_matrix((vals, (rows, cols)), shape=(size, size))
    gen = gen - sp.diags(np.asarray(gen.sum(axis=1)).ravel())
    a = gen.T.tolil()
    a[0, :] = 0.0
    a[0, 0] = 1.0
    rhs = np.zeros(size)
    rhs[0] = 1.0
    pi = spla.spsolve(a.tocsc(), rhs)
    pi /= pi.sum()
    per_class = np.zeros(K)
    p_queue = np.zeros(K)
    for prob, (config, queue) in zip(pi, order):
        per_class += prob * (np.array(config) + np.bincount(np.array(queue, dtype=int), minlength=K))
        free = servers - sum(m * c for m, c in zip(needs, config))
        p_queue += prob * np.array([bool(queue) or free < m for m in needs])
    return {"per_class": per_class, "p_queue": p_queue, "queue": sum(prob * len(q) for prob, (_, q) in zip(pi, order))}


@pytest.mark.parametrize("n, system, fraction, level", [(4, THREE_CLASS, 0.8, 5), (4, THREE_CLASS, 0.97, 6),
                                                        (5, {"needs": [2, 3, 1], "rates": [0.7, 2.0, 1.0],
                                                             "probabilities": [0.2, 0.5, 0.3]}, 0.9, 5)])
def test_deferred_decisions_equal_full_order_chain(n, system, fraction, level):
    """At the same truncation level the deferred-decision chain is the exact lumping of the full-order chain:
    per-class E[X_i] (head counted by its class, p_i·E[(q−1)^+] behind it), E[q] and P_{Q,i} agree to 1e-12."""
    lam = fraction * _threshold(n, **system)
    sol = solve_open_fcfs(n, arrival_rate=lam, truncation_level=level, **system)
    full = full_order_chain(n, system["needs"], system["probabilities"], system["rates"], lam, level)
    np.testing.assert_allclose(sol.mean_number_in_system_per_class, full["per_class"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(sol.queueing_probability_per_class, full["p_queue"], rtol=0, atol=1e-12)
    assert sol.mean_number_in_queue == pytest.approx(full["queue"], abs=1e-12)
    assert sol.truncation_level == level and sol.truncation_trials == ((level, sol.truncation_mass),)
    # The head is biased towards large needs: E[Q_i] is not p_i·E[q].
    waiting = np.array(sol.mean_number_in_system_per_class) - np.array(sol.mean_number_in_service_per_class)
    assert not np.allclose(waiting, np.array(system["probabilities"]) * sol.mean_number_in_queue, atol=1e-3)


# =====================================================================================================================
# Simulated FCFS vs the exact solver

REPS = 10
# The default suite's sizes (jobs a replication); the tolerance is the 99.9 % CI at whatever size, so a smaller run
# is as honest, with a CI √(former/now) wider (2.2–3.2×). -m slow runs the former sizes (and 0.95 at 20 M).
JOBS = {0.5: 60_000, 0.8: 100_000, 0.95: 200_000}
SLOW_JOBS = {0.5: 300_000, 0.8: 1_000_000}
SLOW_JOBS_095 = 20_000_000
SYSTEMS = {
    "1-and-10, p_n=0.1": (10, one_and_n(10, 0.1), ("1", "n")),
    "1-and-4, p_n=0.2": (4, one_and_n(4, 0.2), ("1", "n")),
    "needs 1,2,4, rates 1,0.5,2": (4, THREE_CLASS, ("c1", "c2", "c3")),
}


def simulate(name: str, fraction: float, jobs: int, seed: int) -> tuple[list[dict], OpenFCFSSolution]:
    n, system, names = SYSTEMS[name]
    lam = fraction * _threshold(n, **system)
    if system["needs"] == [1, n]:
        scenario = load_scenario("one-and-n", {"servers": n, "p_n": system["probabilities"][1], "arrival_rate": lam})
    else:
        scenario = model(n, lam, *(exp_class(c, m, p, mu) for c, m, p, mu in
                                   zip(names, system["needs"], system["probabilities"], system["rates"])))
    result = evaluate(scenario, "fcfs", reps=REPS, jobs=jobs, seed=seed)
    assert result.stable
    return result.replications, solve_open_fcfs(n, arrival_rate=lam, **system)


def check_against_exact(name: str, replications: list[dict], sol: OpenFCFSSolution) -> None:
    names = SYSTEMS[name][2]
    checks = {"number_in_system": sol.mean_number_in_system, "number_in_queue": sol.mean_number_in_queue,
              "queueing_probability": sol.queueing_probability, "utilization": sol.utilization}
    for c, value in zip(names, sol.mean_number_in_system_per_class):
        checks[f"number_in_system[{c}]"] = value
    for metric, exact in checks.items():
        ok, mean, half = covers([r[metric] for r in replications], exact)
        assert ok, f"{name}: {metric} simulated {mean:.5g} ± {half:.3g} (99.9 % CI) vs exact {exact:.6g}"


@pytest.mark.parametrize("fraction", [0.5, 0.8, 0.95])
@pytest.mark.parametrize("name", list(SYSTEMS))
def test_simulation_matches_exact_solver(name, fraction):
    seed = 100 + list(SYSTEMS).index(name) * 10 + int(fraction * 100) % 7
    replications, sol = simulate(name, fraction, JOBS[fraction], seed)
    check_against_exact(name, replications, sol)


@pytest.mark.slow
@pytest.mark.parametrize("fraction", [0.5, 0.8])
@pytest.mark.parametrize("name", list(SYSTEMS))
def test_simulation_matches_exact_solver_long_runs(name, fraction):
    seed = 100 + list(SYSTEMS).index(name) * 10 + int(fraction * 100) % 7
    replications, sol = simulate(name, fraction, SLOW_JOBS[fraction], seed)
    check_against_exact(name, replications, sol)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SYSTEMS))
def test_simulation_matches_exact_solver_long_runs_at_095(name):
    replications, sol = simulate(name, 0.95, SLOW_JOBS_095, 200 + list(SYSTEMS).index(name))
    check_against_exact(name, replications, sol)
