"""The environments' trajectories for fixed seeds and actions are the ones recorded before the environments were
rebuilt on one batched base (``tests/golden/env_trajectories.npz``): observations, rewards, dt, ends, masks and
``info`` of the single, vector and SB3 forms of every registered environment: the same shape, and the same numbers
to the golden tolerance (``tests/golden/record.py``: the recording is from another CPU, whose floats may differ in
their last bits; counts, masks and actions are integers in these arrays and stay exact at that tolerance).

Re-record (only for a deliberate change, said in the commit): ``python tests/test_env_trajectories.py --record``.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import gymnasium as gym

import msjgym  # noqa: E402,F401  registers the environments

GOLDEN = Path(__file__).resolve().parent / "golden" / "env_trajectories.npz"
sys.path.insert(0, str(GOLDEN.parent))
import record  # noqa: E402

SINGLE = {  # name -> (env id, keywords)
    "msj-start": ("msjgym/MSJ-v0", {"scenario": "one-and-n", "horizon_jobs": 40}),
    "msj-preemptive": ("msjgym/MSJ-v0", {"scenario": "finite-skip-fig6", "mode": "preemptive", "window": 4,
                                         "horizon_jobs": 40}),
    "msj-measured": ("msjgym/MSJ-v0", {"scenario": "one-and-n", "horizon_jobs": None, "jobs": 60, "warmup": 5,
                                       "batches": 2}),
    "loss-full": ("msjgym/AdaptiveLoss-v0", {"servers": 20, "d": 2, "lam": 0.9, "horizon_jobs": 50}),
    "loss-sampled": ("msjgym/AdaptiveLoss-v0", {"scenario": "loss-sampled", "servers": 30, "d": 3, "k": 5,
                                                "horizon_jobs": 50, "blocking_penalty": 2.0}),
    "dispatch-sampled": ("msjgym/Dispatch-v0", {"servers": 10, "observation": "sampled", "d": 3, "horizon": 50}),
    "dispatch-histogram": ("msjgym/Dispatch-v0", {"servers": 10, "observation": "histogram", "levels": 4,
                                                  "horizon": 50}),
    "dispatch-pull": ("msjgym/Dispatch-v0", {"servers": 10, "observation": "estimates", "information": "pull",
                                             "delta1": 0.2, "horizon": 50, "reward": "response"}),
}
VECTOR = {  # name -> (env id, keywords), 3 copies, crossing autoresets
    "msj": ("msjgym/MSJ-v0", {"horizon_jobs": 12}),
    "loss": ("msjgym/AdaptiveLoss-v0", {"servers": 10, "d": 2, "lam": 0.9, "horizon_jobs": 15}),
    "dispatch": ("msjgym/Dispatch-v0", {"servers": 10, "observation": "histogram", "levels": 4, "horizon": 15}),
}
INFO_KEYS = ("dt", "time", "events", "messages")


def _choose(rng: np.random.Generator, mask: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def _single(env_id: str, kwargs: dict) -> np.ndarray:
    """Two seeded episodes then one that continues the streams (reset() without a seed), as rows of numbers."""
    env = gym.make(env_id, **kwargs).unwrapped
    rng = np.random.default_rng(0)
    rows = []
    for seed in (5, 6, None):
        obs, info = env.reset(seed=seed) if seed is not None else env.reset()
        rows.append(np.concatenate([obs, env.action_masks(), [0.0, 0.0], [info.get(k, -1) for k in INFO_KEYS]]))
        for _ in range(400):
            obs, reward, terminated, truncated, info = env.step(_choose(rng, env.action_masks()))
            rows.append(np.concatenate([obs, env.action_masks(), [reward, terminated + 2 * truncated],
                                        [info.get(k, -1) for k in INFO_KEYS]]))
            if terminated or truncated:
                break
    return np.array(rows, dtype=np.float64)


def _vector(env_id: str, kwargs: dict, steps: int = 60) -> np.ndarray:
    venv = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", **kwargs)
    rng = np.random.default_rng(1)
    obs, info = venv.reset(seed=9)
    rows = [np.concatenate([obs.ravel(), venv.action_masks().ravel(), info["dt"]])]
    for _ in range(steps):
        actions = np.array([_choose(rng, m) for m in venv.action_masks()])
        obs, rewards, terminated, truncated, info = venv.step(actions)
        rows.append(np.concatenate([obs.ravel(), venv.action_masks().ravel(), rewards, terminated, truncated,
                                    info["dt"]]))
    return np.concatenate(rows)


def _sb3(env_id: str, kwargs: dict, steps: int = 60) -> np.ndarray:
    from msjgym.envs import to_sb3

    venv = to_sb3(gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", **kwargs))
    rng = np.random.default_rng(2)
    venv.seed(4)
    obs = venv.reset()
    rows = [obs.ravel()]
    for _ in range(steps):
        actions = np.array([_choose(rng, m) for m in venv.action_masks()])
        venv.step_async(actions)
        obs, rewards, dones, infos = venv.step_wait()
        terminal = [infos[i].get("terminal_observation", np.full(obs.shape[1], -1.0)) for i in range(3)]
        rows.append(np.concatenate([obs.ravel(), rewards, dones, [i["dt"] for i in infos], np.ravel(terminal),
                                    venv.action_masks().ravel()]))
    return np.concatenate(rows)


def trajectories() -> dict[str, np.ndarray]:
    out = {f"single/{name}": _single(*spec) for name, spec in SINGLE.items()}
    out.update({f"vector/{name}": _vector(*spec) for name, spec in VECTOR.items()})
    if _has_sb3():
        out.update({f"sb3/{name}": _sb3(*spec) for name, spec in VECTOR.items()})
    return out


def _has_sb3() -> bool:
    try:
        import stable_baselines3  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def golden() -> dict[str, np.ndarray]:
    with np.load(GOLDEN) as data:
        return dict(data)


@pytest.mark.parametrize("name", [f"single/{n}" for n in SINGLE] + [f"vector/{n}" for n in VECTOR]
                         + [f"sb3/{n}" for n in VECTOR])
def test_trajectory_is_unchanged(golden, name):
    kind, key = name.split("/")
    if kind == "sb3" and not _has_sb3():
        pytest.skip("needs stable-baselines3")
    spec = {"single": SINGLE, "vector": VECTOR, "sb3": VECTOR}[kind][key]
    got = {"single": _single, "vector": _vector, "sb3": _sb3}[kind](*spec)
    want = golden[name]
    assert got.shape == want.shape and record.arrays_match(got, want), name


if __name__ == "__main__" and "--record" in sys.argv:
    np.savez_compressed(GOLDEN, **trajectories())
    print(f"recorded {GOLDEN}")
