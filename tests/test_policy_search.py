"""``msjgym.systems.msj.env_search``: the linear score written into the scoring MLP is exact, a few generations of the
evolution strategy improve a toy objective, the greedy window runner reproduces the built-in ``priority`` policy's
schedule when it picks the base order's job, and a saved model's greedy actions (``sb3:MODEL.zip``, as ``msjgym
evaluate`` runs it) are the numpy scorer's.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import msjgym
from msjgym.systems.msj import env_search as ps
from msjgym.systems.msj import job_observation as jo

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_linear_score_written_into_the_mlp_is_exact():
    rng = np.random.default_rng(3)
    w = rng.normal(size=jo.FEATURES)
    x = rng.uniform(0, 3, size=(200, jo.FEATURES))
    shape = ps.MLPShape()
    assert shape.size == 14 * 32 + 32 + 32 * 16 + 16 + 16 * 8 + 8 + 8 + 1 == 1153
    np.testing.assert_allclose(shape.scores(ps.linear_as_mlp(w), x), x @ w, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="expected \\(14,\\)"):
        ps.linear_as_mlp(np.zeros(3))


def test_centred_ranks_share_ties():
    r = ps.centred_ranks(np.array([3.0, 1.0, 2.0, 2.0]))
    np.testing.assert_array_equal(r, [0.5, -0.5, 0.0, 0.0])


def test_the_two_objectives_weigh_a_heavy_window_differently():
    """``mean-log`` (the mean of the windows' logs) and ``log-mean`` (the log of the windows' mean, which a heavy
    window dominates, as it dominates the evaluation metric): candidate 0 is better on most windows, candidate 1 on
    the heavy one, and each objective prefers its own."""
    bsld = np.array([[10.0, 10.0, 10.0, 1000.0], [20.0, 20.0, 20.0, 500.0]])
    np.testing.assert_allclose(ps.fitness(bsld), np.log(bsld).mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(ps.fitness(bsld, "log-mean"), np.log([257.5, 140.0]), rtol=1e-12)
    assert np.argmin(ps.fitness(bsld, "mean-log")) == 0 and np.argmin(ps.fitness(bsld, "log-mean")) == 1
    with pytest.raises(ValueError, match="objective = 'mean'"):
        ps.fitness(bsld, "mean")
    with pytest.raises(ValueError, match="objective = 'mean'"):
        ps.SearchSettings(objective="mean")


class ToyRunner:
    """Window w of a candidate θ has 'mean bounded slowdown' exp(|θ − target|² + noise_w): the ES must approach
    target; the windows' noise is common to the candidates, as the real runner's windows are."""

    windows, decisions, seconds = 4, 0, 0.0

    def __init__(self, target: np.ndarray) -> None:
        self.target = target

    def run(self, score, thetas, seeds):
        noise = np.array([np.random.default_rng(s).normal(0, 0.5) for s in seeds])
        return np.exp(((thetas - self.target) ** 2).sum(axis=1)[:, None] + 1.0 + np.abs(noise)[None])


@pytest.mark.parametrize("objective", ps.OBJECTIVES)
def test_a_few_generations_improve_a_toy_objective(objective):
    target = np.array([1.0, -2.0, 0.5])
    runner = ToyRunner(target)
    settings = ps.SearchSettings(pairs=6, sigma=0.2, learning_rate=0.1, generations=40, seconds=60,
                                 objective=objective)
    start = np.zeros(3)
    found, _ = ps.evolve(start, settings, [runner], None, seed=5, score=None, print_every=100)
    assert len(settings.log) == 40
    assert np.sum((found - target) ** 2) < 0.25 * np.sum((start - target) ** 2)
    assert settings.log[-1]["centre"] < settings.log[0]["centre"]


@pytest.fixture(scope="module")
def small_trace(tmp_path_factory):
    """A 600-job Lublin-Feitelson draw on 64 processors (a scenario file, as the recipes use)."""
    path = tmp_path_factory.mktemp("trace") / "small.toml"
    path.write_text('description = "small"\nsystem = "msj"\narrivals = { model = "lublin-feitelson", jobs = 600, '
                    'processors = 64, seed = 4, time_scale = 0.6 }\n')
    return str(path)


def test_the_makespan_penalty_adds_its_weight_times_the_mean_log_makespan():
    bsld = np.array([[20.0, 20.0], [10.0, 10.0]])
    span = np.array([[100.0, 100.0], [400.0, 400.0]])
    np.testing.assert_array_equal(ps.penalised_fitness(bsld, span), ps.fitness(bsld))
    got = ps.penalised_fitness(bsld, span, "log-mean", 2.0)
    np.testing.assert_allclose(got, ps.fitness(bsld, "log-mean") + 2.0 * np.log(span).mean(axis=1), rtol=1e-15)
    assert ps.fitness(bsld, "log-mean")[1] < ps.fitness(bsld, "log-mean")[0]
    assert got[1] > got[0]  # half the bounded slowdown bought with 4x the makespan loses at λ = 2
    with pytest.raises(ValueError, match="makespan_weight"):
        ps.SearchSettings(makespan_weight=-1.0)


@pytest.mark.parametrize("backfill", ["none", "easy"])
def test_the_base_order_weights_reproduce_priority(small_trace, backfill):
    """Weight 1 on the heuristic column picks row 0 at every decision: the window's mean bounded slowdown is the
    ``priority`` policy's on the same jobs (one window = the whole 600-job trace from its first job)."""
    sc = msjgym.load_scenario(small_trace, {})
    env = {"window": 32, "base_order": "sjf", "backfill": backfill, "bsld_threshold": 10.0}
    runner = ps.WindowRunner(sc, env, 600, 1, 2)
    _, score = ps.score_function("linear")
    thetas = np.stack([ps.base_order_weights(), ps.base_order_weights() * 3])
    bsld = runner.run(score, thetas, np.random.SeedSequence(1).spawn(1))
    assert bsld[0, 0] == bsld[1, 0]
    from msjgym.api import family, policy_spec

    sjf = policy_spec(family("msj"), "priority").bind(order="sjf", backfill=backfill)
    result = msjgym.evaluate(sc, sjf, seed=0, bsld_threshold=10.0, references=False)  # one exact replay
    assert bsld[0, 0] == pytest.approx(result.metrics["bounded_slowdown"].mean, rel=1e-9)
    assert runner.makespans[0, 0] == runner.makespans[1, 0] == pytest.approx(result.metrics["makespan"].mean,
                                                                              rel=1e-12)
    assert runner.decisions > 600


@pytest.mark.parametrize("accuracy", [False, True])
def test_the_saved_model_acts_as_the_numpy_scorer(tmp_path, accuracy):
    """Also with the estimate-accuracy columns (F = 17); the linear weights of a saved linear model are read back,
    and a network that is not a linear score is refused."""
    pytest.importorskip("sb3_contrib")
    import gymnasium as gym

    from msjgym.core.user_policy import load_user_policy

    rng = np.random.default_rng(8)
    shape = ps.MLPShape(features=jo.FEATURES_ACCURACY if accuracy else jo.FEATURES)
    w = ps.base_order_weights(shape.features) + rng.normal(0, 0.5, size=shape.features)
    theta = ps.linear_as_mlp(w, shape) + rng.normal(0, 0.05, size=shape.size)  # a full network, not only linear
    theta = theta.astype(np.float32).astype(np.float64)
    args = {"window": 32, "action": "pick", "base_order": "sjf", "backfill": "easy", "horizon_jobs": 200,
            "trace_windows": True, "estimate_accuracy": accuracy}
    trace = str(EXAMPLES / "lublin_256.toml")  # 5,000 jobs on 256 processors: queues form
    venv = gym.make_vec("msjgym/JobScheduling-v0", 1, vectorization_mode="vector_entry_point", scenario=trace,
                        **args)
    path = tmp_path / "searched.zip"
    ps.save_sb3_model(theta, venv, str(path), shape=shape)
    with pytest.raises(ValueError, match="not a linear score"):
        ps.linear_weights_of_model(str(path))
    ps.save_sb3_model(w, venv, str(tmp_path / "linear.zip"), shape=shape)
    np.testing.assert_array_equal(ps.linear_weights_of_model(str(tmp_path / "linear.zip")),
                                  w.astype(np.float32).astype(np.float64))
    env = gym.make("msjgym/JobScheduling-v0", scenario=trace, **args).unwrapped
    _, decide = load_user_policy(f"sb3:{path}", env.spec_)
    obs, _ = env.reset(seed=2)
    checked = chosen_other = 0
    for _ in range(400):
        mask = env.action_masks()
        present = obs[:, jo.PRESENT] > 0.5
        values = np.where(mask & present, shape.scores(theta, obs.astype(np.float64)), -np.inf)
        mine = int(np.argmax(values)) if present.any() else 0
        assert decide(obs, mask) == mine
        checked += int(present.sum() >= 2)
        chosen_other += int(mine != 0)
        obs, _, terminated, truncated, _ = env.step(mine)
        if terminated or truncated:
            obs, _ = env.reset()
    assert checked > 50 and chosen_other > 0  # real choices, not only row 0


def test_a_network_start_reads_a_saved_network_with_the_columns_it_lacks_at_zero(tmp_path):
    """``mlp_weights_of_model``: a saved network of the 14 columns, read for the 17 of ``estimate_accuracy``, scores
    every row as before whatever the three new columns hold; other hidden widths, or more columns, are refused."""
    pytest.importorskip("sb3_contrib")
    import gymnasium as gym

    rng = np.random.default_rng(5)
    small, large = ps.MLPShape(features=jo.FEATURES), ps.MLPShape(features=jo.FEATURES_ACCURACY)
    theta = rng.normal(0, 0.3, size=small.size).astype(np.float32).astype(np.float64)
    venv = gym.make_vec("msjgym/JobScheduling-v0", 1, vectorization_mode="vector_entry_point",
                        scenario=str(EXAMPLES / "lublin_256.toml"), window=32, action="pick", base_order="sjf",
                        backfill="none", horizon_jobs=200, trace_windows=True)
    ps.save_sb3_model(theta, venv, str(tmp_path / "net.zip"), shape=small)
    read = ps.mlp_weights_of_model(str(tmp_path / "net.zip"), large)
    assert read.shape == (large.size,)
    x = rng.normal(size=(64, large.features))
    np.testing.assert_allclose(large.scores(read, x), small.scores(theta, x[:, :small.features]), rtol=1e-12)
    np.testing.assert_array_equal(ps.mlp_weights_of_model(str(tmp_path / "net.zip"), small), theta)
    with pytest.raises(ValueError, match="expected at most"):
        ps.mlp_weights_of_model(str(tmp_path / "net.zip"), ps.MLPShape(features=large.features, hidden=(16, 8)))
    with pytest.raises(ValueError, match="expected at most"):
        ps.mlp_weights_of_model(str(tmp_path / "net.zip"), ps.MLPShape(features=small.features - 1))


def test_a_gated_model_scores_exact_times_as_its_first_score_and_acts_as_the_gated_numpy_scorer(tmp_path):
    """The ``"gated"`` parametrisation (``gate_column`` = the accuracy column): with exact requested times (accuracy 1)
    a saved gated model schedules every window as its first score alone; with users' estimates its greedy actions are
    those of f(x) + (1 − accuracy)·x·v, the search's score (:func:`env_search.gated_score`), and not f's alone."""
    pytest.importorskip("sb3_contrib")
    import gymnasium as gym

    from msjgym.core.user_policy import load_user_policy

    rng = np.random.default_rng(3)
    shape = ps.MLPShape(features=jo.FEATURES_ACCURACY)
    f = (ps.base_order_weights(shape.features) + rng.normal(0, 0.5, size=shape.features)).astype(np.float32)
    v = rng.normal(0, 1.0, size=shape.features).astype(np.float32)
    v[jo.HEURISTIC] = -3.0  # the gate open: rarely the base order's job, which f favours
    f, v = f.astype(np.float64), v.astype(np.float64)
    args = {"window": 32, "action": "pick", "base_order": "sjf", "backfill": "easy", "horizon_jobs": 300,
            "trace_windows": True, "estimate_accuracy": True}
    estimated = str(EXAMPLES / "lublin_256.toml")  # users' estimates (SWF field 9)
    exact = str(EXAMPLES / "lublin_256_exact.toml")  # the same jobs, requested time = run time
    venv = gym.make_vec("msjgym/JobScheduling-v0", 1, vectorization_mode="vector_entry_point", scenario=estimated,
                        **args)
    ps.save_sb3_model(f, venv, str(tmp_path / "f.zip"), shape=shape)
    ps.save_sb3_model(f, venv, str(tmp_path / "gated.zip"), shape=shape, gated=v)
    np.testing.assert_array_equal(ps.linear_weights_of_model(str(tmp_path / "gated.zip")), f)  # the first score

    run = {"seed": 4, "windows": 3, "window_jobs": 300, "references": False, "progress": False}
    by = {name: {trace: [r["bounded_slowdown"] for r in msjgym.evaluate(
        msjgym.load_scenario(trace), f"sb3:{tmp_path / name}.zip", **run).replications] for trace in (exact, estimated)}
        for name in ("f", "gated")}
    assert by["gated"][exact] == by["f"][exact]  # accuracy 1: the same schedule, window for window

    score = ps.gated_score(lambda x: x @ f)
    env = gym.make("msjgym/JobScheduling-v0", scenario=estimated, **args).unwrapped
    _, decide = load_user_policy(f"sb3:{tmp_path / 'gated.zip'}", env.spec_)
    obs, _ = env.reset(seed=2)
    inaccurate = 0
    for _ in range(400):
        mask = env.action_masks()
        present = obs[:, jo.PRESENT] > 0.5
        values = np.where(mask & present, score(v, obs.astype(np.float64)), -np.inf)
        mine = int(np.argmax(values)) if present.any() else 0
        assert decide(obs, mask) == mine
        inaccurate += int(obs[0, jo.ACCURACY] < 0.9)
        obs, _, terminated, truncated, _ = env.step(mine)
        if terminated or truncated:
            obs, _ = env.reset()
    assert inaccurate > 100  # the gate was open on most decisions
    assert by["gated"][estimated] != by["f"][estimated]


def test_a_gate_column_is_checked():
    pytest.importorskip("sb3_contrib")
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    from msjgym.envs import to_sb3
    from msjgym.envs.scoring import JobScoringPolicy

    venv = gym.make_vec("msjgym/JobScheduling-v0", 1, vectorization_mode="vector_entry_point",
                        scenario=str(EXAMPLES / "lublin_256.toml"), window=8, horizon_jobs=50, trace_windows=True)
    for bad, message in (({"gate_column": 99}, "gate_column = 99"), ({"gate_column": True}, "gate_column = True"),
                         ({"gate_column": 3, "attention": True}, "not with attention")):
        with pytest.raises(ValueError, match=message):
            MaskablePPO(JobScoringPolicy, to_sb3(venv), policy_kwargs=bad, device="cpu")
