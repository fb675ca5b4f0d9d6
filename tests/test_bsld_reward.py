"""``msjgym/MSJ-v0(reward="bounded-slowdown")``: each job's bounded slowdown is credited, negated, at its completion,
so an episode's return is −Σ bounded slowdowns of the schedule; ``trace_windows=True`` makes a trace's episodes
windows of consecutive jobs from random starts, each run until its jobs completed. The default reward is unchanged
(−∫ jobs dt: the golden and twin tests)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from msjgym.api import load_scenario
from msjgym.envs import MSJEnv, MSJVectorEnv
from msjgym.errors import MsjgymError
from msjgym.evaluate.evaluator import evaluate
from msjgym.systems.msj import state as ms

# (SWF job number, submit time, processors, run time) on 4 processors: the schedule of tests/test_replay.py.
JOBS = [(101, 0, 3, 10), (102, 1, 2, 10), (103, 2, 2, 10), (104, 3, 1, 20), (105, 4, 1, 2)]
ROOT = Path(__file__).resolve().parents[1]


def _trace(tmp_path: Path) -> str:
    lines = ["; MaxProcs: 4"] + [f"{j} {t} -1 {r} {p} -1 -1 {p} {r} -1 1 -1 -1 -1 1 -1 -1 -1" for j, t, p, r in JOBS]
    (tmp_path / "hand.swf").write_text("\n".join(lines) + "\n")
    (tmp_path / "hand.toml").write_text('arrivals = { trace = "hand.swf" }\n')
    return str(tmp_path / "hand.toml")


class OldestFirst:
    """Start the oldest waiting job if it fits, else wait: strict FCFS through the environment's window."""

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        return 0 if mask[0] else int(mask.size - 1)


class AnyFits:
    """Start the oldest waiting job that fits (greedy first fit), else wait."""

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        return int(np.flatnonzero(mask)[0])


def _episode(env: MSJEnv, policy, seed: int = 0) -> tuple[float, list[float]]:
    obs, _ = env.reset(seed=seed)
    total, rewards = 0.0, []
    while True:
        obs, reward, terminated, truncated, _ = env.step(policy.act(obs, env.action_masks()))
        total += reward
        rewards.append(reward)
        if terminated or truncated:
            return total, rewards


@pytest.mark.parametrize("tau", [10.0, 1.0])
def test_the_return_is_minus_the_sum_of_the_bounded_slowdowns(tmp_path, tau):
    """FCFS through the environment on the five jobs of ``tests/test_replay.py`` (4 processors): J1 (0, 3, 10) runs
    [0, 10); J2 (1, 2, 10) waits for it, then J2 and J3 (2, 2, 10) run [10, 20); J4 (3, 1, 20) and J5 (4, 1, 2) start
    at 20. Responses 10, 19, 18, 37, 18; bounded slowdowns max(1, T / max(S, τ)):

    * τ = 10: 1, 1.9, 1.8, 1.85, 1.8, sum 8.35;
    * τ = 1: 1, 1.9, 1.8, 1.85, 9, sum 15.55 (J5 runs 2 s: 18 / 2).

    The return equals −(that sum), which equals −Σ of the per-job ``bounded_slowdown`` of ``msjgym evaluate
    --policy fcfs --bsld-threshold τ`` (the same schedule), and rewards come only at completions."""
    scenario = _trace(tmp_path)
    env = MSJEnv(scenario, window=4, horizon_jobs=None, reward="bounded-slowdown", bsld_threshold=tau)
    total, rewards = _episode(env, OldestFirst())
    hand = 8.35 if tau == 10.0 else 15.55
    assert total == pytest.approx(-hand, rel=1e-12)
    per_job = evaluate(load_scenario(scenario), "fcfs", bsld_threshold=tau).per_job
    np.testing.assert_allclose(per_job["completion_time"], [10, 20, 20, 40, 22])
    assert total == pytest.approx(-per_job["bounded_slowdown"].sum(), rel=1e-12)
    credited = [r for r in rewards if r != 0]  # J1 at 10; J2 and J3 at 20; J5 at 22 and J4 at 40 (one last step)
    expected = [-1.0, -3.7, -3.65] if tau == 10.0 else [-1.0, -3.7, -10.85]
    assert credited == pytest.approx(expected, rel=1e-12)


def test_the_default_reward_is_the_holding_cost(tmp_path):
    """Default ``reward="holding"``: −∫ jobs in system dt = −Σ responses = −(10 + 19 + 18 + 37 + 18) = −102."""
    env = MSJEnv(_trace(tmp_path), window=4, horizon_jobs=None)
    total, _ = _episode(env, OldestFirst())
    assert total == pytest.approx(-102.0, rel=1e-12)


def test_trace_windows_run_random_windows_to_completion():
    """Episodes of 50 consecutive jobs of the shipped Lublin trace, from random starts: every episode's return is
    −Σ bounded slowdowns of 50 jobs (each ≥ 1, and the episode ends once all 50 completed), and the starts differ."""
    venv = MSJVectorEnv(3, scenario=str(ROOT / "examples" / "lublin_256.toml"), window=4, horizon_jobs=50,
                        estimates=True, reward="bounded-slowdown", trace_windows=True)
    venv.reset(seed=4)
    starts, returns, totals = set(), [], np.zeros(3)
    policy = AnyFits()
    for _ in range(5000):
        masks = venv.action_masks()
        actions = np.array([policy.act(None, m) for m in masks])
        starts.update(int(s) for s in venv._batch.sim.state.sys_i[:, ms.S_TRACE0])
        sys_i = venv._batch.sim.state.sys_i.copy()
        _, rewards, terminated, truncated, _ = venv.step(actions)
        totals += rewards
        for i in np.flatnonzero(terminated | truncated):
            assert sys_i[i, ms.S_NARR] == 50 and venv._batch.sim.state.sys_i[i, ms.S_NJOBS] == 0
            returns.append(totals[i])
            totals[i] = 0.0
        if len(returns) >= 6:
            break
    assert len(returns) >= 6 and all(r <= -50.0 for r in returns)
    assert len(starts) >= 4


def test_bad_arguments_are_one_line_errors(tmp_path):
    with pytest.raises(MsjgymError, match="reward = 'slowdown'"):
        MSJEnv(_trace(tmp_path), reward="slowdown")
    with pytest.raises(MsjgymError, match="bsld_threshold"):
        MSJEnv(_trace(tmp_path), reward="bounded-slowdown", bsld_threshold=-1.0)
    with pytest.raises(MsjgymError, match="trace_windows = True"):
        MSJEnv("one-and-n", trace_windows=True)
    with pytest.raises(MsjgymError, match="horizon_jobs in \\[1, 5\\]"):
        MSJEnv(_trace(tmp_path), horizon_jobs=6, trace_windows=True)


def test_waiting_is_masked_once_the_trace_has_ended_and_nothing_runs(tmp_path):
    """A policy that always waits when allowed: on a replayed trace, once no arrival is left and nothing runs,
    waiting would strand the waiting jobs (and end the episode with them uncompleted, earning no penalty): the mask
    forbids it, so every job completes and the return counts all five (each bounded slowdown is >= 1)."""
    env = MSJEnv(_trace(tmp_path), window=4, horizon_jobs=None, reward="bounded-slowdown")

    class WaitIfAllowed:
        def act(self, obs, mask):
            return int(np.flatnonzero(mask)[-1])

    total, _ = _episode(env, WaitIfAllowed())
    assert env.unwrapped._venv._batch.sim.state.sys_i[0, ms.S_NCOMP] == 5
    assert total <= -5.0
