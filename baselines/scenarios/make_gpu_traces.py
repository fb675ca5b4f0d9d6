"""Write the synthetic multi-resource traces of ``baselines/multi_resource_pick.toml`` (CSV, a column per resource).

A GPU cluster pooled as one machine of 128 cores, 16 GPUs and 1,024 GB; jobs of three kinds (CPU-only, GPU, memory-
heavy), each job's demand vector drawn from its kind's menu, log-normal run times (seconds), requested times =
run time × a factor from {1, 1.5, 2, 4} rounded up to the next 5 minutes (users' estimates overshoot and round:
Tsafrir, Etsion & Feitelson, JSSPP 2005, §4), Poisson arrivals at a rate that puts the bottleneck resource's offered
load at ``load``. Deterministic given the seed:

    python baselines/scenarios/make_gpu_traces.py      # writes gpu_train.csv (seed 1) and gpu_heldout.csv (seed 2)
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

CAPACITY = {"cores": 128, "gpus": 16, "memory": 1024}
KINDS = (  # (probability, cores menu, gpus menu, GB per core menu, log-normal median run time (s), sigma)
    (0.6, (1, 2, 4, 8, 16, 32), (0,), (2, 4), 600.0, 1.2),
    (0.25, (4, 8, 16), (1, 2, 4, 8), (4, 8), 1800.0, 1.0),
    (0.15, (2, 4, 8), (0,), (16, 32), 1200.0, 1.0),
)
FACTORS = (1.0, 1.5, 2.0, 4.0)


def draw(jobs: int, seed: int, load: float) -> np.ndarray:
    """(jobs, 6): submit, runtime, requested_time, cores, gpus, memory."""
    g = np.random.default_rng(seed)
    kind = g.choice(len(KINDS), size=jobs, p=[k[0] for k in KINDS])
    out = np.zeros((jobs, 6))
    for i, k in enumerate(kind):
        _, cores, gpus, per_core, median, sigma = KINDS[k]
        c = int(g.choice(cores))
        out[i, 3:] = (c, int(g.choice(gpus)), c * int(g.choice(per_core)))
        out[i, 1] = max(1.0, round(float(g.lognormal(np.log(median), sigma))))
        out[i, 2] = np.ceil(out[i, 1] * g.choice(FACTORS) / 300.0) * 300.0
    work = (out[:, 1:2] * out[:, 3:]).sum(axis=0) / np.array(list(CAPACITY.values()))
    rate = load * jobs / work.max()  # the bottleneck's offered load: rate × E[d_r S] / C_r
    out[:, 0] = np.round(np.cumsum(g.exponential(1.0 / rate, size=jobs)) - 0.0, 1)
    out[0, 0] = 0.0
    return out


def write(path: Path, rows: np.ndarray) -> None:
    lines = ["submit,runtime,requested_time,cores,gpus,memory"]
    lines += [f"{r[0]:.1f},{r[1]:.0f},{r[2]:.0f},{r[3]:.0f},{r[4]:.0f},{r[5]:.0f}" for r in rows]
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    write(here / "gpu_train.csv", draw(4000, 1, 0.9))
    write(here / "gpu_heldout.csv", draw(4000, 2, 0.9))
