"""Train PPO with RLlib (new API stack) on msjgym/MSJ-v0 and msjgym/Dispatch-v0, then evaluate it beside built-ins.

    python examples/train_rllib.py --quick                       # a few iterations, 2 env runners, small evaluation
    python examples/train_rllib.py                               # longer training, the full evaluation
    python examples/train_rllib.py --address auto                # an existing Ray cluster (or ray://HOST:10001)
    python examples/train_rllib.py --env dispatch --env-runners 8 --iterations 100

Needs the ``rllib`` extra (pip install torch==2.13.0, then pip install "msjgym[rllib]"); docs/tutorials/rllib.md.

RLlib's current API: ``PPOConfig`` with ``env_runners(num_env_runners=...)`` (EnvRunner actors sample in parallel),
a Learner that updates an RLModule, ``algo.train()`` per iteration and ``algo.save_to_path()`` for the checkpoint.
Action masks: RLlib's PPO has no separate mask argument, so every environment is wrapped by
``msjgym.envs.rllib.MaskInObservation`` (observation ``{"observations", "action_mask"}``) and trained with RLlib's
action-masking RLModule (on log(1 + x) features: ``msjgym.core.rllib_module``), which never samples a masked action. MSJ-v0 (``mode="start"``) masks actions (an empty
window slot, a job that does not fit); Dispatch-v0 with ``observation="sampled"`` allows every action (the mask is
all ones there). The environments' ``invalid_action="fallback"`` default would replace a masked action by the mask's
default one, but this module never samples one.

Threads: one torch thread in this process (the local Learner) and ``OMP_NUM_THREADS=1`` for the EnvRunner actors,
unless you set ``OMP_NUM_THREADS`` yourself: these small networks gain nothing from more threads, and several
threads per process oversubscribe a small machine (measured here: 10x slower training).

The checkpoint is then evaluated exactly as ``msjgym evaluate SCENARIO --policy rllib:CHECKPOINT_DIR`` does
(``msjgym.evaluate``: same scenario parameters, mode and window, or dispatch observation and d, N, λ), beside the
built-in policies on the same seeds, and the table is printed with 95 % CIs.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msjgym
from msjgym.envs.rllib import ENV_NAME, make_env


@dataclass(frozen=True)
class Setup:
    """One environment to train on and the scenario that evaluates the same system.

    ``env_kwargs``: ``gymnasium.make`` arguments (training); ``scenario``/``params``: ``msjgym.load_scenario``;
    ``options``: the learned policy's ``msjgym.evaluate`` options (mode and window, or observation) — the same
    values as in ``env_kwargs``; ``builtins``: the policies to compare with; ``reward_scale``: training reward
    factor; ``masked``: whether the environment masks actions (checked); ``average_cost``: train on the average-cost reward (``msjgym.envs.rllib.AverageCost``); ``gamma``,
    ``lambda_``: PPO's discount and GAE parameter per decision."""

    name: str
    env_id: str
    env_kwargs: dict[str, Any]
    scenario: str
    params: dict[str, Any]
    options: dict[str, Any]
    builtins: tuple[str, ...]
    reward_scale: float
    average_cost: bool
    masked: bool
    gamma: float
    lambda_: float
    cli: str = field(default="")


# "1 and n" (Grosof & Ayhan), 10 servers, λ = 2.7 (FCFS is stable only below 2.913), non-preemptive, window 2:
# the setting of examples/train_maskable_ppo.py. Reward −∫ (N − ρ) dt per step (average cost: with −∫ N dt PPO learns
# to keep servers idle, see msjgym.envs.rllib.AverageCost), scaled by 0.1.
MSJ = Setup(
    name="msj", env_id="msjgym/MSJ-v0",
    env_kwargs={"scenario": "one-and-n", "arrival_rate": 2.7, "mode": "start", "window": 2, "horizon_jobs": 500},
    scenario="one-and-n", params={"arrival_rate": 2.7}, options={"mode": "start", "window": 2},
    builtins=("fcfs", "first-fit", "msf-nonpreemptive"), reward_scale=0.1, average_cost=True, masked=True,
    gamma=0.995, lambda_=0.95,
    cli="msjgym evaluate one-and-n --param arrival_rate=2.7 --mode start --window 2")

# N = 100 FIFO servers, λ = 0.9, Exp(1) sizes, the queue lengths of d = 2 sampled servers per arrival (every action
# allowed), reward "response" (−E[R] of the job just dispatched; training only), as baselines/ppo_dispatch.toml.
# Compared with random, JSQ(2) (same samples: 2λ = 1.8 messages per server per unit time) and push at δ = dλ = 1.8.
DISPATCH = Setup(
    name="dispatch", env_id="msjgym/Dispatch-v0",
    env_kwargs={"servers": 100, "lam": 0.9, "dist": "exp", "observation": "sampled", "d": 2, "horizon": 500,
                "reward": "response"},
    scenario="lb-dispatch", params={"servers": 100, "lam": 0.9, "dist": "exp", "d": 2, "delta": 1.8},
    options={"observation": "sampled"}, builtins=("random", "jsq-d", "push"), reward_scale=0.1, average_cost=False,
    masked=False, gamma=0.99, lambda_=0.95,
    cli="msjgym evaluate lb-dispatch --param servers=100 --param lam=0.9 --param dist=exp --param d=2 "
        "--observation sampled")

SETUPS = {"msj": MSJ, "dispatch": DISPATCH}


@dataclass(frozen=True)
class Budget:
    """Training and evaluation sizes: ``iterations`` of ``batch`` environment steps (PPO epochs over minibatches),
    then ``reps`` replications of ``jobs`` measured jobs (MSJ) or ``arrivals`` measured arrivals (dispatch; the
    warm-up, one ninth of them, on top: 10 % of a replication's arrivals) per policy."""

    iterations: int
    batch: int
    minibatch: int
    epochs: int
    reps: int
    jobs: int
    arrivals: int


QUICK = Budget(iterations=3, batch=4000, minibatch=500, epochs=5, reps=3, jobs=5_000, arrivals=27_000)
FULL = Budget(iterations=60, batch=16_000, minibatch=1000, epochs=10, reps=10, jobs=100_000, arrivals=180_000)


def config(setup: Setup, budget: Budget, env_runners: int, envs_per_runner: int, seed: int) -> Any:
    """RLlib's PPOConfig for ``setup`` (new API stack: EnvRunners, a Learner, and RLlib's action-masking RLModule
    on log(1 + x) features, :mod:`msjgym.core.rllib_module`)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from msjgym.core.rllib_module import Log1pActionMaskingTorchRLModule

    env_config = {"env_id": setup.env_id, "reward_scale": setup.reward_scale, "average_cost": setup.average_cost,
                  **setup.env_kwargs}
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config=env_config)
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=envs_per_runner,
                     rollout_fragment_length="auto", sample_timeout_s=600.0)
        .learners(num_learners=0)  # the Learner runs in this process (CPU); >0 makes Learner actors on a cluster
        .training(train_batch_size_per_learner=budget.batch, minibatch_size=budget.minibatch,
                  num_epochs=budget.epochs, lr=3e-4, gamma=setup.gamma, lambda_=setup.lambda_,
                  vf_clip_param=1e4, entropy_coeff=0.0)
        .rl_module(rl_module_spec=RLModuleSpec(module_class=Log1pActionMaskingTorchRLModule,
                                               model_config={"fcnet_hiddens": [64, 64], "fcnet_activation": "tanh",
                                                             "head_fcnet_hiddens": []}))
        .debugging(seed=seed)
    )


def check_masks(setup: Setup, steps: int = 200, seed: int = 0) -> str:
    """Step the training environment (as the env runners make it) with allowed random actions: the Dict observation
    carries the mask, an action outside it falls back (counted in ``info``), and ``setup.masked`` is what the steps
    show (Dispatch-v0 with ``observation="sampled"``: the mask is all true on reset and on every step). Returns a
    line for the printout."""
    import numpy as np

    env = make_env({"env_id": setup.env_id, **setup.env_kwargs})
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    all_allowed = True
    for _ in range(steps):
        mask = obs["action_mask"] > 0
        assert mask.any(), "an observation with no allowed action"
        all_allowed &= bool(mask.all())
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            obs, _ = env.reset()
    disallowed = np.flatnonzero(obs["action_mask"] == 0)
    if disallowed.size:  # a masked action is replaced by the mask's default action and counted (invalid_action)
        _, _, _, _, info = env.step(int(disallowed[0]))
        assert info["fallback"], "the environment applied a masked action without counting it"
    env.close()
    assert all_allowed != setup.masked, f"{setup.name}: expected masked={setup.masked}, the steps showed otherwise"
    return "every action allowed" if all_allowed else "some actions masked: the RLModule applies the mask"


def train(setup: Setup, budget: Budget, out: Path, env_runners: int, envs_per_runner: int, seed: int,
          log: Any = print, every: int = 0) -> Path:
    """Train PPO for ``budget.iterations`` iterations, printing progress; save and return the checkpoint dir (the
    last iteration's), and with ``every`` > 0 also ``out/iteration_NNN`` every ``every`` iterations."""
    algo = config(setup, budget, env_runners, envs_per_runner, seed).build_algo()
    reward = f"training reward x{setup.reward_scale:g}" + (", average-cost centred" if setup.average_cost else "")
    start = time.perf_counter()
    try:
        for i in range(1, budget.iterations + 1):
            result = algo.train()
            runners = result.get("env_runners", {})
            ret = runners.get("episode_return_mean", math.nan)
            steps = result.get("num_env_steps_sampled_lifetime", runners.get("num_env_steps_sampled_lifetime", 0))
            shown = f"{ret:10.3f}" if math.isfinite(ret) else "n/a (no episode ended yet)"
            log(f"  [{setup.name}] iteration {i:3d}/{budget.iterations}: episode return mean {shown} ({reward}), "
                f"{int(steps):,} env steps, {time.perf_counter() - start:6.1f} s")
            if every > 0 and i % every == 0 and i < budget.iterations:
                log(f"  [{setup.name}] saved {algo.save_to_path(str((out / f'iteration_{i:03d}').resolve()))}")
        path = Path(algo.save_to_path(str(out.resolve())))
    finally:
        algo.stop()
    return path


@dataclass(frozen=True)
class Row:
    """One evaluated policy: mean response time ± 95 % CI (None if unstable), message rate (dispatch), wall time."""

    policy: str
    mean: float | None
    ci95: float | None
    messages: float | None
    seconds: float
    note: str = ""


def evaluate(setup: Setup, checkpoint: Path, budget: Budget, seed: int) -> list[Row]:
    """The learned policy (``rllib:CHECKPOINT``) and the built-ins on the same scenario and seeds, through
    ``msjgym.evaluate`` — the code path of ``msjgym evaluate --policy``."""
    scenario = msjgym.load_scenario(setup.scenario, setup.params)
    jobs = budget.arrivals if setup.scenario.startswith("lb-") else budget.jobs
    rows = []
    for policy in (f"rllib:{checkpoint}", *setup.builtins):
        options = setup.options if policy.startswith("rllib:") else {}
        start = time.perf_counter()
        result = msjgym.evaluate(scenario, policy, reps=budget.reps, jobs=jobs, seed=seed, references=False,
                                 **options)
        name = "ppo (rllib, learned)" if policy.startswith("rllib:") else policy
        rate = result.metrics.get("message_rate")
        messages = rate.mean if rate is not None else None
        if result.stable:
            t = result.metrics["response_time"]
            rows.append(Row(name, t.mean, t.ci95, messages, time.perf_counter() - start))
        else:  # stopped once its number in system kept growing: the growth rate (jobs per unit time) ± 95 % CI
            g = result.growth_rate
            rows.append(Row(name, None, None, messages, time.perf_counter() - start,
                            f"unstable: N grows {g.mean:.4g} ± {g.ci95:.2g}/time"))
    return rows


def table(setup: Setup, rows: list[Row], budget: Budget) -> str:
    """The printed table: one line per policy."""
    unit = "measured arrivals" if setup.scenario.startswith("lb-") else "measured jobs"
    size = budget.arrivals if setup.scenario.startswith("lb-") else budget.jobs
    lines = [f"{setup.name}: {setup.cli} ({budget.reps} reps x {size:,} {unit}, same seeds for every policy)",
             f"  {'policy':22s} {'mean response time ± 95% CI':>28s}" + (
                 f" {'messages/server/time':>21s}" if setup.scenario.startswith("lb-") else "") + "   seconds"]
    for row in rows:
        value = row.note if row.mean is None else f"{row.mean:12.4f} ± {row.ci95:.4f}"
        extra = f" {row.messages:21.3f}" if row.messages is not None and setup.scenario.startswith("lb-") else ""
        lines.append(f"  {row.policy:22s} {value:>28s}{extra} {row.seconds:9.1f}")
    return "\n".join(lines)


def run(envs: list[str], budget: Budget, out: Path, env_runners: int = 2, envs_per_runner: int = 4,
        address: str | None = None, seed: int = 1, eval_seed: int = 2026, log: Any = print,
        every: int = 0) -> dict[str, list[Row]]:
    """Connect to (or start) Ray, train each of ``envs`` and evaluate its checkpoint; returns the rows per env."""
    import ray
    from ray.tune.registry import register_env

    if address is None:  # a local Ray with one CPU per env runner (the Learner runs in this process)
        ray.init(num_cpus=max(env_runners, 1), include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=address, log_to_driver=False)
    register_env(ENV_NAME, make_env)
    tables: dict[str, list[Row]] = {}
    try:
        for name in envs:
            setup = SETUPS[name]
            log(f"{name}: {setup.env_id} {setup.env_kwargs}: {check_masks(setup)}; PPO with {env_runners} env "
                f"runner(s) x {envs_per_runner} env(s)")
            checkpoint = train(setup, budget, out / name, env_runners, envs_per_runner, seed, log, every)
            log(f"  checkpoint: {checkpoint}")
            log(f"  the learned row from the shell: {setup.cli} --policy rllib:{checkpoint} --reps {budget.reps} "
                f"--jobs {budget.arrivals if setup.scenario.startswith('lb-') else budget.jobs} --seed {eval_seed}")
            tables[name] = evaluate(setup, checkpoint, budget, eval_seed)
            log(table(setup, tables[name], budget))
    finally:
        ray.shutdown()
    return tables


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # inherited by Ray's actors, started below
    import torch
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"small run: {QUICK}")
    parser.add_argument("--env", choices=("msj", "dispatch", "both"), default="both")
    parser.add_argument("--address", default=None, help="Ray cluster address (auto, ray://HOST:10001); default: "
                                                        "start a local Ray")
    parser.add_argument("--env-runners", type=int, default=2, help="EnvRunner actors sampling in parallel")
    parser.add_argument("--envs-per-runner", type=int, default=4, help="environment copies each EnvRunner steps "
                                                                        "together (one batched forward pass)")
    parser.add_argument("--iterations", type=int, default=None, help="training iterations (default: the budget's)")
    parser.add_argument("--reps", type=int, default=None, help="evaluation replications (default: the budget's)")
    parser.add_argument("--out", type=Path, default=Path("rllib_checkpoints"), help="checkpoint directory")
    parser.add_argument("--seed", type=int, default=1, help="training seed")
    parser.add_argument("--checkpoint-every", type=int, default=0, metavar="K",
                        help="also save OUT/ENV/iteration_NNN every K iterations (PPO's policy is not monotone in "
                             "training: evaluate them with --policy rllib:DIR, on other seeds than the final table)")
    args = parser.parse_args(argv)
    if args.env_runners < 1:
        parser.error(f"--env-runners {args.env_runners}: must be >= 1 (EnvRunner actors sampling in parallel)")
    budget = QUICK if args.quick else FULL
    if args.iterations is not None or args.reps is not None:
        budget = Budget(**{**budget.__dict__, **{k: v for k, v in (("iterations", args.iterations),
                                                                      ("reps", args.reps)) if v is not None}})
    os.environ.setdefault("RAY_DEDUP_LOGS", "1")
    envs = ["msj", "dispatch"] if args.env == "both" else [args.env]
    run(envs, budget, args.out, args.env_runners, args.envs_per_runner, args.address, args.seed,
        every=args.checkpoint_every)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
