"""The twin test (ARCHITECTURE.md, "The one contract: a policy"): every built-in policy, driven through
``msjgym/MSJ-v0`` by its observation-only agent (in the policy's own file, on the bases of
``msjgym.policies.msj.agent_forms``), reproduces the compiled fast path's trajectory bit for bit: the same events,
the same per-replication metrics (==, not approx).

Both paths draw from the same stream: the environment's ``reset(seed=S)`` seeds from ``SeedSequence(S).spawn(1)[0]``,
replication 0 of ``evaluate(seed=S)`` from ``SeedSequence(S).spawn(reps)[0]`` (the same child for any reps; tested
below with reps=3). Both measure with the same batches: the per-replication metrics sum the batches' integrals, so
a different batching changes the floating-point sums (and the areas' integration points) in the last bits.

The default suite runs every policy on three scenarios with 2,000 measured jobs (each run still about 4,000
events and thousands of decisions, compared bit for bit: the same code paths as a long run, the agents driven
per event in Python being the cost); ``-m slow`` runs them again with 50,000, and more scenarios.
"""
from __future__ import annotations

import numpy as np
import pytest

from msjgym.systems.msj.env import MSJEnv
from msjgym.errors import PolicyError
from msjgym.evaluate.evaluator import evaluate
from msjgym.api import load_scenario
from msjgym.policies.msj import POLICIES
from msjgym.policies.msj.agent_forms import AGENTS, BuiltinAgent, agent_mode, make_agent
from conftest import skip_unless_applicable

# every built-in policy, as discovered (a new policy file is twin-tested with its default parameters), except those
# whose agent says the observation cannot determine their decisions (``BuiltinAgent.not_expressible``, with the
# reason); their own tests replace the twin test, driving the kernel against a plain-Python statement of the
# definition (tests/test_server_filling_srpt.py, test_backfilling.py, test_balanced_splitting.py)
NOT_EXPRESSIBLE = [name for name, p in POLICIES.items() if p.agent_class.not_expressible]
NONPREEMPTIVE = [name for name, p in POLICIES.items() if not p.preemptive and name not in NOT_EXPRESSIBLE]
PREEMPTIVE = [name for name, p in POLICIES.items() if p.preemptive and name not in NOT_EXPRESSIBLE]
ALL = NONPREEMPTIVE + PREEMPTIVE
WINDOW = 128  # W (start) or L (preemptive): above the queues of these scenarios, so the agents never run short

# The measurement batches both paths use (evaluate's default; the environment takes the same ``batches``).
BATCHES = 20

# Two classes share need 1 (exponential and deterministic durations) and two share need 4 (deterministic and
# exponential): merges by arrival order within a need, simultaneous completions (deterministic sizes started
# together), and preempt-resume with general sizes.
MIXED = """\
description = "shared needs and general durations on 4 servers"
servers = 4
load = 0.6
[[classes]]
name = "exp1"
need = 1
probability = 0.3
service = { dist = "exp", rate = 1.0 }
[[classes]]
name = "det1"
need = 1
probability = 0.25
service = { dist = "det", value = 1.0 }
[[classes]]
name = "h2"
need = 2
probability = 0.25
service = { dist = "hyperexp", mean = 0.5, scv = 8.0 }
[[classes]]
name = "det4"
need = 4
probability = 0.1
service = { dist = "det", value = 0.25 }
[[classes]]
name = "exp4"
need = 4
probability = 0.1
service = { dist = "exp", rate = 4.0 }
"""

# Slow suite: five classes on 8 servers, needs 1 (two classes), 2 and 4 (two classes), non-exponential laws.
SHARED8 = """\
servers = 8
load = 0.7
[[classes]]
name = "a"
need = 1
probability = 0.35
service = { dist = "exp", rate = 1.0 }
[[classes]]
name = "b"
need = 2
probability = 0.2
service = { dist = "exp", rate = 0.5 }
[[classes]]
name = "c"
need = 1
probability = 0.3
service = { dist = "hyperexp", mean = 1.0, scv = 4.0 }
[[classes]]
name = "d"
need = 4
probability = 0.1
service = { dist = "exp", rate = 1.0 }
[[classes]]
name = "e"
need = 4
probability = 0.05
service = { dist = "erlang", k = 2, mean = 0.5 }
"""

GENERAL = """\
servers = 4
load = 0.8
[[classes]]
name = "det1"
need = 1
probability = 0.5
service = { dist = "det", value = 1.0 }
[[classes]]
name = "h2"
need = 2
probability = 0.3
service = { dist = "hyperexp", mean = 0.5, scv = 8.0 }
[[classes]]
name = "u4"
need = 4
probability = 0.2
service = { dist = "uniform", low = 0.1, high = 0.4 }
"""

FILES = {"mixed": MIXED, "shared8": SHARED8, "general": GENERAL}


def _scenario(name: str, tmp_path) -> tuple[str, dict]:
    """(scenario argument, parameters) for a short scenario key."""
    if name == "fig6-0.5":
        return "finite-skip-fig6", {"load": 0.5}
    if name == "fig6-0.8":
        return "finite-skip-fig6", {"load": 0.8}
    if name == "one-and-n":
        return "one-and-n", {}  # needs 1 and 10 on 10 servers
    path = tmp_path / f"{name}.toml"
    path.write_text(FILES[name])
    return str(path), {}


def run_env(scenario: str, params: dict, policy: str, *, jobs: int, warmup: int, seed: int,
            window: int = WINDOW, agent: BuiltinAgent | None = None) -> tuple[MSJEnv, int]:
    """Drive the environment with the policy's agent until the measurement is complete; returns (env, steps)."""
    env = MSJEnv(scenario=scenario, mode=agent_mode(policy), window=window, horizon_jobs=None, jobs=jobs,
                 warmup=warmup, batches=BATCHES, **params)
    agent = agent or make_agent(policy, env.spec_)
    obs, _ = env.reset(seed=seed)
    steps = 0
    done = False
    while not done:
        obs, _, terminated, truncated, _ = env.step(agent(obs))
        steps += 1
        done = terminated or truncated
    return env, steps


def assert_twins(scenario: str, params: dict, policy: str, *, jobs: int = 2_000, warmup: int = 200,
                 seed: int = 7, window: int = WINDOW) -> None:
    fast = evaluate(load_scenario(scenario, params), policy, reps=1, jobs=jobs, warmup=warmup, seed=seed,
                    batches=BATCHES, references=False)
    env, _ = run_env(scenario, params, policy, jobs=jobs, warmup=warmup, seed=seed, window=window)
    slow = env.episode_result()
    assert slow.events == fast.events, f"{policy}: {slow.events} events through the environment, {fast.events} " \
                                       f"in the fast path"
    different = {k: (fast.replications[0][k], slow.replications[0].get(k)) for k in fast.replications[0]
                 if slow.replications[0].get(k) != fast.replications[0][k]}
    assert not different, f"{policy}: metrics differ (fast path, environment): {different}"
    assert slow.replications == fast.replications
    assert slow.stable == fast.stable


# The default suite: every policy on fig6 at load 0.8, one-and-n and the mixed model; the non-preemptive ones also
# at fig6's load 0.5 (and, below, with a window of 2 so their age fallback is exercised). The rest is -m slow.
DEFAULT = [(s, p) for s in ("fig6-0.8", "one-and-n", "mixed") for p in ALL] + [("fig6-0.5", p) for p in NONPREEMPTIVE]
LONG = [(s, p) for s in ("shared8", "general", "fig6-0.8", "one-and-n", "mixed") for p in ALL] + \
    [("fig6-0.5", p) for p in ALL]


@pytest.mark.parametrize("scenario, policy", DEFAULT)
def test_twin(scenario, policy, tmp_path):
    """Fast path and environment (agent on the observation only) agree bit for bit (a policy defined for another
    setting, such as ``msfq``'s one-or-all, is skipped where it does not apply)."""
    name, params = _scenario(scenario, tmp_path)
    skip_unless_applicable(policy, load_scenario(name, params).model)
    assert_twins(name, params, policy)


# SMASH(w)'s agent needs the w oldest waiting jobs shown: with W = 2 it runs with w = 2
SMALL_WINDOW_PARAMS = {"smash": {"w": 2}}


@pytest.mark.parametrize("jobs", [4_000, pytest.param(10_000, marks=pytest.mark.slow)])
@pytest.mark.parametrize("policy", NONPREEMPTIVE)
def test_twin_start_mode_beyond_a_small_window(policy, jobs, tmp_path):
    """W = 2 at a load where queues are long: class heads beyond the window are ordered by their observed ages."""
    name, params = _scenario("mixed", tmp_path)
    bound = POLICIES[policy].bind(**SMALL_WINDOW_PARAMS.get(policy, {}))
    skip_unless_applicable(bound, load_scenario(name).model)  # msfq: tests/test_msfq.py (one-or-all, W = 2)
    assert_twins(name, {"load": 0.75}, bound, jobs=jobs, warmup=jobs // 10, window=2)


@pytest.mark.slow
@pytest.mark.parametrize("scenario, policy", LONG)
def test_twin_long(scenario, policy, tmp_path):
    name, params = _scenario(scenario, tmp_path)
    skip_unless_applicable(policy, load_scenario(name, params).model)
    jobs = 20_000 if scenario == "fig6-0.5" else 50_000
    assert_twins(name, params, policy, jobs=jobs, warmup=jobs // 10, seed=2024)


def test_twin_when_a_run_is_stopped_as_unstable():
    """Load 2: both paths stop at the same checkpoint (event 16,384 here, the earliest the detector can decide);
    the per-replication metrics must still agree. The case of an arrival served at once at the stop is -m slow."""
    assert_twins("finite-skip-fig6", {"load": 2.0}, "lsf", jobs=50_000, warmup=1_000, seed=2, window=64)


@pytest.mark.slow
def test_twin_when_a_run_is_stopped_as_unstable_by_an_arrival_served_at_once():
    """Load 1.3: both paths stop at the same checkpoint (event 32,768 here, a need-1 arrival that LSF serves at
    once); the per-replication metrics must still agree, including that arrival's admission."""
    assert_twins("finite-skip-fig6", {"load": 1.3}, "lsf", jobs=50_000, warmup=1_000, seed=2, window=64)


# ---------------------------------------------------------------- the contract around the twins
def test_every_builtin_policy_has_an_agent():
    assert set(AGENTS) == set(POLICIES) == set(ALL) | set(NOT_EXPRESSIBLE)
    assert {"easy-backfilling", "conservative-backfilling", "server-filling-srpt",
            "server-filling-gittins", "balanced-splitting"} <= set(NOT_EXPRESSIBLE)
    for name in NOT_EXPRESSIBLE:  # an agent form that cannot exist says why
        assert AGENTS[name].not_expressible
        spec = MSJEnv(scenario="finite-skip-fig6", mode=agent_mode(name)).spec_
        with pytest.raises(PolicyError, match=f"'{name}' has no agent form on msjgym/MSJ-v0: "):
            make_agent(name, spec)
    for name in NONPREEMPTIVE:
        assert agent_mode(name) == "start" and not POLICIES[name].preemptive
    for name in PREEMPTIVE:
        assert agent_mode(name) == "preemptive" and POLICIES[name].preemptive


def test_policy_agent_method_and_agent_interface():
    env = MSJEnv(scenario="finite-skip-fig6", mode="preemptive", window=8)
    agent = POLICIES["server-filling"].agent(env.spec_)
    obs, _ = env.reset(seed=1)
    action = agent(obs)
    assert isinstance(action, int) and action == agent.act(obs)
    assert env.action_masks()[action]
    assert callable(POLICIES["fcfs"].agent)


def test_agents_refuse_the_wrong_mode_and_unfit_scenarios(tmp_path):
    start = MSJEnv(scenario="finite-skip-fig6", mode="start").spec_
    with pytest.raises(PolicyError, match="mode='preemptive'"):
        make_agent("msf", start)
    with pytest.raises(PolicyError, match="unknown"):
        make_agent("no-such-policy", start)
    path = tmp_path / "odd.toml"
    path.write_text(GENERAL.replace("servers = 4", "servers = 5").replace("need = 4", "need = 5"))
    with pytest.raises(PolicyError, match="must divide"):
        make_agent("server-filling", MSJEnv(scenario=str(path), mode="preemptive").spec_)
    with pytest.raises(ValueError, match="observation of shape"):
        make_agent("fcfs", start)(np.zeros(3, np.float32))
    for name in NOT_EXPRESSIBLE:  # an agent that cannot exist says why
        with pytest.raises(PolicyError, match=rf"policy '{name}' has no agent form on msjgym/MSJ-v0: .+"):
            make_agent(name, start)


def test_initial_state_gets_a_valid_action():
    for policy in ALL:
        scenario = "one-and-n" if policy == "msfq" else "finite-skip-fig6"  # msfq: needs 1 or n only
        env = MSJEnv(scenario=scenario, mode=agent_mode(policy), window=4)
        obs, _ = env.reset(seed=0)
        assert env.action_masks()[make_agent(policy, env.spec_)(obs)]


def test_environment_seed_is_replication_zero_of_evaluate():
    """``reset(seed=S)`` uses the stream of replication 0 of ``evaluate(seed=S)`` whatever the number of reps."""
    jobs, warmup, seed = 5_000, 500, 5
    fast = evaluate(load_scenario("one-and-n"), "first-fit", reps=3, jobs=jobs, warmup=warmup, seed=seed,
                    batches=BATCHES, references=False)
    env, _ = run_env("one-and-n", {}, "first-fit", jobs=jobs, warmup=warmup, seed=seed)
    assert env.episode_result().replications[0] == fast.replications[0]
    assert env.episode_result().replications[0] != fast.replications[1]


def test_the_twin_test_detects_a_different_policy():
    """Sanity: the comparison has teeth: first-fit's agent in place of FCFS diverges from the compiled FCFS."""
    jobs, warmup, seed = 2_000, 200, 7
    fast = evaluate(load_scenario("finite-skip-fig6", {"load": 0.8}), "fcfs", reps=1, jobs=jobs, warmup=warmup,
                    seed=seed, batches=BATCHES, references=False)
    wrong = make_agent("first-fit", MSJEnv(scenario="finite-skip-fig6", mode="start", window=WINDOW).spec_)
    env2, _ = run_env("finite-skip-fig6", {"load": 0.8}, "fcfs", jobs=jobs, warmup=warmup, seed=seed, agent=wrong)
    assert env2.episode_result().replications[0] != fast.replications[0]
    right, _ = run_env("finite-skip-fig6", {"load": 0.8}, "fcfs", jobs=jobs, warmup=warmup, seed=seed)
    assert right.episode_result().replications[0] == fast.replications[0]


@pytest.mark.parametrize("mode", ["start", "preemptive"])
def test_a_masked_action_is_a_value_error_naming_step_and_action(mode):
    env = MSJEnv(scenario="finite-skip-fig6", mode=mode, window=4, load=0.9, invalid_action="raise")
    policy = "fcfs" if mode == "start" else "msf"
    agent = make_agent(policy, env.spec_)
    obs, _ = env.reset(seed=3)
    steps = 0
    while env.action_masks().all():  # the initial state allows every action: take the agent's until one is masked
        obs, *_ = env.step(agent(obs))
        steps += 1
    mask = env.action_masks()
    masked = int(np.flatnonzero(~mask)[0])
    with pytest.raises(ValueError, match=rf"step {steps}: action {masked} is not allowed"):
        env.step(masked)
    assert np.array_equal(env.action_masks(), mask)  # nothing changed: the agent can go on
    env.step(agent(obs))
    with pytest.raises(ValueError, match=rf"step {steps + 1}: action {env.action_space.n} is not allowed"):
        env.step(env.action_space.n)  # out of range


@pytest.mark.parametrize("policy", ["msf", "first-fit"])
def test_reset_with_the_same_seed_gives_the_same_episode(policy):
    env = MSJEnv(scenario="finite-skip-fig6", mode=agent_mode(policy), window=32, horizon_jobs=None, jobs=1_000,
                 warmup=100, load=0.8)

    def episode(seed: int) -> tuple[list, dict, int]:
        agent = make_agent(policy, env.spec_)  # a fresh agent: no state carried over
        obs, _ = env.reset(seed=seed)
        trace = [obs]
        done = False
        while not done:
            obs, reward, terminated, truncated, info = env.step(agent(obs))
            trace.append((obs, reward, info["dt"]))
            done = terminated or truncated
        return trace, env.episode_result().replications[0], info["events"]

    first = episode(11)
    other = episode(12)
    again = episode(11)
    assert first[1] == again[1] and first[2] == again[2] and len(first[0]) == len(again[0])
    assert np.array_equal(first[0][0], again[0][0])
    assert all(np.array_equal(a[0], b[0]) and a[1:] == b[1:] for a, b in zip(first[0][1:], again[0][1:]))
    assert other[1] != first[1]


@pytest.mark.parametrize("scenario, policy, window", [
    ("fig6-0.8", "msf", 1), ("one-and-n", "lsf", 1), ("fig6-0.8", "maxweight", 1),  # one class per need: counts
    ("fig6-0.8", "server-filling", 4), ("mixed", "server-filling", 4),  # the front holds at most n jobs
])
def test_twin_with_the_smallest_sufficient_window(scenario, policy, window, tmp_path):
    """Where counts settle the decision (one class per need), or the front lies within L = n jobs, a small window is
    enough and the twins still agree (the truncated observation is then used)."""
    name, params = _scenario(scenario, tmp_path)
    assert_twins(name, params, policy, window=window)


def test_a_window_too_small_raises_a_clear_runtime_error(tmp_path):
    """Two classes share need 4: with L = 2 and a queue, MSF must know which of the oldest need-4 jobs belong to
    which class beyond the window; the agent says so instead of guessing."""
    path = tmp_path / "mixed.toml"
    path.write_text(MIXED.replace("load = 0.75", "load = 0.95"))
    env = MSJEnv(scenario=str(path), mode="preemptive", window=2, horizon_jobs=None, jobs=20_000)
    agent = make_agent("msf", env.spec_)
    obs, _ = env.reset(seed=1)
    with pytest.raises(RuntimeError, match=r"agent 'msf': the observation is not enough.*larger window"):
        for _ in range(200_000):
            obs, *_ = env.step(agent(obs))
