"""Times that are equal in a trace are equal in its replay: a job that starts on arrival waits exactly 0 (replay clock
rounding). The wait is accumulated from differences of event times by the event loop, never computed as
completion − arrival − duration (a difference of clock sums, off by ±1e-13)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from msjgym.api import load_scenario
from msjgym.evaluate.evaluator import evaluate

TIMES = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)
DURATIONS = st.floats(min_value=1e-3, max_value=1e4, allow_nan=False, allow_infinity=False)


def _trace(folder: Path, gaps: list[float], durations: list[float], needs: list[int], servers: int) -> Path:
    arrival = np.cumsum(gaps)
    rows = ["arrival_time,need,duration"] + [f"{float(a)!r},{m},{float(d)!r}" for a, m, d in zip(arrival, needs, durations)]
    (folder / "t.csv").write_text("\n".join(rows) + "\n")
    (folder / "t.toml").write_text(f'servers = {servers}\narrivals = {{ trace = "t.csv" }}\n')
    return folder / "t.toml"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_jobs_that_never_wait_wait_exactly_zero(tmp_path, data):
    """A machine with room for every job at once: no job waits, so every wait, the queueing probability and the
    number in queue are exactly 0 and every response time is exactly the job's duration, whatever the float times."""
    n = data.draw(st.integers(1, 12))
    gaps = data.draw(st.lists(TIMES, min_size=n, max_size=n))
    durations = data.draw(st.lists(DURATIONS, min_size=n, max_size=n))
    needs = data.draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    result = evaluate(load_scenario(str(_trace(tmp_path, gaps, durations, needs, 3 * n))), "fcfs", seed=1)
    assert np.all(result.per_job["waiting_time"] == 0.0)
    assert np.array_equal(result.per_job["response_time"], np.asarray(durations))
    for name in ("waiting_time", "queueing_probability", "number_in_queue", "waiting_time_p99"):
        assert result.metrics[name].mean == 0.0, name


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_waits_are_never_negative_and_zero_for_a_job_started_on_arrival(tmp_path, data):
    """A crowded machine under FCFS and a backfilling policy: every wait is >= 0, and a job whose start (completion
    − duration, up to rounding) equals its arrival waited exactly 0 (not ±1e-13)."""
    n = data.draw(st.integers(2, 15))
    gaps = data.draw(st.lists(TIMES, min_size=n, max_size=n))
    durations = data.draw(st.lists(DURATIONS, min_size=n, max_size=n))
    needs = data.draw(st.lists(st.sampled_from([1, 2, 4]), min_size=n, max_size=n))
    policy = data.draw(st.sampled_from(["fcfs", "easy-backfilling", "server-filling"]))
    result = evaluate(load_scenario(str(_trace(tmp_path, gaps, durations, needs, 4))), policy, seed=1)
    job = result.per_job
    assert np.all(job["waiting_time"] >= 0.0)
    assert result.metrics["number_in_queue"].mean >= 0.0
    late = job["completion_time"] - job["duration"] - job["arrival_time"]
    tiny = np.abs(late) <= 1e-9 * np.maximum(job["completion_time"], 1.0)
    assert np.all(job["waiting_time"][tiny] == 0.0)
    assert result.metrics["queueing_probability"].mean == np.mean(job["waiting_time"] > 0)


def test_a_stochastic_run_with_room_for_every_job_has_no_wait(tmp_path):
    """The stochastic path too: a machine that never fills (M/M/∞-like) reports a wait of exactly 0 and a response
    time equal to the mean duration measured (Σ response − Σ wait = Σ duration, with Σ wait = 0 exactly)."""
    (tmp_path / "s.toml").write_text(
        'servers = 200\narrival_rate = 1.0\n[[classes]]\nname = "a"\nneed = 1\nprobability = 1.0\n'
        'service = { dist = "exp", rate = 0.7 }\n')
    result = evaluate(load_scenario(str(tmp_path / "s.toml")), "fcfs", reps=2, jobs=2000, seed=3)
    assert result.metrics["waiting_time"].mean == 0.0
    assert result.metrics["queueing_probability"].mean == 0.0
