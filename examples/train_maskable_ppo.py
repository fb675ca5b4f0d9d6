"""Train a scheduler with sb3-contrib's MaskablePPO on msjgym/MSJ-v0, then evaluate it beside FCFS and first-fit.

    python examples/train_maskable_ppo.py                  # ~4 min of training + ~45 s of evaluation on one core
    python examples/train_maskable_ppo.py --steps 5000000  # the baselines/ recipe's budget (~10 min of training)

Times in CPU-seconds of one core, measured on a shared 2-core machine: 8,700 training steps per CPU-second (200,000
steps: 23 CPU-s), the learned policy's evaluation (5 x 50,000 jobs, deciding in Python) 44 CPU-s, imports 6 CPU-s;
at a load average of 8-10 the same run took 4-7 times as long in wall-clock time. It prints a line every tenth of
the training, and a progress bar while the learned policy is evaluated.

Needs the ``rl`` extra (pip install torch==2.13.0, then pip install "msjgym[rl]"). The full recipe, with the
recorded result table, is ``baselines/train.py``; this is the shortest path from environment to comparison.
"""
import argparse
import time

import msjgym
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecNormalize
from msjgym.envs import MSJVectorEnv, to_sb3
from msjgym.envs.sb3 import AverageCostReward, Log1pExtractor, greedy_actor

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--steps", type=int, default=2_000_000, help="environment steps to train for")
parser.add_argument("--jobs", type=int, default=50_000, help="measured jobs per evaluation replication")
args = parser.parse_args()



class Progress(BaseCallback):
    """One line every tenth of the training (steps done, steps per second): a run is never silent for minutes."""

    def __init__(self, total: int) -> None:
        super().__init__()
        self.total, self.every, self.next, self.start = total, max(total // 10, 1), max(total // 10, 1), 0.0

    def _on_training_start(self) -> None:
        self.start = time.perf_counter()
        print(f"training {self.total:,} steps ...", flush=True)

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next:
            seconds = time.perf_counter() - self.start
            print(f"  {self.num_timesteps:,} steps in {seconds:.0f} s ({self.num_timesteps / seconds:,.0f} steps/s)",
                  flush=True)
            self.next += self.every
        return True


torch.set_num_threads(1)         # a small network: one thread is faster than several, and leaves the other core free
params = {"arrival_rate": 2.7}   # "1 and n" with 10 servers: FCFS is stable only below 2.913 (msjgym theory one-and-n)
env = to_sb3(MSJVectorEnv(64, scenario="one-and-n", window=2, horizon_jobs=2000, **params))
env = VecNormalize(AverageCostReward(env), norm_obs=False, gamma=0.995)   # reward −∫(N − ρ)dt, scaled: see the
                                                                          # AverageCostReward docstring for why
model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=2048, n_epochs=5, gamma=0.995, seed=1, device="cpu",
                    policy_kwargs={"net_arch": [64, 64], "features_extractor_class": Log1pExtractor})
model.learn(args.steps, progress_bar=False, callback=Progress(args.steps))
model.save("maskable_ppo_one_and_n.zip")   # then: msjgym evaluate one-and-n --param arrival_rate=2.7 --window 2
                                           #   --policy sb3:maskable_ppo_one_and_n.zip

print("evaluating the learned policy, FCFS and first-fit (5 replications each) ...", flush=True)
scenario = msjgym.load_scenario("one-and-n", params)
learned = msjgym.evaluate(scenario, greedy_actor(model), window=2, reps=5, jobs=args.jobs, seed=7,
                          progress=True)  # a progress bar: the learned policy decides in Python
for name, result in [("maskable-ppo", learned)] + [
        (p, msjgym.evaluate(scenario, p, reps=5, jobs=args.jobs, seed=7)) for p in ("fcfs", "first-fit")]:
    if result.stable:
        t = result.metrics["response_time"]
        print(f"{name:14s} mean response time {t.mean:.3f} ± {t.ci95:.3f}")
    else:
        print(f"{name:14s} unstable (number in system grows at {result.growth_rate.mean:.3g} per unit time)")
