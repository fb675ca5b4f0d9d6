"""Train sb3-contrib's MaskablePPO on an msjgym scenario, then evaluate it beside the built-in policies.

    python baselines/train.py baselines/maskable_ppo_one_and_n.toml [--timesteps N] [--quick] [--skip-train]
                                                                       [--out DIR]

Reads a TOML config (see ``maskable_ppo_one_and_n.toml``), trains on the native vector environment through
``msjgym.envs.to_sb3`` for a fixed number of steps (``--timesteps N`` overrides the config's; with a wall-clock cap),
at one torch thread (the config's ``torch_threads``, default 1; ``OMP_NUM_THREADS`` defaults to 1), saves the model
(``OUT/NAME.zip``), then evaluates the learned policy (greedy: its most likely allowed action) exactly
as ``msjgym evaluate --policy sb3:OUT/NAME.zip`` does, and the built-in policies, with the same replications, seeds,
jobs and warm-up, and writes the comparison table to ``OUT/NAME.md`` (and prints it).

OUT is ``baselines/runs/`` by default (not tracked: ``.gitignore``): the recorded results in ``baselines/results/``
change only when asked (``--out baselines/results``). ``--skip-train`` evaluates ``OUT/NAME.zip`` if it exists, else
the recorded ``baselines/results/NAME.zip``, and writes its report to OUT. ``--quick`` sizes a run for a first try (a
few minutes on one core): :data:`QUICK_TIMESTEPS` steps (unless ``--timesteps``), a :data:`QUICK_BUDGET` s cap, and
an evaluation of :data:`QUICK_REPS` replications of a tenth of the jobs; its report says QUICK (its numbers are not
the recorded ones).

A scenario that replays a trace (``maskable_ppo_lublin_bsld.toml``) trains on windows of the trace (``[env]
trace_windows = true``, ``horizon_jobs`` jobs per episode, ``reward = "bounded-slowdown"``, ``estimates = true``) and
is evaluated over ``[evaluate] windows`` windows of ``window_jobs`` jobs (the same windows, from ``seed``, for every
policy; Student-t CIs across windows), on ``metric`` (default ``bounded_slowdown``), against ``[evaluate] baselines``
(built-in policies with their parameters, e.g. ``{policy = "priority", order = "sjf", backfill = "easy"}``), with
the learned − built-in differences paired by window.

A config with ``[env] id = "msjgym/JobScheduling-v0"`` trains on that environment (its arguments are the ``[env]``
keys but ``id`` and ``num_envs``, with the scenario; e.g. ``window = 128``, ``action = "pick"``, ``backfill =
"easy"``, ``reward = "mean-bounded-slowdown"``, ``trace_windows = true``, ``horizon_jobs = 256``), with ``[ppo]
policy = "job-scoring"`` (:class:`msjgym.envs.scoring.JobScoringPolicy`; its ``score_arch``, ``value_arch``,
``attention``, ``heads`` and ``present_column`` are ``[ppo]`` keys too), and is evaluated on the trace of every
scenario of ``[evaluate] scenarios`` (held-out traces; default the training one), one table each.

A config with a ``[dispatch]`` section (``ppo_dispatch.toml``) trains on ``msjgym/Dispatch-v0`` instead (its
arguments are that section) and compares the learned dispatcher with the built-in dispatchers of ``[evaluate]
baselines`` (each with its parameters bound: ``policy.bind(...)``), all through ``msjgym.evaluate`` on the
``lb-dispatch`` scenario of the environment's arguments, with the paper's protocol, the same replications and seeds.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
RECORDED = HERE / "results"
"""The recorded results (tracked): written only with ``--out baselines/results``."""
DEFAULT_OUT = HERE / "runs"
"""Where a run writes by default (ignored by git)."""
QUICK_TIMESTEPS = 100_000
QUICK_BUDGET = 180.0
QUICK_REPS = 3


def apply_overrides(config: dict[str, Any], timesteps: int | None = None, quick: bool = False) -> dict[str, Any]:
    """``config`` with the command line's sizes: ``timesteps`` (training steps), ``quick`` (see the module
    docstring). Returns the same dict, changed in place."""
    tr, ev = config["train"], config["evaluate"]
    if quick:
        tr["total_timesteps"] = QUICK_TIMESTEPS
        tr["time_budget_seconds"] = min(float(tr.get("time_budget_seconds", QUICK_BUDGET)), QUICK_BUDGET)
        ev["reps"] = min(int(ev.get("reps", 10)), QUICK_REPS)
        if "windows" in ev:
            ev["windows"] = min(int(ev["windows"]), QUICK_REPS)
        for key in ("jobs", "warmup", "arrivals", "check_states", "level_states"):
            if key in ev:
                ev[key] = max(int(ev[key]) // 10, 1)
        config["quick"] = True
    if timesteps is not None:
        if timesteps < 1:
            raise SystemExit(f"--timesteps {timesteps}: must be an integer >= 1")
        tr["total_timesteps"] = int(timesteps)
    return config


def _num_classes(config: dict[str, Any]) -> int:
    from msjgym.api import load_scenario
    return load_scenario(scenario_name(config), scenario_params(config)).model.num_classes


def load_config(path: Path) -> dict[str, Any]:
    with open(path, "rb") as f:
        config = tomllib.load(f)
    for section in ("scenario", "env", "train", "ppo", "evaluate"):  # "dispatch": msjgym/Dispatch-v0's arguments
        config.setdefault(section, {})
    return config


def scenario_name(config: dict[str, Any]) -> str:
    """``[scenario] name``: a built-in, or a TOML scenario file; a relative file path that does not exist from the
    working directory is taken relative to the repository root (``baselines/scenarios/...``)."""
    from msjgym.api import list_scenarios

    name = str(config["scenario"]["name"])
    if name in {entry[0] for entry in list_scenarios()} or Path(name).is_file():
        return name
    in_repo = HERE.parent / name
    return str(in_repo) if in_repo.is_file() else name


def scenario_params(config: dict[str, Any]) -> dict[str, Any]:
    """The scenario's parameter overrides; ``fcfs_threshold_factor`` sets arrival_rate to that multiple of FCFS's
    stability threshold μ (one-and-n: ``msjgym.theory.saturated.one_and_n_throughput``)."""
    sc = config["scenario"]
    params = dict(sc.get("params", {}))
    factor = sc.get("fcfs_threshold_factor")
    if factor is not None:
        from msjgym.api import load_scenario
        from msjgym.theory.saturated import one_and_n_throughput
        base = load_scenario(scenario_name(config), params).params
        mu = one_and_n_throughput(int(base["servers"]), float(base["p_n"]), float(base["mu_1"]), float(base["mu_n"]))
        params["arrival_rate"] = factor * mu
    return params


# ---------------------------------------------------------------------------------------------------- training
def queue_count_columns(mode: str, classes: int) -> np.ndarray:
    """Observation columns summing to each class's jobs in system: int[K, m] (``msjgym.systems.msj.observation``)."""
    from msjgym.systems.msj import observation as ob
    from msjgym.systems.msj.state import MODE_SET, MODE_START

    if mode == "preemptive":
        return np.array([[ob.class_at(MODE_SET, c) + ob.PRESENT] for c in range(classes)])
    return np.array([[ob.class_at(MODE_START, c) + ob.WAITING, ob.class_at(MODE_START, c) + ob.IN_SERVICE]
                     for c in range(classes)])


def queue_shaping(venv: Any, columns: np.ndarray, beta: float, gamma: float) -> Any:
    """Potential-based reward shaping (Ng, Harada & Russell, "Policy invariance under reward transformations",
    1999) with Φ(s) = −β Σ_c N_c² (N_c: class-c jobs in system): each step's reward gains γΦ(s') − Φ(s), which leaves
    the discounted problem's optimal policies unchanged and credits at once what a step did to the quadratic
    Lyapunov function whose drift MaxWeight minimises (a completion from a long queue earns about 2βN_c). At an
    episode's end s' is the terminal observation (SB3 bootstraps from it)."""
    from stable_baselines3.common.vec_env import VecEnvWrapper

    class QueueShaping(VecEnvWrapper):
        def __init__(self) -> None:
            super().__init__(venv)
            self.phi = np.zeros(venv.num_envs)

        def potential(self, obs: np.ndarray) -> np.ndarray:
            counts = obs[:, columns].sum(axis=-1)
            return -beta * (counts.astype(np.float64) ** 2).sum(axis=1)

        def reset(self) -> np.ndarray:
            obs = self.venv.reset()
            self.phi = self.potential(obs)
            return obs

        def step_wait(self):
            obs, rewards, dones, infos = self.venv.step_wait()
            following = self.potential(obs)
            ended = following.copy()
            for i in np.flatnonzero(dones):
                ended[i] = self.potential(np.asarray(infos[i]["terminal_observation"])[None])[0]
            shaped = rewards + gamma * ended - self.phi
            self.phi = following
            return obs, shaped.astype(np.float32), dones, infos

    return QueueShaping()


MSJ_ID = "msjgym/MSJ-v0"
POLICIES = {"mlp": "MlpPolicy", "job-scoring": "msjgym.envs.scoring.JobScoringPolicy"}
"""``[ppo] policy``: SB3's MLP (default), or msjgym's job-scoring policy (:mod:`msjgym.envs.scoring`)."""
SCORING_KEYS = ("score_arch", "value_arch", "attention", "heads", "present_column")


def env_id(config: dict[str, Any]) -> str:
    """``[env] id``: the environment trained on (default ``msjgym/MSJ-v0``; ``[dispatch]``: ``msjgym/Dispatch-v0``)."""
    return str(config["env"].get("id", MSJ_ID))


def env_arguments(config: dict[str, Any]) -> dict[str, Any]:
    """The arguments of ``[env] id``'s vector environment: the ``[env]`` keys but ``id`` and ``num_envs``, the
    scenario and its parameters."""
    args = {k: v for k, v in config["env"].items() if k not in ("id", "num_envs")}
    return {"scenario": scenario_name(config), **args, **scenario_params(config)}


def job_vector_env(config: dict[str, Any]) -> Any:
    """The native vector environment of ``[env] id`` (``gym.make_vec(..., vectorization_mode="vector_entry_point")``)
    with ``num_envs`` copies (default 64)."""
    import gymnasium as gym

    import msjgym.envs  # noqa: F401  (registers the ids)

    return gym.make_vec(env_id(config), int(config["env"].get("num_envs", 64)),
                        vectorization_mode="vector_entry_point", **env_arguments(config))


def policy_of(ppo: dict[str, Any], venv: Any) -> tuple[Any, dict[str, Any]]:
    """(policy class or name, policy_kwargs) of ``[ppo] policy`` (:data:`POLICIES`), popping its keys from ``ppo``.
    The job-scoring policy's ``present_column`` defaults to the environment's "slot present" column (its view's
    ``PRESENT``, where it has one)."""
    name = ppo.pop("policy", "mlp")
    if name not in POLICIES:
        raise SystemExit(f"[ppo] policy = {name!r}: one of {', '.join(repr(p) for p in POLICIES)}")
    kwargs: dict[str, Any] = {key: ppo.pop(key) for key in SCORING_KEYS if key in ppo}
    if name == "mlp":
        if kwargs:
            raise SystemExit(f"[ppo] {next(iter(kwargs))}: only with policy = \"job-scoring\"")
        return "MlpPolicy", kwargs
    from msjgym.envs.scoring import JobScoringPolicy

    if "present_column" not in kwargs:
        column = present_column(venv)
        if column is not None:
            kwargs["present_column"] = column
    return JobScoringPolicy, kwargs


def present_column(venv: Any) -> int | None:
    """The "slot present" column of a job-window observation (the spec's view class ``PRESENT``), or None."""
    spec = getattr(venv, "spec_", None)
    for holder in (spec, getattr(spec, "view_class", None), getattr(spec, "layout", None)):
        column = getattr(holder, "PRESENT", None)
        if isinstance(column, (int, np.integer)):
            return int(column)
    return None


def _search_objective(config: dict[str, Any], windows: str = "training") -> str:
    """The words for the fitness of ``[[search.stages]]`` (``objective``, msjgym.systems.msj.env_search.OBJECTIVES;
    the last stage's, which made the kept weights if it validated best)."""
    objective = (config.get("search", {}).get("stages") or [{}])[-1].get("objective", "mean-log")
    if objective == "log-mean":
        return f"log(the mean over {windows} windows of the mean bounded slowdown)"
    return f"the mean over {windows} windows of log(mean bounded slowdown)"


def _linear_start(se: dict[str, Any], key: str, features: int) -> np.ndarray:
    """The linear weights of the recorded model ``[search] KEY`` (a ``.zip``), the columns it lacks at weight 0;
    ValueError if its network is not a linear score, SystemExit if it has more columns than ``features``."""
    from msjgym.systems.msj import env_search as ps

    weights = ps.linear_weights_of_model(se[key])
    if weights.size > features:
        raise SystemExit(f"[search] {key} = {se[key]!r}: {weights.size} linear weights, more than the {features} "
                         "features")
    return np.concatenate([weights, np.zeros(features - weights.size)])


def search_train(config: dict[str, Any], out: Path, name: str) -> dict[str, Any]:
    """``[search]``: direct policy search over the job-scoring network's weights
    (:mod:`msjgym.systems.msj.env_search`) instead of PPO. Each stage of ``[[search.stages]]`` (``parametrisation``
    ``"linear"`` or ``"mlp"``, ``pairs``, ``sigma``, ``learning_rate``, ``seconds``, ``generations``,
    ``validate_every``) starts from the previous stage's best validated weights (the first from the base order's
    pick, row 0, or ``start``, a recorded linear model or network); ``"gated"`` (last stage only, with
    ``estimate_accuracy``) keeps that score and searches a second one weighted by one minus the accuracy column
    (from 0, or from ``gated_start``'s linear weights, minus the kept ones when those are linear:
    :mod:`msjgym.systems.msj.env_search`);
    fitness: the mean log bounded slowdown (``objective``; + ``makespan_weight`` · the mean log makespan) of
    ``windows`` windows of ``window_jobs`` jobs of each training scenario (``scenarios``, default ``[scenario]
    name``; fresh windows each generation, the same for every candidate); validation (the selection between
    generations and stages): ``validation_windows`` fixed windows of ``validation_window_jobs`` jobs of each
    ``validation_scenarios`` trace (never an evaluation trace). Saves the best validated weights as ``OUT/NAME.zip``
    (a MaskablePPO model with the job-scoring policy and the environment's
    settings)."""
    import torch

    import msjgym
    from msjgym.systems.msj import env_search as ps

    torch.set_num_threads(int(config["train"].get("torch_threads", 1)))
    se, env = config["search"], config["env"]
    seed = int(se.get("seed", config["train"].get("seed", 0)))
    budget = float(config["train"].get("time_budget_seconds", 1200))
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    scenarios = [scenario_name({"scenario": {"name": n}}) for n in se.get("scenarios", [config["scenario"]["name"]])]
    valid = [scenario_name({"scenario": {"name": n}}) for n in se.get("validation_scenarios", [])]
    if set(valid) & set(held_out_scenarios(config)) or set(scenarios) & set(held_out_scenarios(config)):
        raise SystemExit("[search] scenarios / validation_scenarios: must not be an [evaluate] scenario (held out)")
    loaded = {n: msjgym.load_scenario(n, {}) for n in {*scenarios, *valid}}
    validation_runners = [ps.WindowRunner(loaded[n], env, int(se.get("validation_window_jobs", 1024)),
                                          int(se.get("validation_windows", 16)), 1) for n in valid]
    validation_seeds = [np.random.SeedSequence([int(se.get("validation_seed", 99)), i]).spawn(r.windows)
                        for i, r in enumerate(validation_runners)]
    shape = ps.MLPShape(features=validation_runners[0].spec.layout.features if validation_runners else
                        ps.WindowRunner(loaded[scenarios[0]], env, 16, 1, 1).spec.layout.features)
    theta, best_value, stages_done = ps.base_order_weights(shape.features), math.inf, []
    parametrisation, fixed = "linear", None  # fixed: the "gated" stage's first score (θ); the stage searches v
    if se.get("start"):  # a recorded model's weights (its .zip), the columns it lacks at weight 0
        try:
            theta = _linear_start(se, "start", shape.features)
            print(f"search start: the linear weights of {se['start']}", flush=True)
        except ValueError:  # a whole network (an "mlp" stage's result)
            try:
                theta, parametrisation = ps.mlp_weights_of_model(se["start"], shape), "mlp"
            except ValueError as error:
                raise SystemExit(f"[search] start = {se['start']!r}: {error}") from None
            print(f"search start: the network of {se['start']}", flush=True)
    for index, stage in enumerate(se.get("stages", [{}])):
        settings = ps.SearchSettings(**{k: v for k, v in stage.items() if k != "log"})
        if settings.parametrisation == "mlp" and parametrisation == "linear":
            theta = ps.linear_as_mlp(theta, shape)
        if settings.parametrisation == "linear" and parametrisation == "mlp":
            raise SystemExit(f"[[search.stages]] {index + 1}: a linear stage after a network (the start or an mlp "
                             "stage); use \"mlp\" or \"gated\"")
        if settings.parametrisation == "gated":  # the last stage: theta stays, gated (v) is searched
            if index != len(se["stages"]) - 1 or not env.get("estimate_accuracy"):
                raise SystemExit("[[search.stages]] parametrisation = \"gated\": only as the last stage, with "
                                 "[env] estimate_accuracy = true (its gate is the accuracy column)")
            _, base_score = ps.score_function(parametrisation, shape)
            fixed = theta
            score = ps.gated_score(lambda x, t=fixed, f=base_score: f(t, x))
            theta = np.zeros(shape.features)  # v = 0: the model starts as the fixed score alone
            if se.get("gated_start"):  # v = that model's linear weights − the fixed score's (inaccurate times: a ≈ 0)
                try:
                    theta = _linear_start(se, "gated_start", shape.features)
                except ValueError as error:
                    raise SystemExit(f"[search] gated_start = {se['gated_start']!r}: {error}") from None
                if parametrisation == "linear":
                    theta = theta - fixed
                    print(f"gated start: {se['gated_start']}'s linear weights minus the fixed score's", flush=True)
                else:  # a network kept: nothing to subtract, its score and v's are added
                    print(f"gated start: {se['gated_start']}'s linear weights (added to the kept network)", flush=True)
            parametrisation = "gated"
        else:
            parametrisation = settings.parametrisation
            _, score = ps.score_function(parametrisation, shape)
        left = budget - (time.perf_counter() - start)
        settings.seconds = min(settings.seconds, max(left, 0.0))

        def validate(t: np.ndarray, score: Any = score, settings: ps.SearchSettings = settings) -> float:
            t32 = np.asarray(t, dtype=np.float32).astype(np.float64)[None]
            values = [ps.penalised_fitness(r.run(score, t32, s), r.makespans, settings.objective,
                                           settings.makespan_weight)[0]
                      for r, s in zip(validation_runners, validation_seeds)]
            return float(np.mean(values))

        runners = [ps.WindowRunner(loaded[n], env, int(se.get("window_jobs", 512)), int(se.get("windows", 8)),
                                   2 * settings.pairs + 1) for n in scenarios]
        print(f"search stage {index + 1}: {parametrisation} ({theta.size} weights), {settings.pairs} antithetic "
              f"pairs, sigma {settings.sigma:g}, cap {settings.seconds:.0f} s; {len(runners)} training traces × "
              f"{runners[0].windows} windows of {runners[0].spec.base.horizon_jobs} jobs per generation",
              flush=True)
        found, value = ps.evolve(theta, settings, runners, validate if validation_runners else None,
                                 seed + 1000 * index, score)
        decisions = sum(r.decisions for r in runners)
        stages_done.append({"parametrisation": parametrisation, "generations": len(settings.log),
                            "decisions": decisions, "validation": value, "log": settings.log})
        if value <= best_value or not validation_runners:
            best_value = value
            theta = found
        elif fixed is not None:  # the gated stage validated worse than the stages before it: the fixed score alone
            theta, fixed = fixed, None
        print(f"stage {index + 1}: {len(settings.log)} generations, {decisions:,} decisions; validation "
              f"{value:.4f} (best so far {best_value:.4f})", flush=True)
    seconds = time.perf_counter() - start
    out.mkdir(parents=True, exist_ok=True)
    venv = job_vector_env({**config, "env": {**env, "num_envs": 1}})
    if fixed is None:
        ps.save_sb3_model(theta, venv, str(out / f"{name}.zip"), seed=seed, shape=shape)
    else:
        ps.save_sb3_model(fixed, venv, str(out / f"{name}.zip"), seed=seed, shape=shape, gated=theta)
    decisions = sum(s["decisions"] for s in stages_done)
    print(f"searched {decisions:,} decisions in {seconds:.0f} s; saved {out / (name + '.zip')}", flush=True)
    (out / f"{name}.train_log.json").write_text(json.dumps(stages_done))
    first = theta if fixed is None else fixed
    weights = first.tolist() if first.size <= 64 else None
    training = {"seconds": seconds, "timesteps": decisions, "load_before": load_before,
                "load_after": os.getloadavg()[0], "imitated": None,
                "search": {"stages": [{k: v for k, v in s.items() if k != "log"} for s in stages_done],
                           "validation": best_value, "linear_weights": weights,
                           **({} if fixed is None else {"gated_weights": theta.tolist()})}}
    (out / f"{name}.training.json").write_text(json.dumps(training))
    return training


def train(config: dict[str, Any], out: Path, name: str) -> dict[str, Any]:
    method = config["train"].get("method", "ppo")
    if method not in ("ppo", "search"):
        raise SystemExit(f"[train] method = {method!r}: \"ppo\" or \"search\" (with a [search] section)")
    if method == "search":
        if "search" not in config:
            raise SystemExit("[train] method = \"search\": needs a [search] section")
        return search_train(config, out, name)
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    from msjgym.envs import MSJVectorEnv, to_sb3
    from msjgym.envs.sb3 import AverageCostReward, Log1pExtractor

    tr, ppo, ev = config["train"], dict(config["ppo"]), config["env"]
    torch.set_num_threads(int(tr.get("torch_threads", 1)))
    seed = int(tr.get("seed", 0))
    if "dispatch" in config:
        from msjgym.envs import DispatchVectorEnv
        venv = DispatchVectorEnv(int(ev.get("num_envs", 64)), **config["dispatch"])
    elif env_id(config) != MSJ_ID:
        venv = job_vector_env(config)
    else:
        extra = {key: ev[key] for key in ("estimates", "reward", "bsld_threshold", "trace_windows") if key in ev}
        venv = MSJVectorEnv(int(ev.get("num_envs", 64)), scenario=scenario_name(config),
                            mode=ev.get("mode", "start"), window=int(ev.get("window", 8)),
                            horizon_jobs=int(ev.get("horizon_jobs", 1000)), **extra, **scenario_params(config))
    env = VecMonitor(to_sb3(venv))
    if "average_cost" in tr:
        env = AverageCostReward(env, tr["average_cost"], float(tr.get("average_cost_rate", 1e-3)))
    if "queue_shaping" in tr and "dispatch" not in config:  # after the average cost, which must see the true cost
        columns = queue_count_columns(ev.get("mode", "start"), _num_classes(config))
        env = queue_shaping(env, columns, float(tr["queue_shaping"]), float(ppo.get("gamma", 0.99)))
    if tr.get("normalize_reward", False):
        env = VecNormalize(env, norm_obs=False, norm_reward=True, gamma=ppo.get("gamma", 0.99))
    policy, policy_kwargs = policy_of(ppo, venv)
    if policy != "MlpPolicy":  # K x F job windows: sb3-contrib's buffer without its per-rollout copies
        from msjgym.envs.rollout_buffer import LeanMaskableRolloutBuffer
        ppo["rollout_buffer_class"] = LeanMaskableRolloutBuffer
    if policy == "MlpPolicy":
        policy_kwargs["net_arch"] = ppo.pop("net_arch", [64, 64])
        if ppo.pop("log1p_features", True):
            policy_kwargs["features_extractor_class"] = Log1pExtractor
    model = MaskablePPO(policy, env, seed=seed, device="cpu", policy_kwargs=policy_kwargs, verbose=0, **ppo)

    budget = float(tr.get("time_budget_seconds", 780))
    total = int(tr.get("total_timesteps", 10_000_000))
    imitated = None
    if "imitate_decisions" in tr:
        imitated = imitate_base_order(model, to_sb3_env(env), int(tr["imitate_decisions"]),
                                      int(tr.get("imitate_epochs", 5)), int(tr.get("imitate_batch", 256)),
                                      float(tr.get("imitate_learning_rate", 3e-3)), seed,
                                      fits_column(venv) if tr.get("imitate_target") == "first-fits" else None)
    log: list[dict[str, float]] = []

    class Progress(BaseCallback):
        """Prints a line per rollout; stops learning when the wall-clock budget is spent."""

        def __init__(self) -> None:
            super().__init__()
            self.start = time.perf_counter()

        def _on_step(self) -> bool:
            return time.perf_counter() - self.start < budget

        def _on_rollout_end(self) -> None:
            buf = self.model.ep_info_buffer
            elapsed = time.perf_counter() - self.start
            row = {"seconds": round(elapsed, 1), "timesteps": self.num_timesteps,
                   "ep_return_mean": float(np.mean([e["r"] for e in buf])) if buf else math.nan,
                   "ep_time_mean": float(np.mean([e["t"] for e in buf])) if buf else math.nan}
            log.append(row)
            if len(log) % int(tr.get("print_every", 10)) == 1:
                print(f"  {elapsed:6.0f} s  {self.num_timesteps:>10,} steps  "
                      f"{self.num_timesteps / max(elapsed, 1e-9):,.0f} steps/s  episode return {row['ep_return_mean']:.4g}",
                      flush=True)

    print(f"training: {venv.num_envs} copies, budget {budget:.0f} s or {total:,} steps, torch threads "
          f"{torch.get_num_threads()}", flush=True)
    start = time.perf_counter()
    load_before = os.getloadavg()[0]  # the machine's 1-minute load average (other jobs share the cores)
    model.learn(total_timesteps=total, callback=Progress())
    seconds = time.perf_counter() - start
    out.mkdir(parents=True, exist_ok=True)
    if hasattr(venv.spec_, "settings"):  # the observation's arguments go with the model (sb3:MODEL.zip reads them)
        from msjgym.envs.sb3 import record_env
        record_env(model, venv)
    # the last observations are training's state, not the model's (half a megabyte with K = 128 rows)
    model.save(out / f"{name}.zip", exclude=["_last_obs", "_last_original_obs"])
    if model.num_timesteps < total:
        print(f"WARNING: the time budget ({budget:.0f} s) stopped training at {model.num_timesteps:,} of {total:,} "
              "steps", flush=True)
    print(f"trained {model.num_timesteps:,} steps in {seconds:.0f} s; saved {out / (name + '.zip')}", flush=True)
    (out / f"{name}.train_log.json").write_text(json.dumps(log))
    training = {"seconds": seconds, "timesteps": model.num_timesteps, "load_before": load_before,
                "load_after": os.getloadavg()[0], "imitated": imitated}
    (out / f"{name}.training.json").write_text(json.dumps(training))  # read back by --skip-train's report
    return training


def to_sb3_env(env: Any) -> Any:
    """The innermost SB3 ``VecEnv`` under the wrappers (``VecMonitor``, ...): the environment's own steps."""
    while type(env).__name__ != "SB3VecEnv":
        env = env.venv
    return env


def fits_column(venv: Any) -> int:
    """The "fits now" column of a job-window observation (its view's ``col("fits")``)."""
    spec = venv.spec_
    return int(spec.view(np.zeros(spec.observation_shape, np.float32)).col("fits"))


def imitate_base_order(model: Any, env: Any, decisions: int, epochs: int, batch: int, learning_rate: float,
                       seed: int, fits: int | None = None) -> dict[str, Any]:
    """A warm start: before PPO, fit the policy to pick row 0 of the job window, the environment's base order's
    choice (``msjgym/JobScheduling-v0`` shows the waiting jobs best first under ``base_order``), by maximum likelihood
    on the states among ``decisions`` visited by that heuristic where two or more actions are allowed (behaviour
    cloning): ``epochs`` passes in minibatches of ``batch``, Adam at ``learning_rate`` (its own optimizer). PPO then starts from (about) the heuristic instead of a
    uniform choice. With ``fits`` (the "fits now" column; ``[train] imitate_target = "first-fits"``) the heuristic
    is the first row, in the base order, whose job fits now (row 0 if none): first-fit over the shown jobs. Returns
    what it did (decisions, the share of states where the fitted policy's greedy choice is the heuristic's,
    seconds)."""
    import torch

    start = time.perf_counter()
    env.seed(seed + 7919)
    obs = env.reset()
    n = env.num_envs
    states, masks, targets = [], [], []
    for _ in range(max(decisions // n, 1)):
        mask = np.asarray(env.action_masks())
        keep = mask.sum(axis=1) >= 2
        action = np.zeros(n, dtype=np.int64)
        if fits is not None:
            fit = (obs[..., fits] > 0.5) & mask
            action = np.where(fit.any(axis=1), fit.argmax(axis=1), 0)
        states.append(obs[keep].copy())
        masks.append(mask[keep].copy())
        targets.append(action[keep])
        env.step_async(action)
        obs, _, _, _ = env.step_wait()
    x, m, y = np.concatenate(states), np.concatenate(masks), np.concatenate(targets)
    policy = model.policy
    rng = np.random.default_rng(seed)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    policy.set_training_mode(True)
    for _ in range(epochs):
        order = rng.permutation(len(x))
        for lo in range(0, len(x), batch):
            idx = order[lo:lo + batch]
            dist = policy.get_distribution(torch.as_tensor(x[idx]), action_masks=m[idx])
            loss = -dist.log_prob(torch.as_tensor(y[idx])).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    policy.set_training_mode(False)
    with torch.no_grad():
        probe = rng.choice(len(x), size=min(len(x), 20_000), replace=False)
        dist = policy.get_distribution(torch.as_tensor(x[probe]), action_masks=m[probe])
        agree = float((dist.distribution.probs.argmax(dim=1).numpy() == y[probe]).mean())
    done = {"decisions": len(x), "agreement": agree, "seconds": time.perf_counter() - start}
    print(f"imitated {'first-fits' if fits is not None else 'the base order'} on {len(x):,} states ({epochs} epochs) "
          f"in {done['seconds']:.0f} s: greedy choice = the heuristic's on {agree:.2%}", flush=True)
    return done


# ---------------------------------------------------------------------------------------------------- evaluation
def evaluate_all(config: dict[str, Any], model_path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The learned policy through ``--policy sb3:MODEL.zip``'s code path (``load_user_policy``, greedy actions, then
    ``msjgym.evaluate``), then the built-in policies, all with the same replications, seeds, jobs and warm-up."""
    import msjgym
    from msjgym.core.user_policy import load_user_policy
    from msjgym.systems.msj.agent import EnvSpec

    ev, env = config["evaluate"], config["env"]
    params = scenario_params(config)
    scenario = msjgym.load_scenario(scenario_name(config), params)
    mode, window = env.get("mode", "start"), int(env.get("window", 8))
    reps, jobs, seed = int(ev.get("reps", 10)), int(ev.get("jobs", 100_000)), int(ev.get("seed", 1))
    warmup = int(ev.get("warmup", jobs // 10))
    spec = EnvSpec.make(scenario, mode, window, None, None, jobs, warmup)
    _, decide = load_user_policy(f"sb3:{model_path}", spec)
    agreement, checked = agreement_with_predict(model_path, decide, scenario, mode, window,
                                                int(ev.get("check_states", 2000)))
    print(f"greedy numpy actor = model.predict(deterministic=True) on {agreement:.2%} of {checked} visited states",
          flush=True)
    start = time.perf_counter()
    learned = msjgym.evaluate(scenario, decide, mode=mode, window=window, reps=reps, jobs=jobs, warmup=warmup,
                              seed=seed, progress=True)
    print(f"evaluated the learned policy in {time.perf_counter() - start:.0f} s", flush=True)
    rows = [_row("maskable-ppo (learned)", "yes" if mode == "preemptive" else "no", learned)]
    from msjgym.errors import PolicyError
    from msjgym.policies.msj import POLICIES
    for policy in ev.get("policies", ["fcfs", "first-fit", "msf-nonpreemptive", "server-filling"]):
        preemptive = "yes" if POLICIES[policy].preemptive else "no"
        try:
            result = msjgym.evaluate(scenario, policy, reps=reps, jobs=jobs, warmup=warmup, seed=seed,
                                     references=False)
        except PolicyError as exc:  # e.g. ServerFilling outside its divisibility settings: a row saying why
            print(f"{policy}: refused: {exc}", flush=True)
            rows.append({"policy": policy, "preemptive": preemptive, "stable": None, "refused": str(exc)})
            continue
        rows.append(_row(policy, preemptive, result))
    overrides = " ".join(f"--param {k}={v!r}" for k, v in params.items())  # repr: the exact float
    shown = model_path.resolve()
    shown = shown.relative_to(HERE.parent) if HERE.parent in shown.parents else shown
    shown_scenario = _shown(Path(scenario.name)) if Path(scenario.name).is_file() else scenario.name
    command = (f"msjgym evaluate {shown_scenario} {overrides} --policy sb3:{shown} --mode {mode} "
               f"--window {window} --reps {reps} --jobs {jobs} --warmup {warmup} --seed {seed}")
    is_file = Path(scenario.name).is_file()
    meta = {"scenario": f"`{shown_scenario}` ({scenario.description})" if is_file else scenario.name,
            "params": params if is_file else dict(scenario.params), "load": scenario.model.load, "reps": reps,
            "jobs": jobs, "warmup": warmup, "seed": seed, "actor_agreement": agreement,
            "actor_checked_states": checked, "command": command,
            "reference": ev.get("reference", "server-filling")}
    return rows, meta


def agreement_with_predict(model_path: Path, decide: Any, scenario: Any, mode: str, window: int,
                           count: int) -> tuple[float, int]:
    """Fraction of ``count`` states visited by ``decide`` where it equals ``model.predict(deterministic=True)``."""
    from sb3_contrib import MaskablePPO

    from msjgym.envs import MSJEnv

    env = MSJEnv(scenario, mode=mode, window=window, horizon_jobs=None, jobs=count, warmup=0, batches=1)
    return agreement_on_env(MaskablePPO.load(str(model_path), device="cpu"), decide, env, count)


def agreement_on_env(model: Any, decide: Any, env: Any, count: int) -> tuple[float, int]:
    """Fraction of ``count`` states of ``env`` visited by ``decide`` where it equals ``model.predict``."""
    obs, _ = env.reset(seed=12345)
    same = 0
    for _ in range(count):
        mask = env.action_masks()
        action = decide(obs, mask)
        same += action == int(model.predict(obs, action_masks=mask, deterministic=True)[0])
        obs, _, _, truncated, _ = env.step(action)
        if truncated:
            obs, _ = env.reset()
    return same / count, count


def _row(name: str, preemptive: str, result: Any) -> dict[str, Any]:
    rt = result.metrics.get("response_time")
    return {"policy": name, "preemptive": preemptive, "stable": result.stable,
            "response_time": None if rt is None else rt.mean, "ci95": None if rt is None else rt.ci95,
            "number_in_system": None if not result.stable else result.metrics["number_in_system"].mean,
            "growth_rate": None if result.growth_rate is None else result.growth_rate.mean}


_SHORT = {"server-filling": "ServerFilling", "maxweight": "MaxWeight", "msf": "MSF",
          "preemptive-first-fit": "preemptive first fit"}


def format_table(rows: list[dict[str, Any]], reference: str = "server-filling") -> str:
    """The comparison table; the last column is each mean response time over the ``reference`` policy's."""
    sf = next((r for r in rows if r["policy"] == reference and r["stable"]), None)
    ref_name = _SHORT.get(reference, reference)
    fcfs = next((r for r in rows if r["policy"] == "fcfs"), None)
    lines = [f"| policy | preemptive | stable | mean response time ± 95 % CI | × {ref_name} |",
             "|---|---|---|---|---|"]
    for r in rows:
        if r.get("refused"):
            lines.append(f"| {r['policy']} | {r['preemptive']} | — | refused: {r['refused']} | — |")
            continue
        if r["stable"]:
            cell = f"{r['response_time']:.3f} ± {r['ci95']:.3f}"
            ratio = f"{r['response_time'] / sf['response_time']:.3f}" if sf else "n/a"
        else:
            cell = f"unstable (N grows at {r['growth_rate']:.3g} jobs per unit time)"
            ratio = "—"
        lines.append(f"| {r['policy']} | {r['preemptive']} | {'yes' if r['stable'] else 'no'} | {cell} | {ratio} |")
    learned = rows[0]
    verdict = []
    if fcfs is not None and learned["stable"] and fcfs.get("stable") is not None:
        if not fcfs["stable"]:
            verdict.append("FCFS is unstable here; the learned policy is stable.")
        else:
            lo_f = fcfs["response_time"] - fcfs["ci95"]
            hi_l = learned["response_time"] + learned["ci95"]
            verdict.append(f"Learned vs FCFS: {'beats FCFS, non-overlapping 95 % CIs' if hi_l < lo_f else 'does NOT beat FCFS with non-overlapping 95 % CIs'} "
                           f"({learned['response_time']:.3f} vs {fcfs['response_time']:.3f}).")
    elif not learned["stable"]:
        verdict.append("The learned policy is UNSTABLE on this scenario.")
    if sf is not None and learned["stable"]:
        lo_l, hi_l = learned["response_time"] - learned["ci95"], learned["response_time"] + learned["ci95"]
        lo_r, hi_r = sf["response_time"] - sf["ci95"], sf["response_time"] + sf["ci95"]
        word = "better, disjoint 95 % CIs" if hi_l < lo_r else "worse, disjoint 95 % CIs" if lo_l > hi_r else \
            "the 95 % CIs overlap"
        verdict.append(f"Learned vs {ref_name} ({'preemptive' if sf['preemptive'] == 'yes' else 'non-preemptive'}): "
                       f"{learned['response_time'] / sf['response_time']:.3f}× its mean response time "
                       f"({learned['response_time'] - sf['response_time']:+.3f}; {word}).")
    return "\n".join(lines) + "\n\n" + " ".join(verdict)


# ---------------------------------------------------------------------------------------------------- traces
def is_trace(config: dict[str, Any]) -> bool:
    """Whether the config's scenario replays a trace (evaluated over windows of it: :func:`evaluate_trace`)."""
    import msjgym
    return "dispatch" not in config and \
        msjgym.load_scenario(scenario_name(config), scenario_params(config)).model.trace is not None


def baseline_policies(ev: dict[str, Any], family_name: str = "msj") -> list[Any]:
    """``[evaluate] baselines``: built-in policy names of the scenario's family, or tables ``{policy = NAME, PARAM =
    VALUE, ...}`` bound to their parameters (``Policy.bind``: ``--policy NAME --param PARAM=VALUE`` on the command
    line)."""
    from msjgym.api import family, policy_spec

    msj = family(family_name)
    out = []
    for entry in ev.get("baselines", ["easy-backfilling"]):
        if isinstance(entry, str):
            out.append(policy_spec(msj, entry))
            continue
        kwargs = {k: v for k, v in entry.items() if k != "policy"}
        out.append(policy_spec(msj, entry["policy"]).bind(**kwargs) if kwargs else policy_spec(msj, entry["policy"]))
    return out


def evaluate_trace(config: dict[str, Any], model_path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The learned policy (``sb3:MODEL.zip``, exactly as ``msjgym evaluate --policy sb3:...``: its observation's
    arguments read from the model) and the baselines over the same ``windows`` windows of ``window_jobs`` trace jobs
    (``msjgym evaluate --windows N --window-jobs M --seed S``), each replayed from an empty machine."""
    from sb3_contrib import MaskablePPO

    import msjgym
    from msjgym.core.user_policy import load_user_policy
    from msjgym.envs import MSJEnv
    from msjgym.systems.msj.agent import EnvSpec
    from msjgym.systems.msj.family import observation_options
    from msjgym import api

    ev, env = config["evaluate"], config["env"]
    params = scenario_params(config)
    scenario = msjgym.load_scenario(scenario_name(config), params)
    windows, window_jobs, seed = int(ev.get("windows", 20)), int(ev.get("window_jobs", 256)), int(ev.get("seed", 1))
    tau = float(env.get("bsld_threshold", 10.0))
    metric = ev.get("metric", "bounded_slowdown")
    policy = f"sb3:{model_path}"
    mode, window, estimates = observation_options(policy, api.RunSettings(options={}))
    spec = EnvSpec.make(scenario, mode, window, None, None, None, 0, estimates=estimates)
    _, decide = load_user_policy(policy, spec)
    count = int(ev.get("check_states", 2000))
    check_env = MSJEnv(scenario, mode=mode, window=window, estimates=estimates, horizon_jobs=window_jobs,
                       trace_windows=True)
    agreement, checked = agreement_on_env(MaskablePPO.load(str(model_path), device="cpu"), decide, check_env, count)
    print(f"greedy numpy actor = model.predict(deterministic=True) on {agreement:.2%} of {checked} visited states",
          flush=True)
    run = {"seed": seed, "windows": windows, "window_jobs": window_jobs, "bsld_threshold": tau, "references": False}
    start = time.perf_counter()
    learned = msjgym.evaluate(scenario, policy, progress=True, **run)
    print(f"evaluated the learned policy in {time.perf_counter() - start:.0f} s", flush=True)
    rows = [_trace_row("maskable-ppo (learned)", learned, metric)]
    for baseline in baseline_policies(ev):
        rows.append(_trace_row(baseline.label, msjgym.evaluate(scenario, baseline, **run), metric))
    shown_scenario = _shown(Path(scenario.name)) if Path(scenario.name).is_file() else scenario.name
    overrides = " ".join(f"--param {k}={v!r}" for k, v in params.items())
    command = (f"msjgym evaluate {shown_scenario} {overrides + ' ' if overrides else ''}--policy sb3:"
               f"{_shown(model_path)} --windows {windows} --window-jobs {window_jobs} --seed {seed}"
               + (f" --bsld-threshold {tau:g}" if tau != 10.0 else ""))
    trace = scenario.model.trace
    meta = {"scenario": f"`{shown_scenario}` ({scenario.description})", "params": params,
            "load": scenario.model.load, "reps": windows, "jobs": window_jobs, "warmup": 0, "seed": seed,
            "actor_agreement": agreement, "actor_checked_states": checked, "command": command,
            "evaluation": (f"{windows} windows × {window_jobs:,} consecutive jobs of the trace's {len(trace):,}, "
                           f"each replayed from an empty machine (starts uniform over the trace, window w from "
                           f"`SeedSequence({seed}).spawn({windows})[w]`), the same windows for every policy; "
                           f"mean ± 95 % Student-t CI across windows; bounded slowdown with τ = {tau:g}"),
            "metric": metric}
    return rows, meta


def held_out_scenarios(config: dict[str, Any]) -> list[str]:
    """``[evaluate] scenarios``: the traces the model is evaluated on (scenario files, resolved as ``[scenario]
    name``), default the training scenario."""
    names = config["evaluate"].get("scenarios") or [config["scenario"]["name"]]
    return [scenario_name({"scenario": {"name": n}}) for n in names]


def evaluate_job_traces(config: dict[str, Any], model_path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The learned policy (``sb3:MODEL.zip``: the environment settings saved in it) and the baselines on the same
    ``windows`` windows of ``window_jobs`` jobs of every trace of :func:`held_out_scenarios`, each window from an
    empty machine; one table per trace (:func:`format_trace_table`: differences paired by window)."""
    from sb3_contrib import MaskablePPO

    import msjgym
    from msjgym.core.user_policy import saved_env_settings

    ev, env = config["evaluate"], config["env"]
    windows, window_jobs, seed = int(ev.get("windows", 30)), int(ev.get("window_jobs", 1024)), int(ev.get("seed", 1))
    tau = float(env.get("bsld_threshold", 10.0))
    metric = ev.get("metric", "bounded_slowdown")
    policy = f"sb3:{model_path}"
    run = {"seed": seed, "windows": windows, "window_jobs": window_jobs, "bsld_threshold": tau, "references": False}
    settings = saved_env_settings(policy)
    agreement, checked = math.nan, 0
    tables, all_rows, commands = [], [], []
    for index, name in enumerate(held_out_scenarios(config)):
        scenario = msjgym.load_scenario(name, {})
        if index == 0:  # the numpy actor against model.predict on the first trace's states
            import gymnasium as gym

            args = {k: v for k, v in settings.items() if k != "id"}
            check = gym.make(settings.get("id", env_id(config)), scenario=scenario, horizon_jobs=window_jobs,
                             trace_windows=True, **args).unwrapped
            from msjgym.core.user_policy import load_user_policy
            _, decide = load_user_policy(policy, check.spec_)
            agreement, checked = agreement_on_env(MaskablePPO.load(str(model_path), device="cpu"), decide, check,
                                                  int(ev.get("check_states", 2000)))
            print(f"greedy numpy actor = model.predict(deterministic=True) on {agreement:.2%} of {checked} visited "
                  "states", flush=True)
        start = time.perf_counter()
        learned = msjgym.evaluate(scenario, policy, progress=False, **run)
        print(f"{_shown(Path(name))}: evaluated the learned policy in {time.perf_counter() - start:.0f} s", flush=True)
        rows = [_trace_row("learned (job-scoring)", learned, metric)]
        for baseline in baseline_policies(ev, scenario.family):
            rows.append(_trace_row(baseline.label, msjgym.evaluate(scenario, baseline, **run), metric))
        command = (f"msjgym evaluate {_shown(Path(name))} --policy sb3:{_shown(model_path)} --windows {windows} "
                   f"--window-jobs {window_jobs} --seed {seed}" + (f" --bsld-threshold {tau:g}" if tau != 10.0 else ""))
        commands.append(command)
        table = format_trace_table(rows, metric)
        print(f"\n{scenario.description} (load {scenario.model.load:.3f})\n{table}", flush=True)
        tables.append(f"### {scenario.description}\n\n`{_shown(Path(name))}`, load ρ = {scenario.model.load:.4f}, "
                      f"{_machine(scenario.model)}:\n\n    {command}\n\n{table}\n")
        all_rows.extend(rows)
    train_scenario = msjgym.load_scenario(scenario_name(config), scenario_params(config))
    meta = {"scenario": f"`{_shown(Path(train_scenario.name))}` ({train_scenario.description})",
            "params": {}, "load": train_scenario.model.load, "reps": windows, "jobs": window_jobs, "warmup": 0,
            "seed": seed, "actor_agreement": agreement, "actor_checked_states": checked,
            "command": "\n      ".join(commands),
            "evaluation": (f"on each trace below, {windows} windows × {window_jobs:,} consecutive jobs, each replayed "
                           f"from an empty machine (starts uniform over the trace, window w from "
                           f"`SeedSequence({seed}).spawn({windows})[w]`), the same windows for every policy; mean ± "
                           f"95 % Student-t CI across windows; bounded slowdown with τ = {tau:g}; "
                           + (f"training objective: {_search_objective(config)} (policy search)"
                              if config["train"].get("method") == "search" else
                              f"training reward {env.get('reward', 'n/a')!r}")
                           + f", evaluation metric {metric!r}"),
            "metric": metric, "tables": "\n".join(tables)}
    return all_rows, meta


def _machine(model: Any) -> str:
    """The machine of a scenario's model: its servers, or a multi-resource model's capacity vector."""
    if hasattr(model, "resources") and hasattr(model, "capacity"):
        nodes = f"{model.nodes} × " if getattr(model, "nodes", 1) > 1 else ""
        return nodes + ", ".join(f"{c:,} {r}" for r, c in zip(model.resources, model.capacity))
    return f"{model.servers} servers"


def _trace_row(name: str, result: Any, metric: str) -> dict[str, Any]:
    est = result.metrics
    return {"policy": name, "mean": est[metric].mean, "ci95": est[metric].ci95,
            "wait": est["waiting_time"].mean, "wait_ci95": est["waiting_time"].ci95,
            "utilization": est["utilization"].mean,
            "per_replication": [r[metric] for r in result.replications]}


def format_trace_table(rows: list[dict[str, Any]], metric: str) -> str:
    """The windows table: the metric and the mean wait (± 95 % CI across windows), the ratio to the best baseline,
    then the learned − baseline differences paired by window."""
    best = min(rows[1:], key=lambda r: r["mean"])
    lines = [f"| policy | {metric.replace('_', ' ')} ± 95 % CI | mean wait ± 95 % CI | utilization | × best built-in |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['policy']} | {r['mean']:.4g} ± {r['ci95']:.3g} | {r['wait']:.4g} ± {r['wait_ci95']:.3g} | "
                     f"{r['utilization']:.4f} | {r['mean'] / best['mean']:.3f} |")
    from msjgym.evaluate.intervals import t_interval

    learned = np.asarray(rows[0]["per_replication"])
    parts = []
    for r in rows[1:]:
        diff = t_interval(learned - np.asarray(r["per_replication"]))
        word = "lower" if diff.mean + diff.ci95 < 0 else "higher" if diff.mean - diff.ci95 > 0 else \
            "no difference at 95 %"
        parts.append(f"{r['policy']} {diff.mean:+.4g} ± {diff.ci95:.3g} ({word})")
    wins = sum(1 for a, b in zip(learned, best["per_replication"]) if a < b)
    ties = sum(1 for a, b in zip(learned, best["per_replication"]) if a == b)
    return ("\n".join(lines) + "\n\n" + f"Paired by window (learned − built-in {metric.replace('_', ' ')}, the same "
            f"{len(learned)} windows, 95 % CI): " + "; ".join(parts) + ". " +
            f"Best built-in: {best['policy']}; the learned policy is lower on {wins} of {len(learned)} windows "
            f"(equal on {ties}).")


# ---------------------------------------------------------------------------------------------------- dispatch
def dispatch_scenario(env_args: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The built-in scenario, its overrides and ``msjgym.evaluate``'s options that make ``msjgym/Dispatch-v0``'s
    arguments ``env_args`` (N, λ, the law, the observation and its ``d``, ``delta`` and ``levels``, the pools): a
    dispatcher of the user's on it sees what the environment shows. Pull's information: ``lb-pull-table3``."""
    args = dict(env_args)
    options = {"observation": args.pop("observation", "histogram")}
    if "levels" in args:
        options["levels"] = args.pop("levels")
    information = args.pop("information", "push")
    name = "lb-pull-table3" if information == "pull" and options["observation"] == "estimates" else "lb-dispatch"
    if name == "lb-pull-table3":
        args.setdefault("delta1", 0.0)
    unknown = [k for k in args if k not in ("servers", "lam", "dist", "d", "delta", "delta1", "fast_fraction",
                                            "speed_ratio")]
    if unknown:
        raise SystemExit(f"[dispatch] {unknown[0]}: not evaluated through a dispatch scenario; give delta (pull: "
                         "delta and delta1)")
    return name, args, options


def evaluate_dispatch(config: dict[str, Any], model_path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The learned dispatcher (``sb3:MODEL.zip``, greedy actions) and the built-in dispatchers of ``[evaluate]
    baselines`` (their parameters bound to their declarations), each through ``msjgym.evaluate`` on the scenario of
    the environment's arguments: the same replications, arrivals, warm-up and seeds."""
    from sb3_contrib import MaskablePPO

    import msjgym
    from msjgym.api import family, policy_spec
    from msjgym.core.user_policy import load_user_policy
    from msjgym.envs import DispatchEnv
    from msjgym.systems.dispatch.agent import DispatchSpec

    ev, env_args = config["evaluate"], dict(config["dispatch"])
    env_args.pop("horizon", None)
    env_args.pop("reward", None)  # training's reward: not an argument of the evaluation (mean response time)
    reps, arrivals, seed = int(ev.get("reps", 10)), int(ev.get("arrivals", 200_000)), int(ev.get("seed", 1))
    warmup_fraction = float(ev.get("warmup_fraction", 0.1))
    warmup = int(round(warmup_fraction * arrivals))
    spec = DispatchSpec.make(**env_args, arrivals=arrivals, warmup_fraction=warmup_fraction)
    name, overrides, options = dispatch_scenario(env_args)
    scenario = msjgym.load_scenario(name, overrides)
    run = {"reps": reps, "jobs": arrivals - warmup, "warmup": warmup, "seed": seed,  # jobs: measured arrivals
           "references": False}
    _, decide = load_user_policy(f"sb3:{model_path}", spec)
    count = int(ev.get("check_states", 2000))
    agreement, checked = agreement_on_env(MaskablePPO.load(str(model_path), device="cpu"), decide,
                                          DispatchEnv(**env_args, horizon=count), count)
    print(f"greedy numpy actor = model.predict(deterministic=True) on {agreement:.2%} of {checked} visited states",
          flush=True)
    start = time.perf_counter()
    learned = msjgym.evaluate(scenario, f"sb3:{model_path}", progress=True, **run, **options)
    print(f"evaluated the learned dispatcher in {time.perf_counter() - start:.0f} s", flush=True)
    rows = [_dispatch_row("ppo (learned)", f"{options['observation']} observation", learned)]
    dispatch = family("dispatch")
    for baseline in ev.get("baselines", []):
        kwargs = {k: v for k, v in baseline.items() if k != "policy"}
        result = msjgym.evaluate(scenario, policy_spec(dispatch, baseline["policy"]).bind(**kwargs), **run)
        shown = ", ".join(f"{k} = {v:g}" for k, v in kwargs.items())
        rows.append(_dispatch_row(baseline["policy"], shown or "—", result))
    if spec.observation == "sampled" and spec.model.d == 2 and spec.model.speeds is not None:
        table_extra = speed_decision_map(decide, spec.model.speeds, spec.model.lam * spec.model.servers)
    elif spec.observation == "sampled" and spec.model.d == 2:
        table_extra = decision_map(decide)
    elif spec.observation in ("estimates", "histogram"):
        table_extra = level_choices(decide, env_args, spec.warmup, int(ev.get("level_states", 20_000)))
    else:
        table_extra = ""
    m = spec.model
    params = " ".join(f"--param {k}={v!r}" for k, v in overrides.items())  # repr: the exact float
    flags = " ".join(f"--{k} {v}" for k, v in options.items())
    command = (f"msjgym evaluate {name} {params} --policy sb3:{_shown(model_path)} {flags} --reps {reps} "
               f"--jobs {arrivals - warmup} --warmup {warmup} --seed {seed}")
    shown_options = " ".join(f"{k}={v!r}" for k, v in env_args.items() if k not in ("servers", "lam"))
    shown_options += f"; training reward {config['dispatch'].get('reward', 'holding')!r}"
    meta = {"scenario": f"msjgym/Dispatch-v0 (N = {m.servers}, λ = {m.lam:g}, {m.dist}; {shown_options})",
            "params": {}, "load": m.lam * m.dist.mean, "reps": reps,
            "jobs": arrivals - spec.warmup, "warmup": spec.warmup, "seed": seed, "actor_agreement": agreement,
            "actor_checked_states": checked, "command": command, "extra": table_extra,
            "via": "`msjgym evaluate --policy sb3:...`"}
    return rows, meta


def speed_decision_map(decide: Any, speeds: tuple[float, ...], arrival_rate: float, top: int = 12) -> str:
    """With two pools and d = 2: the learned greedy choice when the sample holds a fast server with q_f jobs and a
    slow one with q_s (both sample orders), beside SED's ((q + 1)/speed, ties to the fast server); with N = 2 and
    exponential sizes also the exact E[R] of SED and of the optimal rule (value iteration,
    ``msjgym.systems.dispatch.two_server``) and their switching curves."""
    fast, slow = max(speeds), min(speeds)
    lines = [f"Greedy choice of the learned dispatcher when the two sampled servers are one fast (speed {fast:.4g}, "
             f"q_f jobs, rows) and one slow (speed {slow:.4g}, q_s jobs, columns): F = the fast one, S = the slow one "
             "(both sample orders agree), F/S = it depends on the order; `*` marks a choice SED does not make (SED "
             "breaks a tie of (q + 1)/speed uniformly: either choice is SED's there).", "",
             "| q_f \\ q_s | " + " | ".join(str(b) for b in range(top + 1)) + " |", "|---" * (top + 2) + "|"]
    differ = to_slow = 0
    for a in range(top + 1):
        cells = []
        for b in range(top + 1):
            first = int(decide(np.array([a, b, fast, slow], np.float32), np.ones(2, np.bool_)))  # 0: fast
            second = int(decide(np.array([b, a, slow, fast], np.float32), np.ones(2, np.bool_)))  # 1: fast
            picks = {"F" if first == 0 else "S", "F" if second == 1 else "S"}
            cell = picks.pop() if len(picks) == 1 else "F/S"
            e_fast, e_slow = (a + 1) / fast, (b + 1) / slow
            sed = "F" if e_fast < e_slow else "S" if e_fast > e_slow else "F/S"
            mark = "*" if cell != sed and sed != "F/S" else ""
            differ += bool(mark)
            to_slow += cell == "S"
            cells.append(cell + mark)
        lines.append(f"| {a} | " + " | ".join(cells) + " |")
    lines += ["", f"{differ} of {(top + 1) ** 2} (q_f, q_s) pairs differ from SED; {to_slow} go to the slow server."]
    if len(speeds) == 2:
        from msjgym.systems.dispatch import two_server as two

        best = two.optimum(arrival_rate, fast, slow)
        sed = two.evaluate_rule(two.sed_rule(fast, slow), arrival_rate, fast, slow)

        def learned_threshold(q_s: int) -> str:
            picks = [int(decide(np.array([q_f, q_s, fast, slow], np.float32), np.ones(2, np.bool_)))
                     for q_f in range(200)]
            return str(picks.index(1)) if 1 in picks else "never"

        lines += ["", "Exact values for two servers with exponential sizes (value iteration on the two-queue chain, "
                  f"`msjgym.systems.dispatch.two_server`, queues truncated at 120 jobs): SED (ties uniform, as the "
                  f"built-in `sed` and `sed-d`) E[R] = {sed.response_time:.4f}, the optimal rule E[R] = "
                  f"{best.response_time:.4f}. The least q_f at which a job may go to the slow server (the fast "
                  "server sampled first), for q_s = 0, 1, ..., 5: optimal "
                  f"{', '.join(str(best.threshold(q)) for q in range(6))}; SED "
                  f"{', '.join(str(sed.threshold(q)) for q in range(6))}; learned "
                  f"{', '.join(learned_threshold(q) for q in range(6))}."]
    return "\n".join(lines)


def decision_map(decide: Any, top: int = 8) -> str:
    """The learned greedy choice on the sampled pairs (q₀, q₁), 0 <= q <= top, beside JSQ(2)'s: where it differs."""
    lines = ["Greedy choice of the learned dispatcher for sampled queue lengths (q₀ rows, q₁ columns): 0 = the first "
             "sampled server, 1 = the second; `*` marks a choice of the strictly longer queue (JSQ(2) never makes "
             "it; ties may go either way).", "",
             "| q₀ \\ q₁ | " + " | ".join(str(b) for b in range(top + 1)) + " |",
             "|---" * (top + 2) + "|"]
    wrong = 0
    for a in range(top + 1):
        cells = []
        for b in range(top + 1):
            act = int(decide(np.array([a, b], np.float32), np.ones(2, np.bool_)))
            longer = (act == 0 and a > b) or (act == 1 and b > a)
            wrong += longer
            cells.append(f"{act}{'*' if longer else ''}")
        lines.append(f"| {a} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"{wrong} of {(top + 1) ** 2} pairs send the job to the longer queue.")
    return "\n".join(lines)


def level_choices(decide: Any, env_args: dict[str, Any], warmup: int, count: int, seed: int = 12345) -> str:
    """Where the learned greedy dispatcher sends jobs relative to the lowest occupied level (push's, pull's and
    jsq's choice), over ``count`` decisions after ``warmup`` decisions from empty, with the mean true (q + 1)·E[S] of
    the chosen server (the ``"response"`` reward: the job's expected response time, time units)."""
    from msjgym.envs import DispatchEnv

    env = DispatchEnv(**env_args, horizon=warmup + count, reward="response")
    obs, _ = env.reset(seed=seed)
    offsets: dict[int, list[float]] = {}
    for step in range(warmup + count):
        mask = env.action_masks()
        action = int(decide(obs, mask))
        lowest = int(np.flatnonzero(mask)[0])
        obs, reward, _, _, _ = env.step(action)
        if step >= warmup:
            offsets.setdefault(action - lowest, []).append(-float(reward))
    lines = [f"Greedy choice of the learned dispatcher relative to the lowest occupied level (0 = the lowest: push's "
             f"choice), over {count:,} decisions after {warmup:,} from empty (seed {seed}); the last column is the "
             "mean expected response time (q + 1)·E[S] of the job at the chosen server, q its TRUE queue length "
             "(the agent sees only the levels).", "",
             "| levels above the lowest | share of decisions | mean (q + 1)·E[S] of the chosen server |",
             "|---|---|---|"]
    for offset in sorted(offsets):
        costs = offsets[offset]
        lines.append(f"| {offset} | {len(costs) / count:.4f} | {np.mean(costs):.3f} |")
    return "\n".join(lines)


def _shown(path: Path) -> Path:
    path = path.resolve()
    return path.relative_to(HERE.parent) if HERE.parent in path.parents else path


def _dispatch_row(name: str, setting: str, result: Any) -> dict[str, Any]:
    est = result.metrics
    return {"policy": name, "setting": setting, "response_time": est["response_time"].mean,
            "ci95": est["response_time"].ci95, "message_rate": est["message_rate"].mean,
            "message_ci95": est["message_rate"].ci95,
            "per_replication": [r["response_time"] for r in result.replications]}


def format_dispatch_table(rows: list[dict[str, Any]]) -> str:
    jsq2 = next((r for r in rows if r["policy"] == "jsq-d"), None)
    lines = ["| dispatcher | setting | mean response time ± 95 % CI | messages per server per unit time | "
             "× JSQ(d) |", "|---|---|---|---|---|"]
    for r in rows:
        ratio = f"{r['response_time'] / jsq2['response_time']:.3f}" if jsq2 else "n/a"
        lines.append(f"| {r['policy']} | {r['setting']} | {r['response_time']:.4f} ± {r['ci95']:.4f} | "
                     f"{r['message_rate']:.3f} ± {r['message_ci95']:.3f} | {ratio} |")
    learned, verdict = rows[0], []
    for r in rows[1:]:
        lo, hi = r["response_time"] - r["ci95"], r["response_time"] + r["ci95"]
        l_lo, l_hi = learned["response_time"] - learned["ci95"], learned["response_time"] + learned["ci95"]
        word = "better, disjoint 95 % CIs" if l_hi < lo else "worse, disjoint 95 % CIs" if l_lo > hi else \
            "the 95 % CIs overlap"
        verdict.append(f"Learned vs {r['policy']}: {word} ({learned['response_time']:.4f} vs "
                       f"{r['response_time']:.4f}).")
    return "\n".join(lines) + "\n\n" + " ".join(verdict) + "\n\n" + paired_differences(rows)


def paired_differences(rows: list[dict[str, Any]]) -> str:
    """Learned minus each built-in row, replication by replication (replication r of every row runs on the stream
    ``SeedSequence(seed).spawn(reps)[r]``: the pairs are independent across r), with a Student-t 95 % CI: a sharper
    test than comparing the two rows' CIs when the common streams make the replications positively correlated."""
    from msjgym.evaluate.intervals import t_interval

    learned = np.asarray(rows[0]["per_replication"])
    parts = []
    for r in rows[1:]:
        diff = t_interval(learned - np.asarray(r["per_replication"]))
        word = "lower" if diff.mean + diff.ci95 < 0 else "higher" if diff.mean - diff.ci95 > 0 else "no difference at 95 %"
        parts.append(f"{r['policy']} {diff.mean:+.4f} ± {diff.ci95:.4f} ({word})")
    return ("Paired by replication (learned − built-in mean response time, same seed per replication, "
            f"{len(learned)} pairs, 95 % CI): " + "; ".join(parts) + ".")


def model_path(out: Path, name: str, skip_train: bool) -> Path:
    """The model to evaluate: ``OUT/NAME.zip``; with ``--skip-train`` and none there, the recorded one."""
    own = out / f"{name}.zip"
    if skip_train and not own.is_file() and (RECORDED / f"{name}.zip").is_file():
        return RECORDED / f"{name}.zip"
    return own


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch is imported: one thread unless asked otherwise
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="where the model and the report go (default baselines/runs/, untracked; the recorded "
                             "results: --out baselines/results)")
    parser.add_argument("--timesteps", type=int, default=None, help="training steps (overrides the config's)")
    parser.add_argument("--quick", action="store_true",
                        help=f"a first try: {QUICK_TIMESTEPS:,} steps, a {QUICK_BUDGET:.0f} s cap, a small evaluation")
    parser.add_argument("--skip-train", action="store_true",
                        help="evaluate the saved model only (OUT/NAME.zip, else the recorded one)")
    parser.add_argument("--scenarios", nargs="+", default=None, metavar="SCENARIO",
                        help="evaluate on these scenario files instead of [evaluate] scenarios (with --skip-train: "
                             "extra held-out cells of a recorded model)")
    args = parser.parse_args(argv)
    config = apply_overrides(load_config(args.config), args.timesteps, args.quick)
    if args.scenarios:
        config["evaluate"]["scenarios"] = list(args.scenarios)
    name = config.get("name", args.config.stem)
    training = None
    if not args.skip_train:
        training = train(config, args.out, name)
    elif (args.out / f"{name}.training.json").is_file():  # the training that made OUT/NAME.zip
        training = json.loads((args.out / f"{name}.training.json").read_text())
    model = model_path(args.out, name, args.skip_train)
    print(f"evaluating {model}", flush=True)
    if "dispatch" in config:
        rows, meta = evaluate_dispatch(config, model)
        table = format_dispatch_table(rows)
    elif env_id(config) != MSJ_ID:
        rows, meta = evaluate_job_traces(config, model)
        table = meta["tables"]
    elif is_trace(config):
        rows, meta = evaluate_trace(config, model)
        table = format_trace_table(rows, meta["metric"])
    else:
        rows, meta = evaluate_all(config, model)
        table = format_table(rows, meta["reference"])
    print("\n" + table)
    write_report(args, config, name, training, rows, meta, table)
    return 0


def write_report(args: argparse.Namespace, config: dict[str, Any], name: str, training: dict[str, Any] | None,
                 rows: list[dict[str, Any]], meta: dict[str, Any], table: str) -> None:
    import stable_baselines3
    import sb3_contrib
    import torch

    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{name}.md"
    recorded = RECORDED / f"{name}.md"
    source = path if path.exists() else recorded
    if training is None and source.exists():  # keep the recorded training time
        previous = source.read_text()
        marker = "training:"
        kept = next((line for line in previous.splitlines() if line.startswith(f"- {marker}")), None)
    else:
        kept = None
    params = ", ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}" for k, v in meta["params"].items())
    heuristic = ("first-fit over the shown jobs (the first row whose job fits)"
                 if config["train"].get("imitate_target") == "first-fits" else "the base order (row 0)")
    train_line = kept or (f"- training: {training['timesteps']:,} environment steps in {training['seconds']:.0f} s "
                          f"wall time ({platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, "
                          f"torch threads {config['train'].get('torch_threads', 1)}; 1-minute load average "
                          f"{training['load_before']:.2f} before, {training['load_after']:.2f} after)"
                          + (f"; first a warm start imitating {heuristic} on "
                             f"{training['imitated']['decisions']:,} states in {training['imitated']['seconds']:.0f} s "
                             f"(greedy = its choice on {training['imitated']['agreement']:.2%} after it)"
                             if training.get("imitated") else "")
                          if training else "- training: n/a")
    if training and training.get("search") and not kept:
        stages = "; ".join(f"{st['parametrisation']}: {st['generations']} generations, {st['decisions']:,} decisions, "
                           f"validation {st['validation']:.4f}" for st in training["search"]["stages"])
        train_line = (f"- training: policy search (`[search]`, msjgym.systems.msj.env_search), {training['timesteps']:,} "
                      f"greedy decisions in {training['seconds']:.0f} s wall time "
                      f"({platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores; 1-minute load "
                      f"average {training['load_before']:.2f} before, {training['load_after']:.2f} after); {stages}; "
                      f"kept: the weights of best validation ({_search_objective(config, 'validation')} "
                      f"{training['search']['validation']:.4f} on the validation trace's fixed windows)")
    method = "policy search" if config["train"].get("method") == "search" else "MaskablePPO"
    quick = ("\n**QUICK run** (`--quick`: a short training and a small evaluation; not the recorded result)\n"
             if config.get("quick") else "")
    text = f"""# {name}: {method} on {meta['scenario']}
{quick}
Made by `python baselines/train.py {args.config.relative_to(HERE.parent) if args.config.is_absolute() and HERE.parent in args.config.parents else args.config}{" --quick" if args.quick else ""}{f" --timesteps {args.timesteps}" if args.timesteps else ""}{" --skip-train" if args.skip_train else ""}{" --scenarios " + " ".join(args.scenarios) if args.scenarios else ""}`
(config: `{args.config.name}`).

- scenario: {meta['scenario']} ({params + '; ' if params else ''}load ρ = {meta['load']:.4f})
{train_line}
- model: `{name}.zip` (sb3-contrib {sb3_contrib.__version__}, stable-baselines3 {stable_baselines3.__version__}, torch {torch.__version__})
- evaluation: {meta.get('evaluation') or f"{meta['reps']} independent replications × {meta['jobs']:,} measured jobs (warm-up {meta['warmup']:,}), seed {meta['seed']}, the same replications and statistics for every policy"}. The learned policy acts greedily (its
  most likely allowed action) through the code path of {meta.get("via", "`msjgym evaluate --policy sb3:...`")}
  (a numpy copy of the
  network, which chose the same action as `model.predict(deterministic=True)` in {meta['actor_agreement']:.2%} of
  {meta['actor_checked_states']:,} visited states). The same row from the shell:

      {meta['command']}

{table}
{chr(10) + meta["extra"] + chr(10) if meta.get("extra") else ""}
Python {sys.version.split()[0]}.
"""
    path.write_text(text)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    sys.exit(main())
