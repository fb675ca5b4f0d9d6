"""Dispatch with per-server speeds (a fast and a slow pool): the model's checks, queueing theory (random routing:
M/G/1 per server at its speed; two servers under SED: value iteration), equal speeds change nothing, the SED
dispatchers, the environment's speed observation and its twin test, and the scenario keys."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

import gymnasium as gym

import msjgym  # noqa: F401  registers the environments
from msjgym.core.distributions import Deterministic
from msjgym.core.estimates import t_interval
from msjgym.systems.dispatch.env import DISPATCH_ENV_ID
from msjgym.errors import MsjgymError, ScenarioError
from msjgym.policies.dispatch import AGENTS
from msjgym.policies.dispatch.sed_d import ShortestExpectedDelaySampled
from msjgym.systems.dispatch.model import DispatchModel, default_dist, pool_speeds
from msjgym.systems.dispatch.scenarios import load_lb_scenario
from msjgym.systems.dispatch.scorecard import random_routing_response_time
from msjgym.systems.dispatch import two_server as two
from dispatch_runs import simulate  # noqa: E402  (tests/dispatch_runs.py)

LEVEL = 0.999


def _ci(result, name: str = "response_time"):
    return t_interval(np.array([getattr(r, name) for r in result.replications]), LEVEL)


# ---------------------------------------------------------------- the pools and the model's checks
def test_pool_speeds_have_mean_one_and_the_ratio():
    speeds = pool_speeds(10, 0.2, 4.0)
    assert len(speeds) == 10 and math.isclose(sum(speeds), 10.0)
    assert speeds[:2] == (speeds[0],) * 2 and speeds[2:] == (speeds[2],) * 8
    assert math.isclose(speeds[0] / speeds[2], 4.0)
    assert pool_speeds(2, 0.5, 7) == (1.75, 0.25)


@pytest.mark.parametrize("args, message", [
    ((10, 0.0, 4), "fast_fraction = 0.0: must be a finite number in (0, 1)"),
    ((10, 1.0, 4), "fast_fraction = 1.0: must be a finite number in (0, 1)"),
    ((10, 0.25, 4), "fast_fraction = 0.25: fast_fraction·servers = 2.5 must be an integer in [1, 9]"),
    ((10, 0.01, 4), "fast_fraction = 0.01: fast_fraction·servers = 0.1 must be an integer in [1, 9]"),
    ((10, 0.2, 0.5), "speed_ratio = 0.5: must be a finite number in [1, 1,000]"),
    ((10, 0.2, math.inf), "speed_ratio = inf: must be a finite number in [1, 1,000]"),
    ((1, 0.5, 2), "servers = 1: must be an integer in [2, "),
])
def test_pool_speeds_refuse_bad_input_in_one_line(args, message):
    with pytest.raises(ScenarioError) as err:
        pool_speeds(*args)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


@pytest.mark.parametrize("kwargs, message", [
    ({"speeds": (1.0, 1.0)}, "speeds = (1.0, 1.0): must be a sequence of servers = 3 speeds > 0"),
    ({"speeds": (1.0, 0.0, 1.0)}, "speeds[1] = 0.0: must be a finite number > 0"),
    ({"speeds": (1.0, math.nan, 1.0)}, "speeds[1] = nan: must be a finite number > 0"),
    ({"speeds": (2000.0, 1.0, 1.0)}, "speeds: fastest / slowest = 2000; must be in [1, 1000]"),
    ({"speeds": (0.5, 0.5, 0.5)}, "lam = 0.9: must be in (0, 0.5) = (0, Σ speeds / (N·E[size]))"),
    ({"speeds": (1.0, 1.0, 1.0), "policy": "resource-pooling", "p": 0.1},
     "speeds: not with policy 'resource-pooling'"),
])
def test_model_refuses_bad_speeds_in_one_line(kwargs, message):
    args = {"policy": "random", "servers": 3, "lam": 0.9, "dist": default_dist()} | kwargs
    with pytest.raises(ScenarioError) as err:
        DispatchModel(**args)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_model_load_uses_the_total_speed():
    m = DispatchModel("random", 2, 0.5, default_dist(), speeds=(3.0, 1.0))
    assert m.load == pytest.approx(0.25) and m.server_speeds == (3.0, 1.0)
    assert DispatchModel("random", 2, 0.5, default_dist()).server_speeds == (1.0, 1.0)


# ---------------------------------------------------------------- theory
def test_random_routing_with_pools_is_mm1_per_server():
    """Random routing, speeds 1.5 and 0.5, λ = 0.3 per server: E[R] = mean of 1/(s − λ) = 2.9167 (M/M/1)."""
    speeds = pool_speeds(4, 0.5, 3.0)
    assert speeds == (1.5, 1.5, 0.5, 0.5)
    exact = np.mean([1 / (s - 0.3) for s in speeds])
    assert random_routing_response_time(0.3, default_dist(), speeds) == pytest.approx(exact)
    r = simulate("random", 4, 0.3, fast_fraction=0.5, speed_ratio=3.0, arrivals=200_000, reps=6, seed=3)
    est = _ci(r)
    assert abs(est.mean - exact) <= est.ci95, (est, exact)
    # utilization: server i is busy λ/s_i of the time
    assert abs(_ci(r, "utilization").mean - np.mean([0.3 / s for s in speeds])) <= _ci(r, "utilization").ci95


def test_random_routing_with_pools_md1_per_server():
    """Deterministic sizes (the completion heap): M/D/1 per server, E[R] = 1/s + λ/(2 s² (1 − λ/s))."""
    speeds = pool_speeds(4, 0.5, 3.0)
    exact = np.mean([1 / s + 0.3 / (2 * s * s * (1 - 0.3 / s)) for s in speeds])
    r = simulate("random", 4, 0.3, Deterministic(1.0), fast_fraction=0.5, speed_ratio=3.0, arrivals=200_000, reps=6,
                 seed=4)
    est = _ci(r)
    assert abs(est.mean - exact) <= est.ci95, (est, exact)


def test_sed_on_two_servers_matches_value_iteration():
    """SED on a fast (1.75) and a slow (0.25) server at Λ = 1.6: the simulation against the exact E[R] of the
    two-queue chain (value iteration; SED's ties, at q_f + 1 = 7(q_s + 1), uniform as in the simulator), and the
    optimum below it; breaking the ties towards the fast server is worse still."""
    exact = two.evaluate_rule(two.sed_rule(1.75, 0.25), 1.6, 1.75, 0.25, cap=80)
    assert exact.mass_at_cap < 1e-8
    best = two.optimum(1.6, 1.75, 0.25, cap=80)
    assert best.response_time < exact.response_time * 0.92
    to_fast = two.evaluate_rule(lambda q0, q1: (q0 + 1) / 1.75 <= (q1 + 1) / 0.25, 1.6, 1.75, 0.25, cap=80)
    assert to_fast.response_time > exact.response_time + 0.05
    assert [exact.threshold(q) for q in range(3)] == [6, 13, 20] and [best.threshold(q) for q in range(3)] == [3, 7, 13]
    for policy, kw in (("sed", {}), ("sed-d", {"d": 2})):
        r = simulate(policy, 2, 0.8, fast_fraction=0.5, speed_ratio=7.0, arrivals=200_000, reps=6, seed=5, **kw)
        est = _ci(r)
        assert abs(est.mean - exact.response_time) <= est.ci95, (policy, est, exact.response_time)


def test_value_iteration_with_equal_speeds_is_jsq():
    """Equal speeds: the optimal rule joins the shorter queue (Winston 1977), so SED is optimal."""
    best = two.optimum(1.2, 1.0, 1.0, cap=60)
    sed = two.evaluate_rule(two.sed_rule(1.0, 1.0), 1.2, 1.0, 1.0, cap=60)
    assert sed.response_time == pytest.approx(best.response_time, rel=1e-7)
    assert all(best.threshold(j) == j + 1 for j in range(5))


def test_value_iteration_refuses_an_unstable_system():
    with pytest.raises(ScenarioError, match=re.escape("arrival_rate = 3: must be in (0, s0 + s1) = (0, 2)")):
        two.optimum(3.0, 1.0, 1.0)


# ---------------------------------------------------------------- equal speeds change nothing
def test_explicit_unit_speeds_equal_no_speeds_on_the_heap_path():
    assert pool_speeds(20, 0.5, 1.0) == (1.0,) * 20
    base = simulate("jsq-d", 20, 0.9, d=2, arrivals=20_000, reps=2, seed=7, completions="heap")
    same = simulate("jsq-d", 20, 0.9, d=2, arrivals=20_000, reps=2, seed=7, fast_fraction=0.5, speed_ratio=1.0,
                    completions="heap")
    assert same.model.speeds is not None and base.model.speeds is None

    def values(run):
        return [(r.response_time, r.utilization, r.message_rate, r.events) for r in run.replications]
    assert values(same) == values(base)


def test_least_loaded_d_reads_time_to_drain():
    """least-loaded-d with unit speeds given explicitly is the same run; with pools it compares the time each
    sampled queue takes to drain (work / speed), which beats the speed-blind jsq-d (1.62 vs 2.35 here)."""
    base = simulate("least-loaded-d", 20, 0.9, d=2, arrivals=20_000, reps=2, seed=6)
    assert simulate("least-loaded-d", 20, 0.9, d=2, arrivals=20_000, reps=2, seed=6,
                    fast_fraction=0.5, speed_ratio=1.0).estimates == base.estimates
    fast = simulate("least-loaded-d", 2, 0.5, d=2, fast_fraction=0.5, speed_ratio=7.0, arrivals=50_000, reps=3, seed=9)
    blind = simulate("jsq-d", 2, 0.5, d=2, fast_fraction=0.5, speed_ratio=7.0, arrivals=50_000, reps=3, seed=9)
    assert fast.response_time.mean < 0.8 * blind.response_time.mean


def test_sed_d_with_equal_speeds_is_jsq_d_draw_for_draw():
    a = simulate("sed-d", 20, 0.9, d=3, arrivals=20_000, reps=2, seed=8)
    b = simulate("jsq-d", 20, 0.9, d=3, arrivals=20_000, reps=2, seed=8)
    assert a.estimates == b.estimates
    assert a.model.message_rate == pytest.approx(2.7)  # d·λ, the designed rate the scorecard shows
    assert abs(a.estimates["message_rate"].mean - 2.7) < 0.05


def test_clocks_refuse_speeds():
    with pytest.raises(ScenarioError, match="completions = 'clocks': needs exponential job sizes, equal server"):
        simulate("random", 2, 0.5, fast_fraction=0.5, speed_ratio=3.0, arrivals=100, reps=1, completions="clocks")


def test_sed_prefers_the_fast_server_until_its_expected_delay_is_longer():
    """Low load, a 7× faster server: SED sends most jobs to it; jsq-d, speed-blind, splits them evenly, so its
    mean response time is far higher."""
    sed = simulate("sed", 2, 0.5, fast_fraction=0.5, speed_ratio=7.0, arrivals=50_000, reps=3, seed=9)
    jsq = simulate("jsq-d", 2, 0.5, d=2, fast_fraction=0.5, speed_ratio=7.0, arrivals=50_000, reps=3, seed=9)
    assert sed.response_time.mean < 0.6 * jsq.response_time.mean


# ---------------------------------------------------------------- the environment
def test_env_shows_the_sampled_servers_speeds():
    env = gym.make(DISPATCH_ENV_ID, servers=4, lam=0.5, observation="sampled", d=3, fast_fraction=0.5,
                   speed_ratio=3.0, render_mode="ansi").unwrapped
    obs, _ = env.reset(seed=0)
    assert env.render().splitlines()[1].split(":")[1].split() == [f"{s:g}" for s in obs[3:]]
    assert obs.shape == (6,) and env.observation_space.shape == (6,)
    for _ in range(50):
        view = env.spec_.view(obs)
        assert set(view.speeds.tolist()) <= {1.5, 0.5}
        assert view.queue_lengths.tolist() == obs[:3].astype(int).tolist()
        obs, *_ = env.step(view.shortest_expected_delay)


@pytest.mark.parametrize("kwargs, message", [
    ({"fast_fraction": 0.5}, "fast_fraction = 0.5, speed_ratio = None: give both"),
    ({"observation": "histogram", "fast_fraction": 0.5, "speed_ratio": 3.0},
     "fast_fraction, speed_ratio: only for observation='sampled'"),
    ({"fast_fraction": 0.3, "speed_ratio": 3.0}, "fast_fraction = 0.3: fast_fraction·servers = 1.2"),
])
def test_env_refuses_bad_speed_arguments_in_one_line(kwargs, message):
    args = {"servers": 4, "lam": 0.5, "observation": "sampled"} | kwargs
    with pytest.raises((MsjgymError, ScenarioError)) as err:
        gym.make(DISPATCH_ENV_ID, **args)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_sed_d_agent_twin_equals_simulate():
    """The sed-d agent through the environment (speeds 1.5 and 0.5: float32 numbers) and the compiled sed-d: the
    same replications, draw for draw; a speed-blind agent on the same seeds differs."""
    assert AGENTS["sed-d"] == ("sampled", ShortestExpectedDelaySampled)
    kw = {"d": 2, "fast_fraction": 0.5, "speed_ratio": 3.0, "arrivals": 6000, "reps": 3, "seed": 5}
    got = simulate(ShortestExpectedDelaySampled(), 4, 0.7, observation="sampled", **kw)
    want = simulate("sed-d", 4, 0.7, **kw)
    assert got.estimates == want.estimates
    assert got.result.replications == want.result.replications
    blind = simulate(lambda obs: int(np.argmin(obs[:2])), 4, 0.7, observation="sampled", **kw)
    assert blind.response_time.mean != want.response_time.mean


# ---------------------------------------------------------------- the scenario keys
def test_scenario_takes_the_pools():
    sc = load_lb_scenario("lb-dispatch", {"servers": 4, "lam": 0.3, "fast_fraction": 0.5, "speed_ratio": 3})
    assert sc.model.speeds == (1.5, 1.5, 0.5, 0.5)
    assert sc.params["fast_fraction"] == 0.5 and sc.params["speed_ratio"] == 3.0
    assert sc.model.model("sed").speeds == (1.5, 1.5, 0.5, 0.5)
    assert sc.model.paper_row("push") is None


@pytest.mark.parametrize("overrides, message", [
    ({"speed_ratio": 3}, "lb-dispatch: fast_fraction = None, speed_ratio = 3: give both"),
    ({"fast_fraction": 0.5, "speed_ratio": -1}, "lb-dispatch: speed_ratio = -1: must be a finite number in [1, 1,000]"),
])
def test_scenario_refuses_bad_pools_in_one_line(overrides, message):
    with pytest.raises(ScenarioError) as err:
        load_lb_scenario("lb-dispatch", {"servers": 4} | overrides)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)
