"""``msjgym/JobScheduling-v0(estimate_accuracy=True)``: three more columns built from the jobs completed so far (the
mean of min(1, run / requested), each job's run time predicted from it); off by default, the observation of the
recorded models unchanged."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import msjgym
from msjgym.api import load_scenario
from msjgym.evaluate.evaluator import evaluate
from msjgym.systems.msj import job_observation as jo
from msjgym.systems.msj import state as ms
from msjgym.systems.msj.env import JobSchedulingEnv

ROOT = Path(__file__).resolve().parents[1]
T = jo.DEFAULT_TIME_SCALE

# (SWF job number, submit time, processors, run time, requested time) on 4 processors: each job holds the machine.
JOBS = [(1, 0, 4, 100, 400), (2, 1, 4, 50, 100), (3, 2, 4, 10, 3600), (4, 3, 4, 300, 380)]


def _hand_trace(tmp_path: Path) -> str:
    lines = ["; MaxProcs: 4"] + [f"{j} {t} -1 {r} {p} -1 -1 {p} {q} -1 1 -1 -1 -1 1 -1 -1 -1"
                                 for j, t, p, r, q in JOBS]
    (tmp_path / "hand.swf").write_text("\n".join(lines) + "\n")
    (tmp_path / "hand.toml").write_text('arrivals = { trace = "hand.swf" }\n')
    return str(tmp_path / "hand.toml")


def _decisions(env: JobSchedulingEnv, seed: int = 0):
    """(time, observation, trace index of each shown row) at every decision, taking row 0 (the base order's pick)."""
    obs, _ = env.reset(seed=seed)
    obs, *_ = env.step(0)
    batch = env.unwrapped._venv._batch
    seen, done = [], False
    while not done:
        st = batch.sim.state
        shown = env.unwrapped.view(obs).shown
        ids = [int(st.job_i[0, batch.jc.slots[0, i], ms.J_ID]) for i in range(shown)]
        seen.append((float(st.sys_f[0, ms.T_NOW]), obs.copy(), ids))
        obs, _, _, done, _ = env.step(0)
    return seen


def test_the_columns_on_a_hand_made_trace(tmp_path):
    """Four jobs that each hold the machine, FCFS: J1 runs [0, 100), J2 [100, 150), J3 [150, 160), J4 from 160.
    Accuracies min(1, run / requested): J1 0.25, J2 0.5, J3 10/3600. Buckets floor(2 log2(r / T)) + 20: J1 (400 s)
    and J4 (380 s) 13, J2 (100 s) 9, J3 (3600 s) 20."""
    env = JobSchedulingEnv(_hand_trace(tmp_path), horizon_jobs=None, trace_windows=False, backfill="none",
                           base_order="fcfs", window=8, estimate_accuracy=True)
    assert env.observation_space.shape == (8, jo.FEATURES_ACCURACY)
    assert [jo.accuracy_bucket(r, T) for *_, r in JOBS] == [13, 9, 20, 13]
    seen = _decisions(env)
    assert [(t, ids) for t, _, ids in seen] == [(0.0, [0]), (100.0, [1, 2, 3]), (150.0, [2, 3]), (160.0, [3])]
    a = [1.0, (1 + 0.25) / 2, (1 + 0.25 + 0.5) / 3, (1 + 0.25 + 0.5 + 10 / 3600) / 4]
    # a_r = (a + Σ accuracies of the completed jobs in r's bucket) / (1 + their number)
    a_r = [[1.0], [a[1], a[1], (a[1] + 0.25) / 2], [a[2], (a[2] + 0.25) / 2], [(a[3] + 0.25) / 2]]
    for (t, obs, ids), acc, rates in zip(seen, a, a_r):
        rows = len(ids)
        np.testing.assert_allclose(obs[:, jo.ACCURACY], acc, rtol=1e-6)  # every row, empty ones too
        requested = np.array([JOBS[i][4] for i in ids], float)
        waits = np.array([t - JOBS[i][1] for i in ids], float)
        predicted = requested * np.array(rates)
        np.testing.assert_allclose(obs[:rows, jo.PREDICTED], np.log1p(predicted / T), rtol=1e-6)
        np.testing.assert_allclose(obs[:rows, jo.PREDICTED_WAIT_RATIO], waits / (waits + predicted), rtol=1e-6)
        assert not obs[rows:, jo.PREDICTED].any() and not obs[rows:, jo.PREDICTED_WAIT_RATIO].any()


@pytest.fixture(scope="module")
def trace_window():
    """The first 400 jobs of the example Lublin trace (256 processors), requested times exact (the file's are users'
    estimates)."""
    sc = load_scenario(str(ROOT / "examples" / "lublin_256.toml"), {"estimate": "exact"})
    return dataclasses.replace(sc, model=dataclasses.replace(sc.model, trace=sc.model.trace.window(0, 400)))


@pytest.mark.parametrize("rule", ["none", "easy"])
def test_off_by_default_and_a_repeat_of_the_time_columns_with_exact_times(trace_window, rule):
    """Off (the default): F = 14, the recorded models' observation. On, with exact requested times: the same 14
    columns and schedule, accuracy 1, predicted = requested, predicted_wait_ratio = wait_ratio."""
    off = JobSchedulingEnv(trace_window, horizon_jobs=None, trace_windows=False, backfill=rule, base_order="f1",
                           window=32)
    on = JobSchedulingEnv(trace_window, horizon_jobs=None, trace_windows=False, backfill=rule, base_order="f1",
                          window=32, estimate_accuracy=True)
    assert off.observation_space.shape == (32, jo.FEATURES) == (32, 14)
    assert "estimate_accuracy" not in off.unwrapped.spec_.settings()
    assert on.unwrapped.spec_.settings()["estimate_accuracy"] is True
    a, b = _decisions(off), _decisions(on)
    assert len(a) == len(b) > 300
    for (ta, oa, ia), (tb, ob, ib) in zip(a, b):
        assert (ta, ia) == (tb, ib)
        np.testing.assert_array_equal(ob[:, :jo.FEATURES], oa)
        present = ob[:, jo.PRESENT] > 0.5
        assert (ob[:, jo.ACCURACY] == 1.0).all()
        np.testing.assert_array_equal(ob[present, jo.PREDICTED], ob[present, jo.REQUESTED])
        np.testing.assert_array_equal(ob[present, jo.PREDICTED_WAIT_RATIO], ob[present, jo.WAIT_RATIO])
    np.testing.assert_array_equal(off.unwrapped._venv._batch.sim.completion_times(0),
                                  on.unwrapped._venv._batch.sim.completion_times(0))


def test_the_columns_follow_the_completed_jobs_of_a_trace_with_requested_times():
    """The shipped SWF sample (requested times above the run times): at every decision of an EASY schedule, the
    accuracy column and each row's prediction equal those computed from the jobs completed before that instant
    (recomputed here from the trace and the schedule's completion times; a job completing at the decision's instant
    may or may not have been processed yet, so both sets are tried)."""
    scenario = load_scenario(str(ROOT / "examples" / "traces" / "sample_trace.toml"))
    trace = scenario.model.trace
    part = dataclasses.replace(scenario, model=dataclasses.replace(scenario.model, trace=trace.window(0, 400)))
    env = JobSchedulingEnv(part, horizon_jobs=None, trace_windows=False, backfill="easy", base_order="sjf",
                           window=64, estimate_accuracy=True)
    seen = _decisions(env)
    done = env.unwrapped._venv._batch.sim.completion_times(0)
    run, req = trace.duration[:400], trace.estimate[:400]
    accuracy = np.minimum(1.0, run / req)
    bucket = np.array([jo.accuracy_bucket(r, T) for r in req])
    matched = informative = 0
    for t, obs, ids in seen:
        options = []
        for completed in (done < t, done <= t):
            a = (1 + accuracy[completed].sum()) / (1 + completed.sum())
            rates = [(a + accuracy[completed & (bucket == bucket[i])].sum())
                     / (1 + (completed & (bucket == bucket[i])).sum()) for i in ids]
            options.append((a, np.log1p(req[ids] * np.array(rates) / T)))
        ok = [np.isclose(obs[0, jo.ACCURACY], a, rtol=1e-6) and np.allclose(obs[:len(ids), jo.PREDICTED], p,
                                                                             rtol=1e-5, atol=1e-7)
              for a, p in options]
        assert any(ok), (t, obs[0, jo.ACCURACY], [a for a, _ in options])
        matched += 1
        informative += obs[0, jo.ACCURACY] < 0.9
    assert matched == len(seen) > 200 and informative > 0.8 * matched  # estimates far above the run times


@pytest.mark.parametrize("action", ["pick", "backfill"])
def test_environment_checkers(action):
    from gymnasium.utils.env_checker import check_env

    env = JobSchedulingEnv(action=action, jobs=3000, window=16, estimate_accuracy=True)
    check_env(env, skip_render_check=True)
    sb3 = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3.check_env(JobSchedulingEnv(action=action, window=16, processors=64, jobs=2000, estimate_accuracy=True),
                  warn=False)


def test_bad_argument_names_the_parameter():
    with pytest.raises(msjgym.MsjgymError, match="estimate_accuracy = 'yes': must be true or false"):
        JobSchedulingEnv(estimate_accuracy="yes")


POLICY = '''
import numpy as np

class PredictedFirst:
    """Shortest predicted run time first, through the estimate-accuracy columns."""
    env_settings = {"id": "msjgym/JobScheduling-v0", "window": 32, "backfill": "easy", "base_order": "sjf",
                    "estimate_accuracy": True}

    def act(self, observation, action_mask):
        assert observation.shape == (32, 17)
        return int(np.argmax(np.where(action_mask, -observation[:, 15], -np.inf)))
'''


def test_evaluate_carries_the_setting(tmp_path, trace_window):
    """A policy whose settings turn the columns on is evaluated through them; with exact requested times the
    prediction is the requested time, so its schedule is SJF + EASY's."""
    path = tmp_path / "predicted.py"
    path.write_text(POLICY)
    mine = evaluate(trace_window, f"{path}:PredictedFirst", references=False, windows=2, window_jobs=100, seed=3)
    want = evaluate(trace_window, msjgym.policies.msj.POLICIES["priority"].bind(order="sjf", backfill="easy"),
                    references=False, windows=2, window_jobs=100, seed=3)
    assert mine.replications == want.replications
