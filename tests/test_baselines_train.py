"""baselines/train.py without training: scenario files in recipes, policies that refuse a scenario, the reference
column of the comparison table."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import msjgym
from msjgym.errors import PolicyError

ROOT = Path(__file__).resolve().parents[1]


def test_a_recipe_scenario_file_resolves_from_any_working_directory(train, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = train.load_config(ROOT / "baselines" / "maskable_ppo_preemptive_nondivisible.toml")
    name = train.scenario_name(config)
    assert Path(name).is_file() and Path(name).resolve().parent == ROOT / "baselines" / "scenarios"
    scenario = msjgym.load_scenario(name, train.scenario_params(config))
    assert scenario.model.servers == 10 and sorted(scenario.model.needs) == [1, 3, 4, 7]
    assert scenario.model.load == pytest.approx(0.9)
    assert train.scenario_name({"scenario": {"name": "one-and-n"}}) == "one-and-n"


def test_server_filling_refuses_the_nondivisible_recipe(train):
    """The refusal the recipe's table records: ServerFilling is undefined when needs do not divide n."""
    config = train.load_config(ROOT / "baselines" / "maskable_ppo_preemptive_nondivisible.toml")
    scenario = msjgym.load_scenario(train.scenario_name(config), train.scenario_params(config))
    for policy in ("server-filling", "server-filling-divisible"):
        with pytest.raises(PolicyError, match="every need must divide servers=10"):
            msjgym.evaluate(scenario, policy, reps=2, jobs=100, warmup=10, seed=1, references=False)


def test_table_uses_the_configured_reference_and_shows_refusals(train):
    learned = {"policy": "maskable-ppo (learned)", "preemptive": "yes", "stable": True, "response_time": 5.0,
               "ci95": 0.1, "growth_rate": None}
    mw = {"policy": "maxweight", "preemptive": "yes", "stable": True, "response_time": 4.0, "ci95": 0.2,
          "growth_rate": None}
    refused = {"policy": "server-filling", "preemptive": "yes", "stable": None, "refused": "needs [3] do not"}
    table = train.format_table([learned, refused, mw], "maxweight")
    assert "| × MaxWeight |" in table
    assert "| maskable-ppo (learned) | yes | yes | 5.000 ± 0.100 | 1.250 |" in table
    assert "| server-filling | yes | — | refused: needs [3] do not | — |" in table
    assert "Learned vs MaxWeight (preemptive): 1.250×" in table and "worse, disjoint 95 % CIs" in table
    learned["response_time"] = 4.1  # CIs [4.0, 4.2] and [3.8, 4.2] overlap
    assert "the 95 % CIs overlap" in train.format_table([learned, mw], "maxweight")


@pytest.mark.parametrize("mode", ["preemptive", "start"])
def test_queue_shaping_adds_the_change_of_the_potential(train, mode):
    """With gamma = 1 the shaping terms of a trajectory telescope to Φ(last) − Φ(first) = −β Σ_c N_c² at the end
    (the episode starts empty), N_c read from the simulator's state, not the observation."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import VecEnvWrapper

    from msjgym.envs import MSJVectorEnv, to_sb3
    from msjgym.systems.msj.state import C_N

    class Raw(VecEnvWrapper):  # keeps the unshaped rewards
        def reset(self):
            return self.venv.reset()

        def step_wait(self):
            obs, self.rewards, dones, infos = self.venv.step_wait()
            return obs, self.rewards, dones, infos

    venv = MSJVectorEnv(3, scenario="one-and-n", mode=mode, window=4, horizon_jobs=10_000, servers=4)
    raw = Raw(to_sb3(venv))
    shaped = train.queue_shaping(raw, train.queue_count_columns(mode, 2), 0.25, 1.0)
    shaped.seed(5)
    shaped.reset()
    rng = np.random.default_rng(0)
    added = np.zeros(3)
    for _ in range(300):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in np.asarray(venv.action_masks())])
        shaped.step_async(actions)
        _, rewards, dones, _ = shaped.step_wait()
        assert not dones.any()
        added += rewards - raw.rewards
    counts = np.asarray(venv._batch.sim.state.cls_i)[:3, :2, C_N].astype(float)
    assert counts.sum() > 0
    assert np.allclose(added, -0.25 * (counts ** 2).sum(axis=1), rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("recipe", ["hpc_pick.toml", "hpc_pick_gated.toml", "hpc_pick_v1.toml", "hpc_pick_easy_v1.toml",
                                    "hpc_pick_est.toml", "hpc_pick_easy_est.toml", "hpc_pick_est_acc.toml",
                                    "hpc_pick_easy_est_acc.toml",
                                    "hpc_pick_easy_est_sizes.toml", "hpc_pick_easy_est_mean.toml",
                                    "hpc_pick_easy_est_saf.toml", "hpc_pick_easy.toml",
                                    "hpc_pick_easy_est_saf_mlp.toml", "hpc_pick_easy_mixed.toml"])
def test_the_job_scheduling_recipes_parse(train, recipe):
    """The keys of the learned HPC scheduler's recipes: the environment id and its arguments, the job-scoring
    policy, the held-out traces (which share no job with the training trace)."""
    config = train.load_config(ROOT / "baselines" / recipe)
    assert train.env_id(config) == "msjgym/JobScheduling-v0"
    args = train.env_arguments(config)
    assert args["window"] == 128 and args["action"] == "pick" and args["reward"] == "mean-bounded-slowdown"
    assert "id" not in args and "num_envs" not in args and Path(args["scenario"]).is_file()
    ppo = dict(config["ppo"], score_arch=[16, 8])
    policy, kwargs = train.policy_of(ppo, venv=None)
    assert policy.__name__ == "JobScoringPolicy" and kwargs == {"score_arch": [16, 8]}
    assert "policy" not in ppo and "score_arch" not in ppo  # the rest goes to MaskablePPO
    held_out = train.held_out_scenarios(config)
    assert len(held_out) == 4 and all(Path(p).is_file() for p in held_out)
    backfill = config["env"]["backfill"]
    assert {b["order"] for b in config["evaluate"]["baselines"]} == {"fcfs", "sjf", "saf", "f1", "wfp3", "unicep"}
    assert {b["backfill"] for b in config["evaluate"]["baselines"]} == {backfill}


def test_policy_keys_are_checked(train):
    with pytest.raises(SystemExit, match="policy = 'cnn'"):
        train.policy_of({"policy": "cnn"}, None)
    with pytest.raises(SystemExit, match="score_arch: only with policy"):
        train.policy_of({"score_arch": [8]}, None)
    assert train.policy_of({}, None) == ("MlpPolicy", {})


def test_the_held_out_trace_is_the_continuation_of_the_training_draw():
    """``skip``: jobs 20,001-40,000 of seed 1's draw, disjoint from the training trace's 1-20,000 (the same draw of
    40,000 jobs, cut in two)."""
    folder = ROOT / "baselines" / "scenarios"
    train_trace = msjgym.load_scenario(str(folder / "lublin_256_train.toml"), {}).model.trace
    held_out = msjgym.load_scenario(str(folder / "lublin_256_heldout.toml"), {}).model.trace
    whole = msjgym.load_scenario("lublin-feitelson", {"jobs": 40_000, "processors": 256, "seed": 1,
                                                      "time_scale": 0.6}).model.trace
    assert len(train_trace) == len(held_out) == 20_000
    for first, second, column in ((train_trace, whole.window(0, 20_000), "need"),
                                  (held_out, whole.window(20_000, 20_000), "need")):
        np.testing.assert_array_equal(getattr(first, column), getattr(second, column))
        np.testing.assert_array_equal(first.duration, second.duration)
        np.testing.assert_allclose(first.arrival, second.arrival, rtol=0, atol=1e-6)
    assert "jobs 20,001–40,000 of a draw" in held_out.source


@pytest.mark.parametrize("recipe", ["hpc_pick_est.toml", "hpc_pick_easy_est.toml", "hpc_pick_est_acc.toml",
                                    "hpc_pick_easy_est_acc.toml"])
def test_the_estimate_recipes_train_and_select_on_estimates_never_on_an_evaluation_trace(train, recipe):
    """The ``_est`` recipes: every training and validation trace has Tsafrir estimates drawn with an estimate seed no
    evaluation trace uses, every evaluation trace has Tsafrir estimates, and no trace is both (the same jobs as the
    exact recipes' traces, only the requested times differ). The ``_acc`` ones: those of their ``_est`` recipe, with
    the estimate-accuracy columns, started from the recorded ``_est`` model."""
    config = train.load_config(ROOT / "baselines" / recipe)
    exact = train.load_config(ROOT / "baselines" / recipe.replace("_est", "").replace("_acc", "")
                              .replace(".toml", "_v1.toml"))  # the first recorded exact-time models
    if recipe.endswith("_acc.toml"):
        est = train.load_config(ROOT / "baselines" / recipe.replace("_acc", ""))
        assert config["env"] == {**est["env"], "estimate_accuracy": True}
        assert config["search"]["start"] == f"baselines/results/{est['name']}.zip"
        assert config["evaluate"] == est["evaluate"]
    for key in ("scenarios", "validation_scenarios"):
        assert [s.replace("_tsafrir", "") for s in config["search"][key]] == exact["search"][key]
    assert [s.replace("_tsafrir", "") for s in config["evaluate"]["scenarios"]] == exact["evaluate"]["scenarios"]
    laws = {}
    for name in {*config["search"]["scenarios"], *config["search"]["validation_scenarios"],
                 *config["evaluate"]["scenarios"]}:
        law = msjgym.load_scenario(train.scenario_name({"scenario": {"name": name}}), {}).model.estimate
        assert law.kind == "tsafrir", name
        laws[name] = law.model.seed
    evaluation_seeds = {laws[n] for n in config["evaluate"]["scenarios"]}
    training_seeds = [laws[n] for n in (*config["search"]["scenarios"], *config["search"]["validation_scenarios"])]
    assert not evaluation_seeds & set(training_seeds) and len(set(training_seeds)) == len(training_seeds)
    assert not set(train.held_out_scenarios(config)) & {train.scenario_name({"scenario": {"name": n}}) for n in
                                                         (*config["search"]["scenarios"],
                                                          *config["search"]["validation_scenarios"])}


def test_the_mixed_recipe_trains_on_both_kinds_of_requested_times_never_on_an_evaluation_trace(train):
    """``hpc_pick_easy_mixed``: the exact recipe's training and validation traces, each also with Tsafrir estimates
    (the ``_est`` recipe's), started from the recorded exact model; its evaluation traces are the exact recipe's."""
    config = train.load_config(ROOT / "baselines" / "hpc_pick_easy_mixed.toml")
    exact = train.load_config(ROOT / "baselines" / "hpc_pick_easy_v1.toml")
    est = train.load_config(ROOT / "baselines" / "hpc_pick_easy_est.toml")
    for key in ("scenarios", "validation_scenarios"):
        assert config["search"][key] == exact["search"][key] + est["search"][key]
    assert config["search"]["start"] == "baselines/results/hpc_pick_easy_v1.zip"
    assert config["env"] == exact["env"] and config["evaluate"]["scenarios"] == exact["evaluate"]["scenarios"]
    used = {train.scenario_name({"scenario": {"name": n}}) for n in
            (*config["search"]["scenarios"], *config["search"]["validation_scenarios"])}
    held_out = set(train.held_out_scenarios(config)) | set(train.held_out_scenarios(est))
    assert not used & held_out


@pytest.mark.parametrize("recipe", ["hpc_pick_easy_est_sizes.toml", "hpc_pick_easy_est_mean.toml",
                                    "hpc_pick_easy_est_saf.toml", "hpc_pick_easy.toml",
                                    "hpc_pick_easy_est_saf_mlp.toml"])
def test_the_sizes_recipes_train_on_other_machine_sizes_than_the_held_out_cell_iv(train, recipe):
    """``hpc_pick_easy_est_sizes.toml``, ``_mean``, ``_saf``, ``hpc_pick_easy.toml`` (``_saf`` with search seed 3;
    named ``_saf_seed3`` until it was promoted), ``_saf_mlp``: the ``_acc`` EASY recipe (``_saf*`` and
    ``hpc_pick_easy``: base order SAF, started at its pick; ``_saf_mlp`` from ``hpc_pick_easy``) on 256, 512 and
    2,048 processors, never on an evaluation trace, never with an evaluation estimate seed, and never on 1,024
    processors (cell (iv)'s)."""
    config = train.load_config(ROOT / "baselines" / recipe)
    acc = train.load_config(ROOT / "baselines" / "hpc_pick_easy_est_acc.toml")
    saf = "_saf" in recipe or recipe == "hpc_pick_easy.toml"
    assert config["env"] == {**acc["env"], **({"base_order": "saf"} if saf else {})}
    assert config["evaluate"] == acc["evaluate"]
    start = {"hpc_pick_easy_est_saf_mlp.toml": "baselines/results/hpc_pick_easy.zip"}.get(
        recipe, None if saf else "baselines/results/hpc_pick_easy_est_acc.zip")
    assert config["search"].get("start") == start

    def trace(name: str) -> msjgym.systems.msj.model.MSJModel:
        return msjgym.load_scenario(train.scenario_name({"scenario": {"name": name}}), {}).model

    learned_on = [trace(n) for n in (*config["search"]["scenarios"], *config["search"]["validation_scenarios"])]
    held_out = [trace(n) for n in config["evaluate"]["scenarios"]]
    assert sorted({m.servers for m in learned_on}) == [256, 512, 2048]
    assert held_out[3].servers == 1024 and all(m.estimate.kind == "tsafrir" for m in learned_on + held_out)
    seeds = [m.estimate.model.seed for m in learned_on]
    assert len(set(seeds)) == len(seeds) and not set(seeds) & {m.estimate.model.seed for m in held_out}
    assert not set(train.held_out_scenarios(config)) & {train.scenario_name({"scenario": {"name": n}}) for n in
                                                         (*config["search"]["scenarios"],
                                                          *config["search"]["validation_scenarios"])}


def test_a_tsafrir_training_trace_keeps_the_jobs_and_changes_only_the_requested_times():
    folder = ROOT / "baselines" / "scenarios"
    exact = msjgym.load_scenario(str(folder / "lublin_256_train.toml"), {}).model.trace
    estimated = msjgym.load_scenario(str(folder / "lublin_256_train_tsafrir.toml"), {}).model.trace
    np.testing.assert_array_equal(exact.need, estimated.need)
    np.testing.assert_array_equal(exact.duration, estimated.duration)
    np.testing.assert_array_equal(exact.arrival, estimated.arrival)
    assert (estimated.estimate >= estimated.duration).all()
    assert np.unique(estimated.estimate).size < np.unique(exact.duration).size / 10  # a few round values


@pytest.mark.parametrize("recipe, kept", [("hpc_pick_easy_gated.toml", "hpc_pick_easy_long"),
                                          ("hpc_pick_easy_gated_makespan.toml", "hpc_pick_easy_makespan"),
                                          ("hpc_pick.toml", "hpc_pick_v1"), ("hpc_pick_gated.toml", "hpc_pick_v1")])
def test_a_gated_recipe_keeps_an_exact_model_and_searches_the_estimate_score_on_estimate_traces(train, recipe, kept):
    """The gated recipes: the kept score is a recorded exact-time model of the same environment (base order,
    backfilling, window) with the accuracy columns on, the gated stage is the only one, and it trains and validates on
    Tsafrir traces only, none an evaluation trace of either kind of requested times."""
    config = train.load_config(ROOT / "baselines" / recipe)
    exact = train.load_config(ROOT / "baselines" / f"{kept}.toml")
    assert config["search"]["start"] == f"baselines/results/{kept}.zip"
    assert [s["parametrisation"] for s in config["search"]["stages"]] == ["gated"]
    assert config["env"]["estimate_accuracy"] is True and not exact["env"].get("estimate_accuracy", False)
    assert {k: v for k, v in config["env"].items() if k != "estimate_accuracy"} == exact["env"]
    used = {train.scenario_name({"scenario": {"name": n}}) for n in
            (*config["search"]["scenarios"], *config["search"]["validation_scenarios"])}
    assert all(n.endswith("_tsafrir.toml") for n in used)
    assert not used & (set(train.held_out_scenarios(config)) | set(train.held_out_scenarios(exact)))


def _hpc_select():
    """``baselines/hpc_select.py`` (a script), loaded as a module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_hpc_select", ROOT / "baselines" / "hpc_select.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_recorded_hpc_models_are_the_selection_rules_choice_on_the_stored_validation_windows(train):
    """``baselines/hpc_select.py``'s rule, rerun on its stored validation windows (no simulation): every recorded
    ``hpc_pick*`` model is a candidate of its backfilling rule, the chosen ones are those recorded as ``hpc_pick.zip``
    and ``hpc_pick_easy.zip``, and a candidate whose makespans grow past the limit on one trace is no longer
    eligible."""
    import copy
    import json

    select = _hpc_select()
    record = json.loads((ROOT / "baselines" / "results" / "hpc_selection.json").read_text())
    recorded = {p.stem for p in (ROOT / "baselines").glob("hpc_pick*.toml")
                if (ROOT / "baselines" / "results" / f"{p.stem}.zip").is_file()}
    assert {m for ms in record["candidates"].values() for m in ms} == recorded
    for rule, members in record["candidates"].items():
        assert all(train.load_config(ROOT / "baselines" / f"{m}.toml")["env"]["backfill"] == rule for m in members)
    again = copy.deepcopy(record)
    select.select(again)
    assert again["chosen"] == record["chosen"] == {"none": "hpc_pick", "easy": "hpc_pick_easy"}  # verdicts, not floats
    runs = again["models"]["hpc_pick_easy"][select.TRACES[1]]
    runs["makespan"] = [m * (select.MAKESPAN_LIMIT + 0.01) / 0.989 for m in runs["makespan"]]  # now 1.06× the best
    select.select(again)
    assert again["chosen"]["easy"] != "hpc_pick_easy" and "hpc_pick_easy (not eligible)" in again["table"]


def test_the_gated_hpc_pick_schedules_exact_requested_times_as_hpc_pick_v1_in_every_recorded_window():
    """``hpc_pick`` = the ``hpc_pick_v1`` network + (1 − accuracy) · a second score: with exact requested times
    (accuracy 1) its recorded values of the four exact cells (100 windows each, ``hpc_cells.json``) are
    ``hpc_pick_v1``'s, window for window, and with estimates they differ."""
    import json

    cells = json.loads((ROOT / "baselines" / "results" / "hpc_cells.json").read_text())["cells"]
    for cell in ("i", "ii", "iii", "iv"):
        assert cells[f"hpc_pick/exact/{cell}"]["learned"] == cells[f"hpc_pick_v1/exact/{cell}"]["learned"]
        assert len(cells[f"hpc_pick/exact/{cell}"]["learned"]) == 100
        assert cells[f"hpc_pick/tsafrir/{cell}"]["learned"] != cells[f"hpc_pick_v1/tsafrir/{cell}"]["learned"]


def test_a_gated_search_from_a_saved_network_keeps_its_exact_time_schedule(train, tmp_path):
    """``[search] start`` = a saved network (not a linear score) and a ``"gated"`` stage with ``gated_start`` = a
    linear model: the search runs (two generations), saves a gated model whose schedule with exact requested times
    is the start network's, window for window; a linear stage after a network start is refused."""
    pytest.importorskip("sb3_contrib")
    import gymnasium as gym

    from msjgym.systems.msj import env_search as ps
    from msjgym.systems.msj import job_observation as jo

    examples = ROOT / "examples"
    env = {"id": "msjgym/JobScheduling-v0", "window": 16, "action": "pick", "base_order": "sjf", "backfill": "none",
           "reward": "mean-bounded-slowdown", "trace_windows": True, "horizon_jobs": 100, "num_envs": 2}
    venv = gym.make_vec("msjgym/JobScheduling-v0", 1, vectorization_mode="vector_entry_point",
                        scenario=str(examples / "lublin_256.toml"), **{k: v for k, v in env.items()
                                                                        if k not in ("id", "num_envs")})
    rng = np.random.default_rng(1)
    small = ps.MLPShape(features=jo.FEATURES)
    ps.save_sb3_model(rng.normal(0, 0.3, size=small.size), venv, str(tmp_path / "net.zip"), shape=small)
    ps.save_sb3_model(ps.base_order_weights(jo.FEATURES), venv, str(tmp_path / "linear.zip"), shape=small)
    config = train.load_config(ROOT / "baselines" / "hpc_pick.toml")
    config["scenario"] = {"name": str(examples / "lublin_256.toml")}
    config["env"] = {**env, "estimate_accuracy": True}
    config["train"] = {"seed": 1, "time_budget_seconds": 120}
    config["evaluate"] = {"scenarios": [str(examples / "lublin_256_exact.toml")]}
    config["search"] = {"seed": 1, "start": str(tmp_path / "net.zip"), "gated_start": str(tmp_path / "linear.zip"),
                        "scenarios": [str(examples / "lublin_256.toml")], "window_jobs": 100, "windows": 2,
                        "validation_scenarios": [str(examples / "lublin_256.toml")], "validation_windows": 2,
                        "validation_window_jobs": 100,
                        "stages": [{"parametrisation": "gated", "pairs": 1, "sigma": 0.5, "generations": 2,
                                    "validate_every": 1, "makespan_weight": 2.0}]}
    training = train.search_train(config, tmp_path, "gated")
    assert training["search"]["stages"][0]["parametrisation"] == "gated" and training["timesteps"] > 0
    run = {"seed": 3, "windows": 3, "window_jobs": 300, "references": False, "progress": False}
    exact = msjgym.load_scenario(str(examples / "lublin_256_exact.toml"))
    values = {name: [r["bounded_slowdown"] for r in msjgym.evaluate(exact, f"sb3:{tmp_path / name}.zip",
                                                                    **run).replications]
              for name in ("net", "gated")}
    assert values["gated"] == values["net"]
    config["search"]["stages"] = [{"parametrisation": "linear", "generations": 1}]
    with pytest.raises(SystemExit, match="a linear stage after a network"):
        train.search_train(config, tmp_path, "refused")
