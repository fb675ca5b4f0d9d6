"""``msjgym/JobScheduling-v0`` (``msjgym/systems/msj/job_control.py``): the environment checkers, the twin test (an
agent that scores the shown jobs as SJF or F1 does, from the observation alone, reproduces the built-in ``priority``
policy's schedule job for job, for every backfilling rule), the rewards against the per-job statistics computed
independently, and the normalisation across machine sizes.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import msjgym  # noqa: F401  registers the environments
from msjgym.api import load_scenario
from msjgym.core import rng
from msjgym.evaluate.evaluator import evaluate
from msjgym.policies.msj import POLICIES
from msjgym.systems.msj import job_observation as jo
from msjgym.systems.msj.simulation import MSJSimulation, RunConfig
from msjgym.systems.msj.env import JobSchedulingEnv

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
RULES = ("none", "easy", "conservative", "easy-narrow")
PRIORITY = POLICIES["priority"]
TRACE_JOBS = 500

POISSON = """\
description = "needs 1, 3 and 6 on 8 servers, over-estimated durations"
servers = 8
load = 0.7
estimate = { factor = { dist = "uniform", low = 1, high = 4 } }
[[classes]]
name = "small"
need = 1
probability = 0.6
service = { dist = "exp", rate = 1.0 }
[[classes]]
name = "mid"
need = 3
probability = 0.25
service = { dist = "hyperexp", mean = 1.0, scv = 4.0 }
[[classes]]
name = "big"
need = 6
probability = 0.15
service = { dist = "exp", rate = 2.0 }
"""


@pytest.fixture(scope="module")
def trace_window():
    """The first 500 jobs of the example Lublin trace (256 processors, users' estimates as requested times)."""
    sc = load_scenario(str(EXAMPLES / "lublin_256.toml"))
    part = sc.model.trace.window(0, TRACE_JOBS)
    return dataclasses.replace(sc, model=dataclasses.replace(sc.model, trace=part))


def sjf_score(obs: np.ndarray) -> np.ndarray:
    """SJF from the features: the shortest requested time first (log(1 + r / T) is increasing in r)."""
    return -obs[:, jo.REQUESTED]


def heuristic_score(obs: np.ndarray) -> np.ndarray:
    """The base order's own pick (row 0): with ``base_order="f1"`` this is F1 (whose score needs the jobs' absolute
    arrival times, which no normalised feature shows)."""
    return obs[:, jo.HEURISTIC]


def run_agent(env: JobSchedulingEnv, score, seed: int = 0) -> tuple[int, int]:
    """Run one episode picking the present row of highest score (ties: the first row); returns (decisions, the
    most jobs waiting at a decision)."""
    obs, _ = env.reset(seed=seed)
    obs, *_ = env.step(0)  # the initial state: the first step starts the clock
    steps, most = 0, 0
    done = False
    while not done:
        most = max(most, env.unwrapped.view(obs).waiting)
        action = 0  # inspect: accept
        if env.unwrapped.spec_.action == "pick":
            action = int(np.argmax(np.where(obs[:, jo.PRESENT] > 0.5, score(obs), -np.inf)))
        elif env.unwrapped.spec_.action == "backfill":  # the allowed row of highest score (ties: the first)
            mask = env.unwrapped.action_masks()
            assert mask.any() and not mask[0]  # a reserved head (row 0) that does not fit; candidates behind it
            action = int(np.argmax(np.where(mask, score(obs), -np.inf)))
        obs, _, _, truncated, info = env.step(action)
        assert info["fallbacks"] == 0
        steps += 1
        done = truncated
    return steps, most


def builtin_completions(scenario, order: str, rule: str) -> np.ndarray:
    policy = PRIORITY.bind(order=order, backfill=rule)
    n = len(scenario.model.trace)
    sim = MSJSimulation(scenario.model, policy, RunConfig(jobs=n, warmup=0, batches=1), rng.spawn_states(0, 1)[0])
    sim.advance(0, 10**9)
    return sim.completion_times(0)


def twin(scenario, order: str, rule: str, score, **kwargs) -> int:
    """Assert the agent's schedule is priority(order, rule)'s, job for job; returns the most jobs waiting at a
    decision."""
    env = JobSchedulingEnv(scenario, horizon_jobs=None, trace_windows=False, backfill=rule, **kwargs)
    steps, most = run_agent(env, score)
    got = env.unwrapped._venv._batch.sim.completion_times(0)
    want = builtin_completions(scenario, order, rule)
    assert np.isfinite(want).all() and steps > 0
    np.testing.assert_array_equal(got, want)  # the same completion (so start) time of every job, exactly
    return most


# ==================================================================================================== twin test
@pytest.mark.parametrize("rule", RULES)
def test_sjf_and_f1_scores_reproduce_priority_on_a_trace(rule, trace_window):
    """Per rule: SJF scores (rows in SJF order), F1 (rows in F1 order); and SJF with K < the queue's length."""
    twin(trace_window, "sjf", rule, sjf_score, base_order="sjf", window=128)
    twin(trace_window, "f1", rule, heuristic_score, base_order="f1", window=128)
    assert twin(trace_window, "sjf", rule, sjf_score, base_order="sjf", window=4) > 4  # more jobs wait than K


def test_sjf_scores_over_an_fcfs_window_reproduce_sjf(trace_window):
    """The whole queue visible in arrival order (K = 512 > 500 jobs): the SJF score alone chooses the head."""
    twin(trace_window, "sjf", "none", sjf_score, base_order="fcfs", window=512)


@pytest.mark.parametrize("rule", ["easy", "conservative"])
def test_inspect_accepting_every_pick_is_the_base_order(rule, trace_window):
    twin(trace_window, "sjf", rule, None, base_order="sjf", action="inspect")


@pytest.mark.parametrize("rule", RULES)
def test_sjf_scores_reproduce_priority_on_a_poisson_scenario(rule, tmp_path):
    """Poisson arrivals with random over-estimates: the episode's statistics (measured as ``msjgym evaluate`` does)
    equal replication 0 of ``evaluate(seed=S)`` exactly, and so do the events."""
    path = tmp_path / "three.toml"
    path.write_text(POISSON)
    env = JobSchedulingEnv(str(path), horizon_jobs=None, jobs=2000, warmup=200, batches=20, backfill=rule,
                           base_order="sjf", reward="bounded-slowdown")
    run_agent(env, sjf_score, seed=5)
    got = env.unwrapped.episode_result()
    want = evaluate(str(path), PRIORITY.bind(order="sjf", backfill=rule), reps=1, jobs=2000, warmup=200, seed=5,
                    references=False)
    assert got.events == want.events
    assert got.replications == want.replications


def first_row(obs: np.ndarray) -> np.ndarray:
    """The first allowed row (the base order's best candidate): what ``backfilling.easy`` starts next."""
    return -np.arange(len(obs), dtype=np.float64)


def _poisson_backfill_env(tmp_path, order: str) -> tuple[str, JobSchedulingEnv]:
    path = tmp_path / "three.toml"
    path.write_text(POISSON)
    return str(path), JobSchedulingEnv(str(path), horizon_jobs=None, jobs=2000, warmup=200, batches=20,
                                       backfill="easy", base_order=order, reward="bounded-slowdown",
                                       action="backfill", window=512)


@pytest.mark.parametrize("order", ["sjf", "f1"])
def test_backfilling_the_first_allowed_job_is_easy(order, tmp_path):
    """``action="backfill"``: the base order's head reserved, the agent backfilling the first job EASY allows at
    every decision reproduces ``priority`` with EASY exactly (statistics and events of ``evaluate(seed=S)``'s
    replication 0; K = 512, more than ever wait), on a scenario whose over-estimates leave EASY room to backfill."""
    path, env = _poisson_backfill_env(tmp_path, order)
    steps, _ = run_agent(env, first_row, seed=5)
    got = env.unwrapped.episode_result()
    want = evaluate(path, PRIORITY.bind(order=order, backfill="easy"), reps=1, jobs=2000, warmup=200, seed=5,
                    references=False)
    assert steps > 100  # backfilling decisions were taken
    assert got.events == want.events
    assert got.replications == want.replications


def test_backfilling_is_a_choice(tmp_path):
    """Many decisions offer several candidates, and backfilling the last allowed one instead of the first changes
    the schedule (the control: the twin test above could not pass by accident); other rules are refused."""
    path, env = _poisson_backfill_env(tmp_path, "sjf")
    obs, _ = env.reset(seed=5)
    obs, *_ = env.step(0)
    choices = decisions = 0
    done = False
    while not done:
        mask = env.unwrapped.action_masks()
        assert mask.any() and not mask[0]
        decisions += 1
        choices += int(mask.sum() > 1)
        obs, _, _, done, info = env.step(int(np.flatnonzero(mask)[-1]))
        assert info["fallbacks"] == 0
    assert decisions > 100 and choices > 10
    got = env.unwrapped.episode_result()
    want = evaluate(path, PRIORITY.bind(order="sjf", backfill="easy"), reps=1, jobs=2000, warmup=200, seed=5,
                    references=False)
    assert got.replications != want.replications
    with pytest.raises(msjgym.MsjgymError, match="backfill = 'none'.*needs backfill = \"easy\""):
        JobSchedulingEnv(path, action="backfill", backfill="none")


# ==================================================================================================== checkers
@pytest.mark.parametrize("action", ["pick", "inspect", "backfill"])
def test_environment_checkers(action):
    from gymnasium.utils.env_checker import check_env

    env = gym.make("msjgym/JobScheduling-v0", action=action, jobs=3000, window=16)
    check_env(env.unwrapped, skip_render_check=True)
    sb3 = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3.check_env(JobSchedulingEnv(action=action, window=16, processors=64, jobs=2000), warn=False)


def test_vector_env_matches_single_env():
    venv = gym.make_vec("msjgym/JobScheduling-v0", num_envs=3, vectorization_mode="vector_entry_point", jobs=2000,
                        window=32)
    obs, _ = venv.reset(seed=11)
    single = JobSchedulingEnv(jobs=2000, window=32)
    single._seed_stream(np.random.SeedSequence(11).spawn(3)[1])
    s_obs, _ = single.reset()
    np.testing.assert_array_equal(obs[1], s_obs)
    ended = 0
    s_trunc = False
    for _ in range(1200):
        masks = venv.action_masks()
        actions = np.array([int(np.flatnonzero(m)[-1]) for m in masks])
        obs, rewards, _, truncated, _ = venv.step(actions)
        if s_trunc:  # the vector env's autoreset step: the single env's reset
            (s_obs, _), s_reward, s_trunc = single.reset(), 0.0, False
        else:
            s_obs, s_reward, _, s_trunc, _ = single.step(int(actions[1]))
        np.testing.assert_array_equal(obs[1], s_obs)
        assert rewards[1] == s_reward and truncated[1] == s_trunc
        ended += s_trunc
    assert ended >= 1


# ==================================================================================================== rewards
def _episode(trace_window, reward: str, rule: str = "easy") -> tuple[list[float], np.ndarray]:
    env = JobSchedulingEnv(trace_window, horizon_jobs=None, trace_windows=False, backfill=rule, reward=reward,
                           window=32)
    rewards = []
    obs, _ = env.reset(seed=2)
    gen = np.random.default_rng(2)
    done = False
    while not done:
        allowed = np.flatnonzero(env.action_masks())
        obs, r, _, done, _ = env.step(int(gen.choice(allowed)))
        rewards.append(r)
    return rewards, env.unwrapped._venv._batch.sim.completion_times(0)


@pytest.mark.parametrize("reward", ["bounded-slowdown", "mean-bounded-slowdown", "wait", "utilization"])
def test_episode_return_is_the_per_job_statistic(reward, trace_window):
    """A random masked agent on the 500-job window run to completion: the return equals the statistic computed from
    the per-job completion times (the trace's arrivals, needs and run times)."""
    rewards, done = _episode(trace_window, reward)
    trace = trace_window.model.trace
    assert np.isfinite(done).all()
    response = done - trace.arrival
    bsld = np.maximum(1.0, response / np.maximum(trace.duration, 10.0))
    expected = {"bounded-slowdown": -bsld.sum(), "mean-bounded-slowdown": -bsld.mean(),
                "wait": -(response - trace.duration).sum(),
                "utilization": float((trace.need * trace.duration).sum())
                / (trace_window.model.servers * (done.max() - trace.arrival.min()))}[reward]
    assert sum(rewards) == pytest.approx(expected, rel=1e-9)
    if reward in ("mean-bounded-slowdown", "utilization"):
        assert all(r == 0.0 for r in rewards[:-1]) and rewards[-1] != 0.0


# ==================================================================================================== normalisation
def test_same_shape_and_documented_ranges_on_any_machine():
    """A 128- and a 1,024-processor Lublin trace: the same (K, F) observations, every column in its range."""
    seen = []
    for processors in (128, 1024):
        env = JobSchedulingEnv("lublin-feitelson", processors=processors, jobs=3000, window=64)
        obs, _ = env.reset(seed=1)
        gen = np.random.default_rng(1)
        stack = []
        for _ in range(1500):
            obs, _, _, done, _ = env.step(int(gen.choice(np.flatnonzero(env.action_masks()))))
            stack.append(obs)
            if done:
                obs, _ = env.reset()
        stack = np.array(stack)
        seen.append(stack.shape[1:])
        for col in (jo.PRESENT, jo.FITS, jo.RESERVED, jo.HEURISTIC):
            assert set(np.unique(stack[:, :, col])) <= {0.0, 1.0}
        present = stack[:, :, jo.PRESENT] > 0.5
        assert present.any(axis=1).mean() > 0.5  # most decisions see waiting jobs
        for col, low, high in ((jo.NEED, 0.0, 1.0), (jo.WAIT_RATIO, 0.0, 1.0), (jo.REQUESTED_RELATIVE, 0.0, 1.0),
                               (jo.FREE, 0.0, 1.0)):
            values = stack[:, :, col][present]
            assert values.min() >= low and values.max() <= high, (processors, col)
        for col in (jo.REQUESTED, jo.WAIT, jo.START_DELAY, jo.HEAD_DELAY, jo.QUEUE, jo.QUEUE_NEED):
            assert stack[:, :, col].min() >= 0.0 and np.isfinite(stack[:, :, col]).all()
        assert stack[:, :, jo.REQUESTED][present].max() < np.log1p(50 * 3600 / jo.DEFAULT_TIME_SCALE)
        assert (stack[:, :, jo.NEED][present] > 0).all()
        assert np.isin(stack[:, :, jo.NEED][present] * processors, np.arange(1, processors + 1)).mean() > 0.99
    assert seen[0] == seen[1] == (64, jo.FEATURES)


def test_bad_arguments_name_the_parameter():
    for kwargs, name in (({"window": 0}, "window"), ({"action": "start"}, "action"), ({"base_order": "lifo"},
                         "base_order"), ({"backfill": "greedy"}, "backfill"), ({"reward": "holding"}, "reward"),
                         ({"time_scale": -1.0}, "time_scale")):
        with pytest.raises(Exception, match=name):
            JobSchedulingEnv(**kwargs)


# ==================================================================================================== evaluation
SJF_POLICY = '''
import numpy as np

class SJFScore:
    """Scores the shown jobs as SJF does, from JobScheduling-v0's observation (column 2: log(1 + r / T))."""
    env_settings = {"id": "msjgym/JobScheduling-v0", "window": 64, "backfill": "easy", "base_order": "sjf"}

    def act(self, observation, action_mask):
        return int(np.argmax(np.where(action_mask, -observation[:, 2], -np.inf)))
'''


def test_evaluate_runs_a_policy_file_on_this_observation(tmp_path, trace_window):
    """``evaluate(..., "FILE.py:NAME")`` of a policy whose ``env_settings`` name this environment decides through its
    observation: on the trace window (one exact replay) and on windows of it, the same numbers as
    ``priority(sjf, easy)``."""
    path = tmp_path / "sjf_score.py"
    path.write_text(SJF_POLICY)
    builtin = PRIORITY.bind(order="sjf", backfill="easy")
    for run in (dict(reps=1, jobs=TRACE_JOBS, warmup=0), dict(windows=3, window_jobs=100, seed=4)):
        mine = evaluate(trace_window, f"{path}:SJFScore", references=False, **run)
        want = evaluate(trace_window, builtin, references=False, **run)
        assert mine.replications == want.replications and mine.events == want.events
