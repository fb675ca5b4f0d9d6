"""The large-scale dispatch simulator: exact invariants, known limits, uniform tie-breaking, bad inputs.

Runs go through ``msjgym.evaluate`` (``dispatch_runs.simulate``: a bare dispatch setting with any job-size law as
the scenario); the tests of the engine's own knobs (completions from a heap or from competing clocks, the initial array
sizes) drive the family's replication runner.

Statistical checks compare with Student-t CIs over seeded replications at level 99.9 % per assertion (``LEVEL``):
the file makes about 40 such assertions, so 95 % intervals would raise a false alarm in most runs of the file
(one did, at 1.2 half-widths, in the first run of the M/E3/1 check; other seeds agreed with P-K), while 99.9 %
keeps the family-wise false-alarm rate near 4 %. Where a finite-N or finite-δ bias is expected on top of the
noise, the allowance and its justification are stated at the test.
"""
from __future__ import annotations

import math
import random
import re
from pathlib import Path

import numba
import numpy as np
import pytest
from scipy import stats

import msjgym
from msjgym.core.distributions import Erlang, Exponential, HyperExponential
from msjgym.errors import PolicyError, ScenarioError
from msjgym.systems.dispatch.scorecard import paper_agreement
from msjgym.core.estimates import Estimate
from msjgym.evaluate.intervals import t_interval
from msjgym.policies.dispatch import common, jsq, jsq_d, water_filling
from msjgym.systems.dispatch import loop
from msjgym.core.policy_registry import registered
from msjgym.systems.dispatch import state as state_module
from msjgym.systems.dispatch.contract import INFORMATION, P_K, P_N
from msjgym.systems.dispatch.simulation import DispatchReplications, loop_params, _state, builtin
from msjgym.systems.dispatch.model import DispatchModel, pool_speeds
from msjgym.systems.dispatch.state import V_E, V_POS, V_Q, bucket_down, bucket_up
from msjgym.reproduce.lb_tables import SCENARIOS, scenario_params
from msjgym.systems.dispatch.paper_tables import rows_for
from dispatch_runs import simulate  # noqa: E402  (tests/dispatch_runs.py)


LEVEL = 0.999


def _ci(result, name: str = "response_time") -> Estimate:
    """Mean and 99.9 % t-interval half-width of a metric over the replications of ``result``."""
    return t_interval(np.array([getattr(r, name) for r in result.replications]), LEVEL)


def _within(est: Estimate, value: float, extra: float = 0.0) -> bool:
    return abs(est.mean - value) <= est.ci95 + extra


def _combined(a: Estimate, b: Estimate) -> float:
    return math.hypot(a.ci95, b.ci95)


# ---------------------------------------------------------------- queueing-theory references
def test_random_routing_is_n_independent_mm1_queues():
    lam = 0.7
    r = simulate("random", servers=200, lam=lam, arrivals=400_000, reps=8, seed=11)
    assert _within(_ci(r), 1 / (1 - lam))
    assert _within(_ci(r, "utilization"), lam)
    geometric = (1 - lam) * lam ** np.arange(6)
    for k in range(6):
        frac = t_interval(np.array([x.queue_length_distribution[k] for x in r.replications]), LEVEL)
        assert _within(frac, geometric[k]), (k, frac, geometric[k])


def test_random_routing_mg1_pollaczek_khinchine():
    """Random routing with Erlang(3) sizes: each server is an M/E3/1 queue, E[R] = 1 + λ(1 + SCV)/(2(1 − λ))."""
    lam = 0.6
    r = simulate("random", servers=200, lam=lam, dist=Erlang(k=3, rate=3.0), arrivals=400_000, reps=8, seed=12)
    assert _within(_ci(r), 1 + lam * (1 + 1 / 3) / (2 * (1 - lam)))


def test_jsq_d_matches_mean_field_at_n_1000():
    """JSQ(2), Exp(1), λ = 0.9: fraction of servers with >= i jobs → λ^(2^i − 1) (Mitzenmacher; Vvedenskaya
    et al.).

    Allowance 0.005 on top of the CI: the finite-N bias of these fractions is O(1/N); at N = 1000 it is below
    0.001 in a longer run (5 × 2·10⁶ arrivals: largest gap 0.0008 at i = 5), so 0.005 leaves margin yet would catch
    a wrong sampling rule (JSQ(1) or JSQ(3) change s_3 by > 0.2).
    """
    lam, d = 0.9, 2
    r = simulate("jsq-d", servers=1000, lam=lam, d=d, arrivals=600_000, reps=4, seed=13)
    tail = r.tail()
    for i in range(1, 6):
        mf = lam ** ((d ** i - 1) / (d - 1))
        assert abs(tail[i] - mf) <= 0.005, (i, tail[i], mf)
    assert _within(_ci(r, "message_rate"), lam * d, extra=1e-12)


@pytest.mark.parametrize("fast_arrivals", [30_000, pytest.param(100_000, marks=pytest.mark.slow)])
def test_push_with_frequent_probes_approaches_jsq(fast_arrivals):
    """Push with δ → ∞ knows the exact queue lengths: E[R] → E[R] of JSQ, with a bias that shrinks like 1/δ.
    δ = 200 makes 200 probe events per arrival (90 % of this test's CPU): the default suite runs it on 30,000
    arrivals a replication (its CI, in the combined half-width, 1.7× wider), -m slow on 100,000 as JSQ and δ = 10."""
    kw = dict(servers=50, lam=0.9, arrivals=100_000, reps=6, seed=14)
    jsq = _ci(simulate("jsq", **kw))
    slow = _ci(simulate("push", delta=10.0, **kw))
    fast = _ci(simulate("push", delta=200.0, **{**kw, "arrivals": fast_arrivals}))
    assert slow.mean - jsq.mean > _combined(slow, jsq)  # with few probes push is clearly worse
    # measured bias ≈ 1.3/δ at N = 100 (δ = 20: 0.070, 100: 0.012, 1000: 0.002); allow 2/δ
    assert abs(fast.mean - jsq.mean) <= _combined(fast, jsq) + 2 / 200.0


def test_jiq_and_jsq_have_no_waiting_at_low_load():
    for policy in ("jsq", "jiq"):
        r = simulate(policy, servers=100, lam=0.5, arrivals=100_000, reps=3, seed=15)
        tail = np.append(r.tail(), np.zeros(3))
        assert tail[2] < 1e-3  # hardly any server ever holds two jobs
        assert _within(_ci(r), 1.0, extra=2e-3)


# -------------------------------------------------- exact invariants (Hellemans, Kielanski & Van Houdt §2, §6)
@pytest.mark.parametrize("policy, params, lam, dist", [
    ("push", dict(delta=0.3), 0.9, Exponential(rate=1.0)),
    ("push", dict(delta=0.5), 0.85, HyperExponential.from_mean_scv(1.0, 15.0, 0.5)),
    ("pull", dict(delta0=1.0, delta1=0.5), 0.7, Erlang(k=3, rate=3.0)),
    ("pull", dict(delta=0.2), 0.7, Exponential(rate=1.0)),  # δ₁ = 0, δ₀ = δ/(1 − λ) (Table 3)
    ("water-filling", dict(delta=0.4, batch_size=20), 0.8, Exponential(rate=1.0)),
])
def test_utilization_is_load_and_update_rate_is_delta(policy, params, lam, dist):
    r = simulate(policy, servers=200, lam=lam, dist=dist, arrivals=300_000, reps=6, seed=21, **params)
    assert _within(_ci(r, "utilization"), lam)
    assert _within(_ci(r, "message_rate"), r.model.message_rate)
    # Little's law per replication: time-average queue / λ equals the per-job mean response time
    assert _within(_ci(r, "little_response_time"), _ci(r).mean, extra=_ci(r).ci95)


def test_pull_rate_decomposition():
    m = DispatchModel("pull", 10, 0.7, Exponential(rate=1.0), delta=0.2)
    assert m.delta1 == 0.0 and m.delta0 == pytest.approx(0.2 / 0.3)
    m = DispatchModel("pull", 10, 0.6, Exponential(rate=1.0), delta0=1.0, delta1=0.5)
    assert m.message_rate == pytest.approx(0.6 * 0.5 + 0.4 * 1.0)


@pytest.mark.parametrize("policy, params", [
    ("push", dict(delta=0.3, lam=0.9)), ("pull", dict(delta=0.2, lam=0.7)),
    ("resource-pooling", dict(p=0.3, lam=0.8)), ("jiq", dict(lam=0.9)), ("random", dict(lam=0.8)),
])
def test_completion_heap_and_exponential_clocks_agree(policy, params):
    """Exponential sizes: completions from the heap of drawn sizes, or from one competing clock at a uniformly
    random busy server (memorylessness), give the same system; compared on E[R], busy fraction and P[Q = k]."""
    kw = dict(servers=200, arrivals=200_000, reps=6, **params)
    heap = simulate(policy, completions="heap", seed=31, **kw)
    clocks = simulate(policy, completions="clocks", seed=32, **kw)
    for name in ("response_time", "utilization", "message_rate"):
        a, b = _ci(heap, name), _ci(clocks, name)
        assert abs(a.mean - b.mean) <= _combined(a, b) + 1e-12, (name, a, b)
    for k in range(4):
        a = t_interval(np.array([x.queue_length_distribution[k] for x in heap.replications]), LEVEL)
        b = t_interval(np.array([x.queue_length_distribution[k] for x in clocks.replications]), LEVEL)
        assert abs(a.mean - b.mean) <= _combined(a, b), (k, a, b)


def test_clocks_need_exponential_sizes():
    with pytest.raises(ScenarioError, match="completions = 'clocks': needs exponential job sizes"):
        simulate("push", servers=10, lam=0.5, delta=1.0, dist=Erlang(k=2, rate=2.0), completions="clocks")
    with pytest.raises(ScenarioError, match="completions = 'fast'"):
        simulate("push", servers=10, lam=0.5, delta=1.0, completions="fast")


def test_random_routing_heap_path_is_mm1():
    r = simulate("random", servers=200, lam=0.7, arrivals=300_000, reps=6, seed=33, completions="heap")
    assert _within(_ci(r), 1 / 0.3)


def test_resource_pooling_removal_modes_share_the_mean():
    """Which waiting job a token removes changes the response-time law, not its mean (Little's law)."""
    kw = dict(servers=200, lam=0.8, p=0.3, arrivals=300_000, reps=6, seed=22)
    a = _ci(simulate("resource-pooling", remove="last", **kw))
    b = _ci(simulate("resource-pooling", remove="next", **kw))
    c = _ci(simulate("resource-pooling", remove="random", **kw))
    assert abs(a.mean - b.mean) <= _combined(a, b)
    assert abs(a.mean - c.mean) <= _combined(a, c)


# ---------------------------------------------------------------- uniform tie-breaking (decision kernels)
@numba.njit
def _push_counts(st, pr, draws):
    counts = np.zeros(pr.ints[P_N], dtype=np.int64)
    for _ in range(draws):
        i = common.choose_estimate(st, pr, 0, 0.0)
        counts[i] += 1
        bucket_down(st.srv, V_E, V_POS, st.eord, st.estart, i)  # undo the e_i += 1
    return counts


@numba.njit
def _jsq_counts(st, pr, draws, choose):
    counts = np.zeros(pr.ints[P_N], dtype=np.int64)
    for _ in range(draws):
        counts[choose(st, pr, 0, 0.0)] += 1
    return counts


@numba.njit
def _set_levels(srv, kc, pc, order, start, levels):
    for i in range(levels.size):
        for _ in range(levels[i]):
            bucket_up(srv, kc, pc, order, start, i)


@numba.njit
def _wf_final(st, pr, draws):
    """Queue lengths after each of ``draws`` independent water fillings of the same starting state."""
    n = pr.ints[P_N]
    out = np.zeros((draws, n), dtype=np.int64)
    for r in range(draws):
        water_filling.water_fill(st, pr, 0)
        for j in range(pr.ints[P_K]):
            out[r, st.perm[j]] = st.srv[st.perm[j], V_Q] + st.batch[j]
    return out


def _system(policy: str, n: int, **params):
    model = DispatchModel(policy, n, 0.5, Exponential(rate=1.0), **params)
    st = _state(model, builtin(policy), 64, 16, 1, 5)
    pr = loop_params(model, 100, 10, 16)
    loop.reset(st, pr, 0)
    return st, pr


def _uniform_over(counts: np.ndarray, tied: list[int]) -> None:
    others = np.delete(counts, tied)
    assert others.sum() == 0
    assert stats.chisquare(counts[tied]).pvalue > 1e-3


def test_push_ties_are_uniform_among_smallest_estimates():
    st, pr = _system("push", 10, delta=1.0)
    _set_levels(st.srv, V_E, V_POS, st.eord, st.estart, np.array([2, 1, 3, 1, 2, 1, 4, 1, 2, 5]))
    _uniform_over(_push_counts(st, pr, 40_000), [1, 3, 5, 7])


def test_the_state_module_names_no_policy():
    """state.py names no built-in dispatcher (nor JSQ, JIQ, ...): what one dispatcher keeps is its own area. push and
    pull are also information models of the system (the estimates it keeps and updates at probes), and "random" is
    a word of every docstring: those stay."""
    text = Path(state_module.__file__).read_text().lower()
    words = {"jsq", "jiq", "water filling", "round robin", "resource pooling", "least-loaded"}
    for name in registered("dispatch"):
        if name not in INFORMATION and name != "random":
            words |= {name, name.replace("-", "_"), name.replace("-", " ")}
    found = sorted(w for w in words if re.search(rf"(?<![#\w-]){re.escape(w)}(?![\w-])", text))
    assert found == [], f"state.py names dispatchers: {found}"
    assert re.search(r"(?<![#\w-])round-robin(?![\w-])", "a round-robin pointer")  # the check can fail


def test_the_dispatchers_own_area_is_zeroed_at_every_reset():
    """Round-robin keeps its pointer in its own area (st.own): replication 1 run after replication 0 (which leaves
    the pointer elsewhere than 0) is replication 1 run alone. Two speeds, so where the pointer starts matters."""
    model = DispatchModel("round-robin", 8, 0.5, Exponential(rate=1.0), speeds=pool_speeds(8, 0.25, 4.0))
    alone = DispatchReplications(model, 2000, 200, 2, 7).run(1)
    runs = DispatchReplications(model, 2000, 200, 2, 7)
    runs.run(0)
    assert runs.st.own.shape == (1,) and runs.st.own[0] != 0  # the pointer moved: the reset has something to zero
    after = runs.run(1)
    assert (after.events, after.response_time, after.window) == (alone.events, alone.response_time, alone.window)
    assert np.array_equal(after.queue_length_distribution, alone.queue_length_distribution)


def test_jsq_and_jsq_d_ties_are_uniform_among_shortest_queues():
    levels = np.array([1, 0, 2, 0, 3, 0, 1, 1])
    st, pr = _system("jsq", 8)
    _set_levels(st.srv, V_Q, V_POS, st.qord, st.qstart, levels)
    _uniform_over(_jsq_counts(st, pr, 30_000, jsq.choose_jsq), [1, 3, 5])
    st, pr = _system("jsq-d", 8, d=8)  # d = N: the shortest queue overall, ties uniform
    _set_levels(st.srv, V_Q, V_POS, st.qord, st.qstart, levels)
    _uniform_over(_jsq_counts(st, pr, 30_000, jsq_d.choose_jsq_d), [1, 3, 5])
    st, pr = _system("jsq-d", 8, d=2)  # each server is sampled: all chosen at some point, never a level-3 one
    _set_levels(st.srv, V_Q, V_POS, st.qord, st.qstart, levels)
    counts = _jsq_counts(st, pr, 30_000, jsq_d.choose_jsq_d)
    assert counts[4] == 0 and (np.delete(counts, 4) > 0).all()
    # server 1 (level 0) wins unless paired... P(chosen) = P(sampled) − P(sampled with a tied partner)/2
    assert abs(counts[1] / 30_000 - (2 / 8 - (1 / 28) * 2 / 2)) < 0.01


def test_water_filling_paper_example_and_ties():
    """N = M = K = 3: queues (0, 1, 4) become (2, 2, 4) (paper §2); (0, 0, 4) becomes (2, 1, 4) or (1, 2, 4)."""
    st, pr = _system("water-filling", 3, delta=0.5, batch_size=3)  # K = (0.5/0.5)·3 = 3
    _set_levels(st.srv, V_Q, V_POS, st.qord, st.qstart, np.array([0, 1, 4]))
    assert (_wf_final(st, pr, 50) == [2, 2, 4]).all()
    st, pr = _system("water-filling", 3, delta=0.5, batch_size=3)
    _set_levels(st.srv, V_Q, V_POS, st.qord, st.qstart, np.array([0, 0, 4]))
    out = _wf_final(st, pr, 4000)
    assert ((out == [2, 1, 4]).all(axis=1) | (out == [1, 2, 4]).all(axis=1)).all()
    assert stats.binomtest(int((out[:, 0] == 2).sum()), 4000).pvalue > 1e-3


def test_water_filling_matches_one_task_at_a_time():
    """The O(K + M) fill has the same law as filling one task at a time (ties uniform), on a random start."""
    rng = np.random.default_rng(3)
    levels = rng.integers(0, 4, size=6)
    st, pr = _system("water-filling", 6, delta=0.5, batch_size=5)  # K = 5 of 6
    _set_levels(st.srv, V_Q, V_POS, st.qord, st.qstart, levels)
    fast = _wf_final(st, pr, 20_000)
    slow = np.zeros_like(fast)
    rnd, start = random.Random(3), levels.tolist()  # plain Python: numpy's per-call overhead on 6 servers cost 2 s
    for r in range(slow.shape[0]):
        sel = rnd.sample(range(6), 5)
        q = {i: start[i] for i in sel}
        for _ in range(5):
            low = min(q.values())
            q[rnd.choice([i for i in sel if q[i] == low])] += 1
        for i in sel:  # servers not sampled stay 0, as in _wf_final's rows
            slow[r, i] = q[i]
    # compare the joint law through the frequency of each final configuration
    keys_f, cnt_f = np.unique(fast, axis=0, return_counts=True)
    keys_s, cnt_s = np.unique(slow, axis=0, return_counts=True)
    assert (keys_f == keys_s).all()
    table = np.vstack([cnt_f, cnt_s])
    assert stats.chi2_contingency(table).pvalue > 1e-3


# ---------------------------------------------------------------- reproducibility and array growth
def test_replication_streams_are_independent_of_rep_count():
    a = simulate("push", servers=50, lam=0.8, delta=0.5, arrivals=20_000, reps=2, seed=7)
    b = simulate("push", servers=50, lam=0.8, delta=0.5, arrivals=20_000, reps=3, seed=7)
    assert a.replications[0].response_time == b.replications[0].response_time
    assert a.replications[1].response_time == b.replications[1].response_time


def test_arrays_grow_on_overflow_without_changing_the_run():
    kw = dict(servers=20, lam=0.9, arrivals=20_000, reps=2, seed=8)
    small = simulate("random", array_levels=2, **kw)
    big = simulate("random", array_levels=512, **kw)
    assert [r.response_time for r in small.replications] == [r.response_time for r in big.replications]


# ---------------------------------------------------------------- bad inputs
@pytest.mark.parametrize("kwargs, match", [
    (dict(policy="push", lam=1.0, delta=0.3), "lam = 1.0: must be in"),
    (dict(policy="push", lam=1.5, delta=0.3), "unstable"),
    (dict(policy="push", lam=0.0, delta=0.3), "lam = 0.0"),
    (dict(policy="push", lam=-0.2, delta=0.3), "lam = -0.2"),
    (dict(policy="push", lam=0.9, delta=0.0), "delta = 0.0: must be a finite number > 0"),
    (dict(policy="push", lam=0.9, delta=-1.0), "delta = -1.0"),
    (dict(policy="push", lam=0.9), "delta: missing"),
    (dict(policy="water-filling", lam=0.8, delta=0.3, batch_size=10), "K = .* must be an integer"),
    (dict(policy="water-filling", lam=0.8, delta=0.4, batch_size=2.5), "batch_size = 2.5"),
    (dict(policy="water-filling", lam=0.5, delta=2.0, batch_size=100), r"must be in \[1, servers = 100\]"),
    (dict(policy="jsq-d", lam=0.5, d=101), r"d = 101: must be an integer in \[1, 100\]"),
    (dict(policy="jsq", lam=0.5, d=2), "d = 2: not a parameter of policy 'jsq'"),
    (dict(policy="pull", lam=0.8, delta=0.2, delta1=0.5), r"delta1 = 0.5: must be in \[0, min\(1, delta/lam\)\]"),
    (dict(policy="resource-pooling", lam=0.8, p=1.0), r"p = 1.0: must be a finite number in \[0, 1\)"),
    (dict(policy="resource-pooling", lam=0.8, p=0.3, remove="first"), "remove = 'first'"),
])
def test_bad_inputs_name_the_parameter_and_range(kwargs, match):
    kwargs = dict(kwargs)
    with pytest.raises(ScenarioError, match=match):
        DispatchModel(kwargs.pop("policy"), 100, kwargs.pop("lam"), Exponential(rate=1.0), **kwargs)


def test_unknown_policy():
    with pytest.raises(PolicyError, match="policy = 'jsq2': unknown dispatch policy; valid: jiq, jsq, jsq-d, "):
        DispatchModel("jsq2", 10, 0.5, Exponential(rate=1.0))


def test_load_uses_the_mean_job_size():
    with pytest.raises(ScenarioError, match=r"lam = 0.6: must be in \(0, 0.5\)"):
        simulate("random", servers=10, lam=0.6, dist=Exponential(rate=0.5), arrivals=100)


# ---------------------------------------------------------------- the paper's simulations (slow)
def _erlang(k: int) -> Erlang:
    return Erlang(k=k, rate=float(k))


# Tables 1-4 at N = 1000 (Hellemans, Kielanski & Van Houdt §8) as msjgym.systems.dispatch.paper_tables transcribes them, run
# with the parameters of `msjgym reproduce lb-tables` (pull: δ₁ = 0, δ₀ = δ/(1 − λ),
# docs/modelling-choices.md#lb-table-3-pull-rates; water filling M = C·log10(1000) = 3C, K = (δ/λ)M) and judged as
# its scorecard does (combined 95 % CIs; water filling within 2 %, docs/modelling-choices.md#lb-water-filling).
PAPER_N1000 = [row for table in (1, 2, 3, 4) for row in rows_for(table, servers=1000)]
CHEAP = (0, 8, 12)  # the cheap rows: push Exp, pull Exp, resource pooling Exp


def _paper_row(row):
    """The paper's protocol: N = 1000, 20 replications of N·10⁴ arrivals from empty, 10 % warm-up, 95 % CIs."""
    scenario = msjgym.load_scenario(SCENARIOS[row.table], scenario_params(row))
    r = msjgym.evaluate(scenario, row.policy, reps=20, seed=2024, references=False)
    agrees, how = paper_agreement(r.metrics["response_time"], row)
    print(f"\n{row.policy} {row.label} lam={row.lam} param={row.param}: {how}")
    assert agrees, f"{how}\n{r.metrics}"


@pytest.mark.slow
@pytest.mark.parametrize("row", CHEAP)
def test_paper_n1000_cheap_rows(row):
    _paper_row(PAPER_N1000[row])


@pytest.mark.slow
@pytest.mark.parametrize("row", [i for i in range(len(PAPER_N1000)) if i not in CHEAP])
def test_paper_n1000_other_rows(row):
    _paper_row(PAPER_N1000[row])


@pytest.mark.slow
@pytest.mark.parametrize("policy, dist, lam, params", [
    ("push", Exponential(rate=1.0), 0.9, dict(delta=0.3)),
    ("push", _erlang(6), 0.8, dict(delta=0.25)),
    ("pull", Exponential(rate=1.0), 0.7, dict(delta=0.2)),
    ("resource-pooling", Exponential(rate=1.0), 0.8, dict(p=0.3)),
])
def test_queue_length_distribution_near_cavity_at_n_10000(policy, dist, lam, params):
    """At N = 10⁴ the time-average fraction of servers with q = k is within 0.01 of the cavity queue's P[Q = k]
    (water filling is left out: its finite-N error is larger, docs/modelling-choices.md#lb-water-filling)."""
    cavity = pytest.importorskip("msjgym.systems.dispatch.cavity")
    r = simulate(policy, servers=10_000, lam=lam, dist=dist, arrivals=10_000_000, reps=2, seed=5, **params)
    ref = cavity.cavity(policy, lam, dist, **params)
    pmf = np.asarray(ref.queue_length_pmf)
    size = max(pmf.size, r.queue_length_distribution.size)
    diff = np.zeros(size)
    diff[: pmf.size] += pmf
    diff[: r.queue_length_distribution.size] -= r.queue_length_distribution
    assert np.abs(diff).max() <= 0.01


@pytest.mark.slow
def test_water_filling_n_10000_against_paper_and_cavity():
    """Water filling at N = 10⁴ with the paper's M = 20·log10 N = 80 (Table 2, exponential row), paper protocol
    (N·10⁴ arrivals, 10 % warm-up; 10 of the paper's 20 replications).

    * E[R] agrees with the paper's simulated 3.5446 ± 3.95e-3 within the combined 95 % CIs.
    * Below the cavity maximum the distribution is the cavity's (eq. 21 is exact there): within 0.01 at q < m.
    * The 0.01 criterion of the test above does NOT hold at q = m, m + 1, m + 2: a finite batch of M tasks over K = 40
      sampled queues sometimes overflows the cavity's maximum m + 1 = 5 (measured: 0.0230 ± 0.0008 of servers hold 6
      jobs). This is finite-N behaviour, not a simulator fault: the paper's own N = 10⁴ simulation (3.5446 vs the
      cavity's 3.5136) implies the same excess λ·0.031 ≈ 0.025 jobs per server. The overflow is asserted to match
      that excess (mass moved from m + 1 to m + 2 adds exactly its size to E[Q]) within its 99.9 % CI plus 0.005:
      λ times the paper's CI (0.003) and the small shifts between levels m − 1..m + 1 (≤ 0.002 measured).
    """
    cavity = pytest.importorskip("msjgym.systems.dispatch.cavity")
    lam, delta, m_batch = 0.8, 0.4, 80
    r = simulate("water-filling", servers=10_000, lam=lam, dist=Exponential(rate=1.0), reps=10, seed=7, delta=delta,
                 batch_size=m_batch, arrivals=10_000 * 10_000)
    est = r.response_time  # 95 % t-interval over the replications
    assert abs(est.mean - 3.5446) <= math.hypot(est.ci95, 3.95e-3), r.estimates
    ref = cavity.cavity("water-filling", lam, Exponential(rate=1.0), delta=delta)
    pmf = np.asarray(ref.queue_length_pmf)
    m = pmf.size - 2  # cavity support is 0..m+1
    sim = r.queue_length_distribution
    assert np.abs(sim[:m] - pmf[:m]).max() <= 0.01, (sim[:m], pmf[:m])
    overflow = t_interval(np.array([x.queue_length_distribution[m + 2:].sum() for x in r.replications]), LEVEL)
    excess_jobs = lam * (3.5446 - ref.mean_response_time)  # per server, from the paper's own simulation
    assert abs(overflow.mean - excess_jobs) <= 0.005 + overflow.ci95, (overflow, excess_jobs)


def _plain_water_filling(n: int, lam: float, k: int, m: int, size, tasks: int, seed: int) -> float:
    """Mean response time (from the batch's arrival) of water filling in plain Python: Poisson batches of m tasks at
    rate λn/m, k distinct servers sampled, each task to a currently shortest sampled queue (ties uniform), FIFO
    servers of rate 1; the first 10 % of tasks are warm-up. An independent check of the compiled event loop."""
    import heapq
    import random
    from collections import deque
    rnd = random.Random(seed)
    q, fifo, heap = [0] * n, [deque() for _ in range(n)], []
    t, batch, done, arrived, total, count = 0.0, rnd.expovariate(lam * n / m), 0, 0, 0.0, 0
    while done < tasks:
        if heap and heap[0][0] < batch:
            t, i = heapq.heappop(heap)
            start, index = fifo[i].popleft()
            q[i] -= 1
            done += 1
            if index >= tasks // 10:
                total, count = total + t - start, count + 1
            if q[i]:
                heapq.heappush(heap, (t + size(rnd), i))
            continue
        t, batch = batch, batch + rnd.expovariate(lam * n / m)
        sample = rnd.sample(range(n), k)
        for _ in range(m):
            low = min(q[j] for j in sample)
            j = rnd.choice([j for j in sample if q[j] == low])
            fifo[j].append((t, arrived))
            arrived, q[j] = arrived + 1, q[j] + 1
            if q[j] == 1:
                heapq.heappush(heap, (t + size(rnd), j))
    return total / count


def test_water_filling_end_to_end_matches_plain_python():
    """Batches that sample most servers (K = 16 of N = 20, as the paper's N = 100 rows with K = 90, 96): the compiled
    simulator and a plain-Python one of the same model agree on E[R] (Erlang(3) sizes)."""
    def erlang3(rnd):
        return sum(rnd.expovariate(3.0) for _ in range(3))

    # 20,000 tasks a replication (the plain-Python loop is the cost): the 99.9 % CIs are 1.6× those of 50,000
    plain = t_interval(np.array([_plain_water_filling(20, 0.75, 16, 10, erlang3, 20_000, s) for s in range(8)]), LEVEL)
    ours = _ci(simulate("water-filling", servers=20, lam=0.75, delta=1.2, batch_size=10, dist=Erlang(k=3, rate=3.0),
                        arrivals=20_000, reps=8, seed=11))
    assert abs(ours.mean - plain.mean) <= _combined(ours, plain), (ours, plain)
