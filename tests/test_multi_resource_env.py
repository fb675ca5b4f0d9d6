"""msjgym/MultiResourceJobs-v0 (the job-feature view of a multi-resource machine) and trace scenarios of the
multi-resource family: check_env, the features against the state, the same model on another machine size, a pick
policy twin of the built-in first-fit on one class, a replayed trace evaluated with built-in and agent policies."""
from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import msjgym
from msjgym.errors import MsjgymError, ScenarioError
from msjgym.systems.multi_resource import job_observation as jo

CSV = ("submit,runtime,requested_time,cores,gpus,memory\n"
       "0,100,200,8,4,64\n5,50,60,16,0,128\n6,30,30,64,8,512\n7,20,40,8,4,64\n9,10,10,4,0,16\n"
       "12,70,80,32,0,64\n13,15,30,2,2,8\n15,5,5,1,0,1\n")


def _scenario(tmp_path: Path, resources: str = "{ cores = 64, gpus = 8, memory = 512 }", extra: str = "") -> Path:
    (tmp_path / "t.csv").write_text(CSV)
    path = tmp_path / "t.toml"
    path.write_text(f'system = "multi-resource"\nresources = {resources}\narrivals = {{ trace = "t.csv" }}\n{extra}')
    return path


def test_check_env_and_the_documented_shapes():
    from gymnasium.utils.env_checker import check_env

    env = gym.make("msjgym/MultiResourceJobs-v0", window=8, time_scale=1.0, horizon_jobs=50).unwrapped
    check_env(env, skip_render_check=True)
    assert env.observation_space.shape == (8, jo.features(3)) == (8, 20)
    assert env.action_space.n == 8


def test_features_are_the_state_in_fractions(tmp_path):
    env = gym.make("msjgym/MultiResourceJobs-v0", scenario=str(_scenario(tmp_path)), window=4, horizon_jobs=8,
                   trace_windows=False).unwrapped
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(0)  # the clock starts: job 1 arrives at 0 and is the only one
    view = env.view(obs)
    assert view.shown == 1 and view.demands[0].tolist() == [8, 4, 64] and view.fits[0]
    assert view.free.tolist() == [64, 8, 512]
    assert obs[0, jo.DOMINANT] == pytest.approx(0.5) and obs[0, jo.ALIGNMENT] == pytest.approx(0.125 + 0.5 + 0.125)
    obs, *_ = env.step(0)  # start it; the next decision is at the next arrival (t = 5)
    view = env.view(obs)
    assert view.free.tolist() == [56, 4, 448] and view.demands[0].tolist() == [16, 0, 128]
    assert np.allclose(obs[:, view.col("free[gpus]")], 0.5)  # the machine's columns in every row
    assert obs[1:, jo.PRESENT].sum() == 0 and view.requested[0] == pytest.approx(60, rel=1e-6)


def test_one_model_runs_on_any_machine_size(tmp_path):
    """The observation's shape depends on K and the resources only: a machine twice as large gives the same shape
    and the same features for the same jobs, halved where they are fractions of the capacity."""
    small = gym.make("msjgym/MultiResourceJobs-v0", scenario=str(_scenario(tmp_path)), window=4, horizon_jobs=8,
                     trace_windows=False).unwrapped
    big_path = tmp_path / "big"
    big_path.mkdir()
    big = gym.make("msjgym/MultiResourceJobs-v0", window=4, horizon_jobs=8, trace_windows=False,
                   scenario=str(_scenario(big_path, "{ cores = 128, gpus = 16, memory = 1024 }"))).unwrapped
    a, _ = small.reset(seed=0)
    b, _ = big.reset(seed=0)
    a, *_ = small.step(0)
    b, *_ = big.step(0)
    assert a.shape == b.shape
    assert b[0, jo.FIXED] == pytest.approx(a[0, jo.FIXED] / 2) and b[0, jo.REQUESTED] == a[0, jo.REQUESTED]


def test_trace_scenario_replays_every_job_with_built_in_policies(tmp_path):
    path = _scenario(tmp_path)
    result = msjgym.evaluate(str(path), "first-fit", references=False)
    assert result.metrics["throughput"].mean > 0 and len(result.replications) == 1
    checks = {c.name: c.verdict for c in result.checks}
    assert checks and all(v == "consistent" for v in checks.values()), checks
    util = result.metrics["utilization_gpus"].mean
    work = (4 * 100 + 8 * 30 + 4 * 20 + 2 * 15) / 8  # Σ gpus × runtime / capacity
    assert util == pytest.approx(work / result.metrics["makespan"].mean, rel=1e-12)


def test_trace_scenario_errors_name_the_key(tmp_path):
    with pytest.raises(ScenarioError, match=r"load: not allowed with arrivals = \{trace = \.\.\.\}"):
        msjgym.load_scenario(str(_scenario(tmp_path, extra="load = 0.5\n")))
    with pytest.raises(ScenarioError, match=r"nodes: not allowed .* pooled"):
        msjgym.load_scenario(str(_scenario(tmp_path, extra="nodes = 2\n")))
    with pytest.raises(MsjgymError, match=r"a CSV trace does not say the machine's capacity"):
        (tmp_path / "u.toml").write_text('system = "multi-resource"\narrivals = { trace = "t.csv" }\n')
        msjgym.load_scenario(str(tmp_path / "u.toml"))


class FirstFits:
    """Pick the first shown job that fits (FCFS order), else row 0: on one class of jobs, first-fit's schedule."""

    env_settings = {"id": "msjgym/MultiResourceJobs-v0", "window": 64, "base_order": "fcfs"}

    def act(self, observation, action_mask) -> int:
        fits = np.flatnonzero((observation[:, jo.FITS] > 0.5) & action_mask)
        return int(fits[0]) if fits.size else 0


def test_an_agent_of_first_fits_matches_first_fit_on_a_single_class(tmp_path):
    (tmp_path / "one.csv").write_text("submit,runtime,cores\n" + "".join(
        f"{t},{d},4\n" for t, d in zip(range(0, 60, 2), (7, 3, 11, 5, 2, 13, 1, 8) * 4)))
    path = tmp_path / "one.toml"
    path.write_text('system = "multi-resource"\nresources = { cores = 8, memory = 4 }\n'
                    'arrivals = { trace = "one.csv" }\n')
    agent = msjgym.evaluate(str(path), FirstFits(), references=False)
    builtin = msjgym.evaluate(str(path), "first-fit", references=False)
    for key in ("response_time", "waiting_time", "makespan", "bounded_slowdown"):
        assert agent.metrics[key].mean == builtin.metrics[key].mean, key


def test_per_job_rows_show_every_resource_of_each_jobs_demand(tmp_path):
    """--per-job: one column per resource (``demand_NAME``), each job's whole demand vector; the SWF form puts the
    first resource in fields 5 and 8 and says so."""
    from msjgym.core.schedule import write_schedule

    result = msjgym.evaluate(str(_scenario(tmp_path)), "first-fit", references=False)
    rows = result.per_job
    assert "need" not in rows
    names = [k for k in rows if k.startswith("demand_")]
    assert names == ["demand_cores", "demand_gpus", "demand_memory"]
    lines = [[int(x) for x in line.split(",")] for line in CSV.splitlines()[1:]]
    order = np.argsort(rows["job"])
    assert np.stack([rows[n][order] for n in names], axis=1).tolist() == [line[3:] for line in lines]
    write_schedule(rows, tmp_path / "s.swf", "swf", result.per_job_header)
    text = (tmp_path / "s.swf").read_text()
    assert "; MaxProcs: 64\n" in text and "fields 5 and 8 are each job's cores" in text
    jobs = [line.split() for line in text.splitlines() if not line.startswith(";")]
    assert sorted(int(f[4]) for f in jobs) == sorted(line[3] for line in lines)
