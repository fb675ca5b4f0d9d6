"""``msjgym/MSJ-v0`` with ``estimates=True``: the observation ends with the requested run time of each window
(sequence) slot's job. Off by default: the observation keeps its size, so the recorded MaskablePPO baseline still
fits. Checked along seeded random trajectories on a trace with requested times (SWF field 9, most above the run
time): each entry is the trace's requested time of the job the slot shows, empty slots 0, and the rest of the
observation is the observation without estimates, entry for entry (the same actions, the same seed)."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

import gymnasium as gym

import msjgym  # noqa: F401  registers the environments
from msjgym.errors import MsjgymError
from msjgym.systems.msj import state as ms
from msjgym.systems.msj.control import X_INITIAL

ROOT = Path(__file__).resolve().parents[1]
TRACE = str(ROOT / "examples" / "traces" / "sample_trace.toml")


def _pair(mode: str, window: int):
    kwargs = dict(scenario=TRACE, mode=mode, window=window, horizon_jobs=300)
    return (gym.make("msjgym/MSJ-v0", estimates=True, **kwargs).unwrapped,
            gym.make("msjgym/MSJ-v0", **kwargs).unwrapped)


def _walk_both(env, plain, seed: int, steps: int = 400):
    """Yield (observation with estimates, observation without, view) along one random trajectory of allowed actions
    applied to both environments."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    base, _ = plain.reset(seed=seed)
    for _ in range(steps):
        yield obs, base, env.view(obs)
        mask = env.action_masks()
        assert np.array_equal(mask, plain.action_masks())
        action = int(rng.choice(np.flatnonzero(mask)))
        obs, _, _, truncated, _ = env.step(action)
        base, _, _, truncated_too, _ = plain.step(action)
        assert truncated == truncated_too
        if truncated:
            obs, _ = env.reset()
            base, _ = plain.reset()


def test_start_mode_shows_the_window_jobs_requested_times() -> None:
    W = 4
    env, plain = _pair("start", W)
    assert env.observation_space.shape == (plain.observation_space.shape[0] + W,)
    trace = env.model.trace
    requested = trace.estimate
    assert np.mean(requested > trace.duration) > 0.5  # the entries are not the durations
    shown = 0
    for obs, base, view in _walk_both(env, plain, seed=5):
        assert np.array_equal(obs[:base.size], base)
        st, ctl = env._venv._batch.sim.state, env._venv._batch.ctl
        if ctl.ints[0, X_INITIAL]:
            continue
        slots = ctl.slots[0]
        expected = [np.float32(requested[st.job_i[0, j, ms.J_ID]]) if j >= 0 else 0.0 for j in slots]
        assert view.window_estimates.tolist() == expected
        shown += sum(j >= 0 for j in slots)
    assert shown > 200


def test_preemptive_mode_shows_the_sequence_jobs_requested_times() -> None:
    L = 3
    env, plain = _pair("preemptive", L)
    assert env.observation_space.shape == (plain.observation_space.shape[0] + L,)
    requested = env.model.trace.estimate
    shown = 0
    for obs, base, view in _walk_both(env, plain, seed=6):
        assert np.array_equal(obs[:base.size], base)
        st = env._venv._batch.sim.state
        present = sorted((st.job_i[0, j, ms.J_SEQ], j) for j in range(st.job_i.shape[1])
                         if st.job_i[0, j, ms.J_SEQ] >= 0 and st.job_i[0, j, ms.J_CLS] >= 0
                         and _present(st, j))
        jobs = [j for _, j in present[:L]] + [-1] * (L - min(L, len(present)))
        expected = [np.float32(requested[st.job_i[0, j, ms.J_ID]]) if j >= 0 else 0.0 for j in jobs]
        assert view.sequence_estimates.tolist() == expected
        shown += sum(j >= 0 for j in jobs)
    assert shown > 200


def _present(st, j: int) -> bool:
    """Whether job slot j holds a job in the system (it is in its class's list)."""
    c = st.job_i[0, j, ms.J_CLS]
    k = st.cls_i[0, c, ms.C_HEAD]
    while k >= 0:
        if k == j:
            return True
        k = st.job_i[0, k, ms.J_NEXT]
    return False


def test_off_by_default_and_the_recorded_baseline_keeps_its_observation_shape() -> None:
    """The recorded MaskablePPO model (``baselines/results/maskable_ppo_one_and_n.zip``, window 2) was trained on
    observations without estimates: the default environment still has its observation size."""
    with zipfile.ZipFile(ROOT / "baselines" / "results" / "maskable_ppo_one_and_n.zip") as archive:
        data = json.loads(archive.read("data"))
    shape = tuple(data["observation_space"]["_shape"])
    env = gym.make("msjgym/MSJ-v0", scenario="one-and-n", window=2)
    assert env.observation_space.shape == shape
    assert gym.make("msjgym/MSJ-v0", scenario="one-and-n", window=2, estimates=False).observation_space.shape == shape
    view = env.unwrapped.view(env.reset(seed=0)[0])
    with pytest.raises(MsjgymError, match="estimates=True"):
        view.window_estimates


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_a_bad_switch_is_a_one_line_error(value) -> None:
    with pytest.raises(MsjgymError, match=rf"estimates = {value!r}: must be True or False"):
        gym.make("msjgym/MSJ-v0", scenario="one-and-n", estimates=value)
