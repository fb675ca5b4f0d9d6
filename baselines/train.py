"""Train sb3-contrib's MaskablePPO on an msjgym scenario, then evaluate it beside the built-in policies.

    python baselines/train.py baselines/maskable_ppo_one_and_n.toml [--skip-train] [--out DIR]

Reads a TOML config (see ``maskable_ppo_one_and_n.toml``), trains on the native vector environment through
``msjgym.envs.to_sb3`` within a wall-clock budget, saves the model (``OUT/NAME.zip``), then evaluates the learned
policy (greedy: the most likely allowed action) and the built-in policies with the same replications, seeds, jobs
and warm-up (``msjgym.evaluate`` / ``msjgym.envs.agent_runner.evaluate_agent``: the same statistics as
``msjgym evaluate``), and writes the comparison table to ``OUT/NAME.md`` (and prints it).
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


def load_config(path: Path) -> dict[str, Any]:
    with open(path, "rb") as f:
        config = tomllib.load(f)
    for section in ("scenario", "env", "train", "ppo", "evaluate"):
        config.setdefault(section, {})
    return config


def scenario_params(config: dict[str, Any]) -> dict[str, Any]:
    """The scenario's parameter overrides; ``fcfs_threshold_factor`` sets arrival_rate to that multiple of FCFS's
    stability threshold μ (one-and-n: ``msjgym.theory.saturated.one_and_n_throughput``)."""
    sc = config["scenario"]
    params = dict(sc.get("params", {}))
    factor = sc.get("fcfs_threshold_factor")
    if factor is not None:
        from msjgym.evaluate.scenarios import load_scenario
        from msjgym.theory.saturated import one_and_n_throughput
        base = load_scenario(sc["name"], params).params
        mu = one_and_n_throughput(int(base["servers"]), float(base["p_n"]), float(base["mu_1"]), float(base["mu_n"]))
        params["arrival_rate"] = factor * mu
    return params


# ---------------------------------------------------------------------------------------------------- training
def train(config: dict[str, Any], out: Path, name: str) -> dict[str, Any]:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    from msjgym.envs import MSJVectorEnv, to_sb3
    from msjgym.envs.sb3 import Log1pExtractor

    tr, ppo, ev = config["train"], dict(config["ppo"]), config["env"]
    torch.set_num_threads(int(tr.get("torch_threads", 1)))
    seed = int(tr.get("seed", 0))
    venv = MSJVectorEnv(int(ev.get("num_envs", 64)), scenario=config["scenario"]["name"], mode=ev.get("mode", "start"),
                        window=int(ev.get("window", 8)), horizon_jobs=int(ev.get("horizon_jobs", 1000)),
                        **scenario_params(config))
    env = VecMonitor(to_sb3(venv))
    if "average_cost" in tr:
        env = AverageCostReward(env, tr["average_cost"], float(tr.get("average_cost_rate", 1e-3)))
    if tr.get("normalize_reward", False):
        env = VecNormalize(env, norm_obs=False, norm_reward=True, gamma=ppo.get("gamma", 0.99))
    net_arch = ppo.pop("net_arch", [64, 64])
    policy_kwargs = {"net_arch": net_arch}
    if ppo.pop("log1p_features", True):
        policy_kwargs["features_extractor_class"] = Log1pExtractor
    model = MaskablePPO("MlpPolicy", env, seed=seed, device="cpu", policy_kwargs=policy_kwargs, verbose=0, **ppo)

    budget = float(tr.get("time_budget_seconds", 780))
    total = int(tr.get("total_timesteps", 10_000_000))
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
    model.learn(total_timesteps=total, callback=Progress())
    seconds = time.perf_counter() - start
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / f"{name}.zip")
    print(f"trained {model.num_timesteps:,} steps in {seconds:.0f} s; saved {out / (name + '.zip')}", flush=True)
    (out / f"{name}.train_log.json").write_text(json.dumps(log))
    return {"seconds": seconds, "timesteps": model.num_timesteps}


def AverageCostReward(venv: Any, average: float | str, rate: float) -> Any:  # noqa: N802 (a class factory)
    """A VecEnv wrapper: reward −∫ (N − ρ) dt instead of −∫ N dt (the average-cost, or differential, reward).

    Why: PPO discounts per step, and an msjgym step lasts a variable time dt. With the raw reward, a policy that
    makes more decisions per unit time has its costs discounted away faster; under "1 and n" the agent then learns
    to keep servers idle (every event becomes a decision epoch) — worse than random. Subtracting ρ·dt, ρ ≈ the
    policy's own average number in system, makes the rewards average zero per unit time, so that how many steps a
    unit of time takes no longer matters to first order; it does not change which policy has the lower average
    number in system. ``average``: a fixed ρ, or "adaptive": ρ tracks Σcost/Σdt with exponential forgetting at
    ``rate`` per vector step (it starts from the first step's value).
    """
    from stable_baselines3.common.vec_env import VecEnvWrapper

    class _AverageCostReward(VecEnvWrapper):
        def __init__(self) -> None:
            super().__init__(venv)
            self.adaptive = average == "adaptive"
            if not self.adaptive and not isinstance(average, (int, float)):
                raise ValueError(f"average_cost = {average!r}: a number or \"adaptive\"")
            self.rho = None if self.adaptive else float(average)
            self.cost = self.time = 0.0

        def reset(self) -> np.ndarray:
            return self.venv.reset()

        def step_wait(self):  # noqa: ANN202
            obs, rewards, dones, infos = self.venv.step_wait()
            dt = np.array([info["dt"] for info in infos])
            if self.adaptive:
                self.cost = (1 - rate) * self.cost - float(rewards.sum())
                self.time = (1 - rate) * self.time + float(dt.sum())
                if self.time > 0:
                    self.rho = self.cost / self.time
            rho = self.rho or 0.0
            return obs, (rewards + rho * dt).astype(np.float32), dones, infos

    return _AverageCostReward()


# ---------------------------------------------------------------------------------------------------- evaluation
class GreedyActor:
    """The saved MaskablePPO model's greedy action (the most likely allowed one), computed in numpy.

    ``model.predict(obs, action_masks=mask, deterministic=True)`` costs ~0.3 ms per call through SB3; the same
    network in numpy costs ~10 µs, which makes evaluating millions of decisions practical. ``check`` compares the two
    on given observations.
    """

    def __init__(self, model: Any) -> None:
        import torch
        from msjgym.envs.sb3 import Log1pExtractor

        policy = model.policy
        self.log1p = isinstance(policy.features_extractor, Log1pExtractor)
        if not self.log1p and type(policy.features_extractor).__name__ != "FlattenExtractor":
            raise ValueError(f"unsupported features extractor {type(policy.features_extractor).__name__}")
        self.layers: list[tuple[np.ndarray, np.ndarray, str]] = []
        for module in list(policy.mlp_extractor.policy_net) + [policy.action_net]:
            if isinstance(module, torch.nn.Linear):
                self.layers.append((module.weight.detach().numpy().T.astype(np.float64),
                                    module.bias.detach().numpy().astype(np.float64), "linear"))
            elif isinstance(module, torch.nn.Tanh):
                self.layers.append((np.empty(0), np.empty(0), "tanh"))
            elif isinstance(module, torch.nn.ReLU):
                self.layers.append((np.empty(0), np.empty(0), "relu"))
            else:
                raise ValueError(f"unsupported layer {module}")
        self.model = model

    def logits(self, obs: np.ndarray) -> np.ndarray:
        x = np.log1p(np.maximum(obs.astype(np.float64), 0.0)) if self.log1p else obs.astype(np.float64)
        for w, b, kind in self.layers:
            x = x @ w + b if kind == "linear" else np.tanh(x) if kind == "tanh" else np.maximum(x, 0.0)
        return x

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> int:
        return int(np.argmax(np.where(mask, self.logits(obs), -np.inf)))

    def check(self, observations: np.ndarray, masks: np.ndarray) -> float:
        """Fraction of the given states where this and ``model.predict(..., deterministic=True)`` agree."""
        ours = np.array([self(o, m) for o, m in zip(observations, masks)])
        theirs = np.array([int(self.model.predict(o, action_masks=m, deterministic=True)[0])
                           for o, m in zip(observations, masks)])
        return float(np.mean(ours == theirs))


def sample_states(config: dict[str, Any], actor: GreedyActor, count: int) -> tuple[np.ndarray, np.ndarray]:
    """States visited by the greedy policy (for ``GreedyActor.check``)."""
    from msjgym.envs import MSJEnv
    ev = config["env"]
    env = MSJEnv(config["scenario"]["name"], mode=ev.get("mode", "start"), window=int(ev.get("window", 8)),
                 horizon_jobs=None, horizon_time=None, jobs=count, warmup=0, batches=1, **scenario_params(config))
    obs, _ = env.reset(seed=12345)
    observations, masks = [], []
    while len(observations) < count:
        mask = env.action_masks()
        observations.append(obs)
        masks.append(mask)
        obs, _, _, truncated, _ = env.step(actor(obs, mask))
        if truncated:
            obs, _ = env.reset()
    return np.array(observations), np.array(masks)


def evaluate_all(config: dict[str, Any], model_path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    import msjgym
    from sb3_contrib import MaskablePPO

    from msjgym.envs.agent_runner import evaluate_agent

    ev, env = config["evaluate"], config["env"]
    scenario = msjgym.load_scenario(config["scenario"]["name"], scenario_params(config))
    reps, jobs, seed = int(ev.get("reps", 10)), int(ev.get("jobs", 100_000)), int(ev.get("seed", 1))
    warmup = int(ev.get("warmup", jobs // 10))
    rows = []
    model = MaskablePPO.load(str(model_path), device="cpu")
    actor = GreedyActor(model)
    observations, masks = sample_states(config, actor, int(ev.get("check_states", 2000)))
    agreement = actor.check(observations, masks)
    print(f"numpy greedy actor agrees with model.predict(deterministic=True) on {agreement:.2%} of "
          f"{len(observations)} visited states", flush=True)
    start = time.perf_counter()
    learned = evaluate_agent(scenario, "maskable-ppo (learned)", actor, mode=env.get("mode", "start"),
                             window=int(env.get("window", 8)), reps=reps, jobs=jobs, warmup=warmup, seed=seed)
    print(f"evaluated the learned policy in {time.perf_counter() - start:.0f} s", flush=True)
    rows.append(_row("maskable-ppo (learned)", "no", learned))
    for policy in ev.get("policies", ["fcfs", "first-fit", "msf-nonpreemptive", "server-filling"]):
        result = msjgym.evaluate(scenario, policy, reps=reps, jobs=jobs, warmup=warmup, seed=seed, references=False)
        preemptive = "yes" if msjgym.policies.get_policy(policy).preemptive else "no"
        rows.append(_row(policy, preemptive, result))
    meta = {"scenario": scenario.name, "params": {k: v for k, v in scenario.params.items()},
            "load": scenario.model.load, "reps": reps, "jobs": jobs, "warmup": warmup, "seed": seed,
            "actor_agreement": agreement, "actor_checked_states": len(observations)}
    return rows, meta


def _row(name: str, preemptive: str, result: Any) -> dict[str, Any]:
    rt = result.metrics.get("response_time")
    return {"policy": name, "preemptive": preemptive, "stable": result.stable,
            "response_time": None if rt is None else rt.mean, "ci95": None if rt is None else rt.ci95,
            "number_in_system": None if not result.stable else result.metrics["number_in_system"].mean,
            "growth_rate": None if result.growth_rate is None else result.growth_rate.mean}


def format_table(rows: list[dict[str, Any]]) -> str:
    sf = next((r for r in rows if r["policy"] == "server-filling" and r["stable"]), None)
    fcfs = next((r for r in rows if r["policy"] == "fcfs"), None)
    lines = ["| policy | preemptive | stable | mean response time ± 95 % CI | × ServerFilling |",
             "|---|---|---|---|---|"]
    for r in rows:
        if r["stable"]:
            cell = f"{r['response_time']:.3f} ± {r['ci95']:.3f}"
            ratio = f"{r['response_time'] / sf['response_time']:.3f}" if sf else "n/a"
        else:
            cell = f"unstable (N grows at {r['growth_rate']:.3g} jobs per unit time)"
            ratio = "—"
        lines.append(f"| {r['policy']} | {r['preemptive']} | {'yes' if r['stable'] else 'no'} | {cell} | {ratio} |")
    learned = rows[0]
    verdict = []
    if fcfs is not None and learned["stable"]:
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
        verdict.append(f"Learned vs ServerFilling (preemptive): {learned['response_time'] / sf['response_time']:.3f}× "
                       f"its mean response time ({learned['response_time'] - sf['response_time']:+.3f}).")
    return "\n".join(lines) + "\n\n" + " ".join(verdict)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--skip-train", action="store_true", help="evaluate the saved model only")
    args = parser.parse_args(argv)
    config = load_config(args.config)
    name = config.get("name", args.config.stem)
    training = None
    if not args.skip_train:
        training = train(config, args.out, name)
    rows, meta = evaluate_all(config, args.out / f"{name}.zip")
    table = format_table(rows)
    print("\n" + table)
    write_report(args, config, name, training, rows, meta, table)
    return 0


def write_report(args: argparse.Namespace, config: dict[str, Any], name: str, training: dict[str, Any] | None,
                 rows: list[dict[str, Any]], meta: dict[str, Any], table: str) -> None:
    import stable_baselines3
    import sb3_contrib
    import torch

    path = args.out / f"{name}.md"
    if training is None and path.exists():  # keep the recorded training time
        previous = path.read_text()
        marker = "training:"
        kept = next((line for line in previous.splitlines() if line.startswith(f"- {marker}")), None)
    else:
        kept = None
    params = ", ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}" for k, v in meta["params"].items())
    train_line = kept or (f"- training: {training['timesteps']:,} environment steps in {training['seconds']:.0f} s "
                          f"wall time ({platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, "
                          f"torch threads {config['train'].get('torch_threads', 1)})" if training else "- training: n/a")
    text = f"""# {name}: MaskablePPO on {meta['scenario']}

Made by `python baselines/train.py {args.config.relative_to(HERE.parent) if args.config.is_absolute() and HERE.parent in args.config.parents else args.config}`
(config: `{args.config.name}`).

- scenario: {meta['scenario']} ({params}; load ρ = {meta['load']:.4f})
{train_line}
- model: `{name}.zip` (sb3-contrib {sb3_contrib.__version__}, stable-baselines3 {stable_baselines3.__version__}, torch {torch.__version__})
- evaluation: {meta['reps']} independent replications × {meta['jobs']:,} measured jobs (warm-up {meta['warmup']:,}),
  seed {meta['seed']}, the same replications and statistics for every policy (`msjgym.evaluate`;
  the learned policy through `msjgym.envs.agent_runner.evaluate_agent`, acting greedily: its most likely allowed
  action; the numpy copy of the network agreed with `model.predict(deterministic=True)` on
  {meta['actor_agreement']:.2%} of {meta['actor_checked_states']:,} visited states)

{table}

Python {sys.version.split()[0]}.
"""
    path.write_text(text)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    sys.exit(main())
